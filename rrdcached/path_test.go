package rrdcached_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/rrdcached"
)

// hostileDir is an RRD directory with symlinks inside and out of it, and a
// secret file beside it.
func hostileDir(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "rrd"), filepath.Join(base, "outside")
	for _, d := range []string{dir + "/sub", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{dir + "/a.rrd", dir + "/sub/b.rrd", outside + "/secret.rrd"} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"in.rrd":          "a.rrd",
		"subin":           "sub",
		"up.rrd":          "../outside/secret.rrd",
		"abs.rrd":         outside + "/secret.rrd",
		"dangling.rrd":    "../outside/new.rrd",
		"absdangling.rrd": "/nonexistent/new.rrd",
		"outdir":          "../outside",
		"sub/back.rrd":    "../a.rrd",
		"sub/escape.rrd":  "../../outside/secret.rrd",
		"loop.rrd":        "loop.rrd",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, outside
}

func TestResolve(t *testing.T) {
	dir, _ := hostileDir(t)
	r, err := rrdcached.NewPathResolver(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	real := r.Dir()
	for _, tc := range []struct {
		name, want string // want "" means refused
	}{
		{"a.rrd", "a.rrd"},
		{"sub/b.rrd", "sub/b.rrd"},
		{"sub//./b.rrd", "sub/b.rrd"},
		{"new.rrd", "new.rrd"}, // CREATE makes it
		{"nodir/new.rrd", "nodir/new.rrd"},
		{"no-suffix", "no-suffix"}, // rrdcached requires no .rrd
		{real + "/a.rrd", "a.rrd"},
		{real + "/sub/b.rrd", "sub/b.rrd"},
		{"in.rrd", "in.rrd"},
		{"subin/b.rrd", "subin/b.rrd"},
		{"sub/back.rrd", "sub/back.rrd"},
		{"", ""},
		{".", ""},
		{"sub/..", ""},
		{"../outside/secret.rrd", ""},
		{"sub/../a.rrd", ""},
		{"..", ""},
		{"a.rrd\x00.txt", ""},
		{"/etc/passwd", ""},
		{real, ""},
		{real + "/", ""},
		{real + "x/a.rrd", ""},
		{real + "/../outside/secret.rrd", ""},
		{"up.rrd", ""},
		{"abs.rrd", ""},
		{"dangling.rrd", ""},
		{"absdangling.rrd", ""},
		{"outdir/secret.rrd", ""},
		{"outdir/new.rrd", ""},
		{"sub/escape.rrd", ""},
		{"loop.rrd", ""},
	} {
		t.Run(strings.ReplaceAll(tc.name, "/", "|"), func(t *testing.T) {
			got, err := r.Resolve(tc.name)
			if tc.want == "" {
				var pe *rrdcached.PathError
				if !errors.As(err, &pe) {
					t.Fatalf("Resolve(%q) = %q, %v; want a *PathError", tc.name, got, err)
				}
				if wantAbs := r.Abs(tc.name); pe.Abs != wantAbs || !strings.Contains(err.Error(), "refuse file name") {
					t.Errorf("error %v, Abs %q; want Abs %q", err, pe.Abs, wantAbs)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
			}
		})
	}
}

// TestResolveDir: LIST may name the directory itself.
func TestResolveDir(t *testing.T) {
	dir, _ := hostileDir(t)
	r, err := rrdcached.NewPathResolver(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, want := range map[string]string{"": "", ".": "", "sub": "sub", "sub/": "sub"} {
		if got, err := r.ResolveDir(name); err != nil || got != want {
			t.Errorf("ResolveDir(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"outdir", "..", "subin/../.."} {
		if got, err := r.ResolveDir(name); err == nil {
			t.Errorf("ResolveDir(%q) = %q; want refused", name, got)
		}
	}
}

// TestOpenBeneathRace swaps a directory of the RRD directory for a symlink
// out of it, over and over, while names under it are resolved and opened:
// no open may reach the file outside.
func TestOpenBeneathRace(t *testing.T) {
	dir, outside := hostileDir(t)
	if err := os.WriteFile(filepath.Join(dir, "sub", "secret.rrd"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.rrd"), []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := rrdcached.NewPathResolver(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sub, swap, link := filepath.Join(dir, "sub"), filepath.Join(dir, "sub.real"), filepath.Join(dir, "sub.link")
		os.Symlink("../outside", link)
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Rename(sub, swap) // sub is gone
			os.Rename(link, sub) // sub leads out
			os.Rename(sub, link) // and back
			os.Rename(swap, sub)
		}
	}()
	opened, refused := 0, 0
	for i := 0; i < 20000; i++ {
		rel, err := r.Resolve("sub/secret.rrd")
		if err != nil {
			refused++
			continue
		}
		f, err := r.OpenBeneath(rel, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		b := make([]byte, 16)
		n, _ := f.Read(b)
		f.Close()
		if string(b[:n]) != "inside" {
			close(stop)
			<-done
			t.Fatalf("open %d reached %q outside the RRD directory", i, b[:n])
		}
		opened++
	}
	close(stop)
	<-done
	if opened == 0 || refused == 0 {
		t.Errorf("the race did not happen both ways: %d opened inside, %d refused", opened, refused)
	}
}
