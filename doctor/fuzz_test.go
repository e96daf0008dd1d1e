package doctor

import (
	"strings"
	"testing"
)

func FuzzParseMountinfo(f *testing.F) {
	f.Add("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,commit=120\n")
	f.Add(`36 35 98:0 /a /b\040c rw master:1 - xfs /dev/sdb1 rw` + "\n")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMountinfo(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, m := range ms {
			m.Option("commit")
			mountOf(ms, m.MountPoint, m.Major, m.Minor)
		}
	})
}
