package spool

import (
	"fmt"
	"testing"
)

func TestParseLevels(t *testing.T) {
	accepted := map[string][]int{
		"1": {1}, "2": {2}, "1:2": {1, 2}, "2:2": {2, 2}, "1:1:2": {1, 1, 2}, "2:2:2": {2, 2, 2}, "2:1": {2, 1},
	}
	for spec, want := range accepted {
		t.Run("accept/"+spec, func(t *testing.T) {
			l, err := ParseLevels(spec)
			if err != nil {
				t.Fatalf("ParseLevels(%q): %v", spec, err)
			}
			if l.Depth() != len(want) {
				t.Fatalf("levels = %d, want %d", l.Depth(), len(want))
			}
			for i, w := range want {
				if l.Width(i) != w {
					t.Errorf("width(%d) = %d, want %d", i, l.Width(i), w)
				}
			}
			if l.String() != spec {
				t.Errorf("String() = %q, want %q", l.String(), spec)
			}
		})
	}
	// nginx rejects all of these ("invalid levels"), except "" which nginx
	// takes as a flat cache and spoold refuses on purpose.
	for _, spec := range []string{"", "0", "3", "12", "1:", ":1", "1::2", "1:2:1:1", "1:2:", "a", "1;2", " 1", "1:3", "-1"} {
		t.Run(fmt.Sprintf("reject/%q", spec), func(t *testing.T) {
			if l, err := ParseLevels(spec); err == nil {
				t.Fatalf("ParseLevels(%q) = %v, want error", spec, l)
			}
		})
	}
}

func TestLevelsDirTakesTheEndOfTheHash(t *testing.T) {
	const hash = 0xb7f54b2df7773722 // hex ends in ...3722
	for _, tc := range []struct{ levels, dir string }{
		{"1", "2"}, {"2", "22"}, {"1:2", "2/72"}, {"1:1:2", "2/2/37"}, {"2:2:2", "22/37/77"},
	} {
		t.Run(tc.levels, func(t *testing.T) {
			l := MustParseLevels(tc.levels)
			if got := l.Dir(hash); got != tc.dir {
				t.Fatalf("Dir = %q, want %q", got, tc.dir)
			}
			parts := splitSlash(tc.dir)
			for i, p := range parts {
				if !l.LevelMatches(i, p, hash) {
					t.Errorf("LevelMatches(%d, %q) = false", i, p)
				}
				if !l.LevelDirName(i, p) {
					t.Errorf("LevelDirName(%d, %q) = false", i, p)
				}
				if l.LevelMatches(i, "f"+p[1:], hash) == (p[0] != 'f') {
					t.Errorf("LevelMatches(%d) accepted the wrong directory", i)
				}
			}
		})
	}
}

func TestLeafDirs(t *testing.T) {
	for spec, want := range map[string]int{"1": 16, "2": 256, "1:2": 4096, "1:1:2": 65536} {
		if got := MustParseLevels(spec).LeafDirs(); got != want {
			t.Errorf("LeafDirs(%s) = %d, want %d", spec, got, want)
		}
	}
}

func splitSlash(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '/' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// TestLeafIndexOrdersLeavesAsTheWalkDoes: LeafIndex numbers leaf
// directories in the loader's sorted walk order, and LeafDir inverts it.
func TestLeafIndexOrdersLeavesAsTheWalkDoes(t *testing.T) {
	for _, levels := range []string{"1", "2", "1:2", "2:1", "1:1:2", "2:2:2"} {
		t.Run(levels, func(t *testing.T) {
			l := MustParseLevels(levels)
			for _, h := range []uint64{0, 1, 0xf0, 0x123456789abcdef0, 0xfedcba9876543210, ^uint64(0)} {
				i, dir := l.LeafIndex(h), l.Dir(h)
				if i < 0 || i >= l.LeafDirs() || l.LeafDir(i) != dir {
					t.Fatalf("hash %x: index %d, LeafDir %q, Dir %q", h, i, l.LeafDir(i), dir)
				}
			}
			for i := 1; i < l.LeafDirs() && i < 70000; i += 97 {
				if a, b := l.LeafDir(i-1), l.LeafDir(i); a >= b {
					t.Fatalf("LeafDir(%d) = %q not before LeafDir(%d) = %q: not the sorted order", i-1, a, i, b)
				}
			}
		})
	}
}
