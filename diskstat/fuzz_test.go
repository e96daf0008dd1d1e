package diskstat

import (
	"strings"
	"testing"
)

func FuzzParseDiskstats(f *testing.F) {
	f.Add(diskstatsFixture)
	f.Add("8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseDiskstats(strings.NewReader(s))
		if err == nil {
			for _, x := range st {
				Compute(x, x, 1)
			}
		}
	})
}

func FuzzParseTaskIO(f *testing.F) {
	f.Add("rchar: 1\nread_bytes: 4096\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseTaskIO(strings.NewReader(s))
		_, _ = ParseVMStat(strings.NewReader(s))
	})
}
