package spool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

type recorder struct {
	leaves  []int
	entries []string
}

func (r *recorder) Enter(int, string) error { return nil }
func (r *recorder) Entry(depth int, name string, _ uint8) error {
	r.entries = append(r.entries, filepath.Join(string(rune('0'+depth)), name))
	return nil
}
func (r *recorder) Leaf(_ int, _ string, idx int) error { r.leaves = append(r.leaves, idx); return nil }
func (r *recorder) Problem(string, int, error)          {}

// TestWalkVisitsLeavesInOrder: leaves come in the sorted order of their
// indexes (Levels.LeafIndex of the hashes that live there), and every other
// entry of the root and the first level is handed to Entry.
func TestWalkVisitsLeavesInOrder(t *testing.T) {
	l := MustParseLevels("1:2")
	dir := t.TempDir()
	hashes := []uint64{0xfff, 0x123, 0xabc, 0x001, 0x7e5}
	var want []int
	for _, h := range hashes {
		os.MkdirAll(filepath.Join(dir, l.Dir(h)), 0o750)
		want = append(want, l.LeafIndex(h))
	}
	slices.Sort(want)
	os.WriteFile(filepath.Join(dir, "stray"), nil, 0o640)
	os.Mkdir(filepath.Join(dir, "tmp"), 0o750)
	os.WriteFile(filepath.Join(dir, "3", "misplaced"), nil, 0o640)
	os.Mkdir(filepath.Join(dir, "g"), 0o750) // not a hex level name
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	var r recorder
	w := &TreeWalker{Levels: l, Dirs: NewDirReader(), OpenDir: func(fd int, name string) (int, error) {
		return unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	}}
	if err := w.Walk(root, &r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.leaves, want) {
		t.Errorf("leaves %v, want %v", r.leaves, want)
	}
	slices.Sort(r.entries)
	if w := []string{"0/g", "0/stray", "0/tmp", "1/misplaced"}; !slices.Equal(r.entries, w) {
		t.Errorf("entries %v, want %v", r.entries, w)
	}
}
