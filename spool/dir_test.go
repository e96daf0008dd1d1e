package spool

import (
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// TestDirReadRemove reads and removes entries through the level directory
// as the writer does, with the same results as through the spool.
func TestDirReadRemove(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e1, e2 := sampleEntry(), sampleEntry()
	e2.Time++
	r1, err := s.Write(&e1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := s.Write(&e2)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.OpenDir(r1.Hash)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		r Ref
		e Entry
	}{{r1, e1}, {r2, e2}} {
		got, err := d.Read(c.r)
		if err != nil || !reflect.DeepEqual(got, c.e) {
			t.Fatalf("Dir.Read(%s) = %+v, %v; want %+v", c.r, got, err, c.e)
		}
	}
	if err := d.Remove(r1); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(r1); err != nil {
		t.Fatalf("second Remove of a gone entry: %v, want nil", err)
	}
	if _, err := s.Read(r1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read after Dir.Remove: %v, want ErrNotExist", err)
	}
	if _, err := d.Read(r1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Dir.Read after Dir.Remove: %v, want ErrNotExist", err)
	}
	other := Ref{Hash: r1.Hash + 1, Time: r1.Time}
	if _, err := d.Read(other); err == nil || !strings.Contains(err.Error(), "another directory") {
		t.Fatalf("Dir.Read of another hash: %v", err)
	}
	if err := d.Remove(other); err == nil {
		t.Fatal("Dir.Remove of another hash succeeded")
	}
	if st := s.Stats(); st.Removed != 2 || st.Read != 2 {
		t.Fatalf("stats %+v, want 2 read (through Dir) and 2 removed", st)
	}
}

// TestReadRefusesWhatIsNotAFile puts a symbolic link (to a valid entry), a
// FIFO and a directory where entries should be: each read is a
// *CorruptionError naming the path (so the caller quarantines it), the
// link is never followed and the FIFO never blocks the reader.
func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	good := sampleEntry()
	ref, err := s.Write(&good)
	if err != nil {
		t.Fatal(err)
	}
	target := s.EntryPath(ref)
	kinds := map[string]func(path string) error{
		"symlink":   func(p string) error { return os.Symlink(target, p) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o640) },
		"directory": func(p string) error { return os.Mkdir(p, 0o750) },
	}
	i := int64(0)
	for name, mk := range kinds {
		i++
		r := Ref{Hash: ref.Hash, Time: ref.Time + i}
		path := s.EntryPath(r)
		if err := mk(path); err != nil {
			t.Fatal(err)
		}
		d, err := s.OpenDir(r.Hash)
		if err != nil {
			t.Fatal(err)
		}
		for via, read := range map[string]func(Ref) (Entry, error){"Spool": s.Read, "Dir": d.Read} {
			_, err := read(r)
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Path != path {
				t.Errorf("%s.Read of a %s: %v, want a CorruptionError naming %s", via, name, err, path)
			}
		}
		d.Close()
	}
	if got, err := s.Read(ref); err != nil || !reflect.DeepEqual(got, good) {
		t.Fatalf("the valid entry next to them: %v", err)
	}
}
