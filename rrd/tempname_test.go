package rrd

import (
	"strings"
	"testing"
)

// TestTempNameFitsNameMax: for the RRD file of every target name length,
// the temp name plus librrd's "XXXXXX" fits NAME_MAX, is hidden, ends in
// ".tmp", and is new each time.
func TestTempNameFitsNameMax(t *testing.T) {
	seen := map[string]bool{}
	for n := 1; n <= 255; n++ {
		base := RRDPath(strings.Repeat("b", n))
		for range 2 {
			tmp := TempName(base)
			if len(tmp)+librrdTempSuffix > nameMax || tmp[0] != '.' || !strings.HasSuffix(tmp, ".tmp") || seen[tmp] {
				t.Fatalf("name of %d characters: temp name %q (%d bytes, seen %v)", n, tmp, len(tmp), seen[tmp])
			}
			seen[tmp] = true
		}
	}
	if got := TempName("x.rrd"); !strings.HasPrefix(got, ".x.rrd.") {
		t.Fatalf("short names are kept whole: %q", got)
	}
}
