package spool

import (
	"strings"
	"testing"
)

// FuzzParseLevels: whatever --levels accepts is canonical (formats back to
// itself), has 1 to MaxLevels levels of width 1 or 2, and places every hash
// in a directory whose parts the layout recognises as its own.
func FuzzParseLevels(f *testing.F) {
	for _, s := range []string{"1:2", "1", "2", "1:1:2", "2:2:2", "2:1", "", "1::2", "3", "1:2:1:1"} {
		f.Add(s, uint64(0xb7f54b2df7773722))
	}
	f.Fuzz(func(t *testing.T, spec string, hash uint64) {
		l, err := ParseLevels(spec)
		if err != nil {
			if !strings.Contains(err.Error(), "levels") {
				t.Fatalf("error %q does not say what it parsed", err)
			}
			return
		}
		if l.String() != spec || l.Depth() < 1 || l.Depth() > MaxLevels {
			t.Fatalf("ParseLevels(%q) = %q with %d levels", spec, l.String(), l.Depth())
		}
		parts := strings.Split(l.Dir(hash), "/")
		if len(parts) != l.Depth() {
			t.Fatalf("Dir(%x) = %q: %d parts for %d levels", hash, l.Dir(hash), len(parts), l.Depth())
		}
		for i, p := range parts {
			if w := l.Width(i); w < 1 || w > 2 || len(p) != w || !l.LevelDirName(i, p) || !l.LevelMatches(i, p, hash) {
				t.Fatalf("level %d of Dir(%x) = %q (width %d) not recognised", i, hash, p, w)
			}
		}
	})
}

// FuzzParseFsyncPolicy: --fsync accepts exactly the three names.
func FuzzParseFsyncPolicy(f *testing.F) {
	for _, s := range []string{"none", "batch", "always", "ALWAYS", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseFsyncPolicy(s)
		if (err == nil) != (s == "none" || s == "batch" || s == "always") || err == nil && p.String() != s {
			t.Fatalf("ParseFsyncPolicy(%q) = %v, %v", s, p, err)
		}
	})
}
