package spoolgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/spool"
)

// OpenTest opens (and locks) a spool in dir with default options for a test
// and closes it when the test ends.
func OpenTest(tb testing.TB, dir string) *spool.Spool {
	tb.Helper()
	so := spool.DefaultOptions()
	so.Dir = dir
	sp, err := spool.Open(so)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sp.Close() })
	return sp
}

// QuarantineReasons maps each file in the quarantine of the spool in dir to
// its reason, by the path it was moved from, as its .reason note says.
func QuarantineReasons(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	notes, err := filepath.Glob(filepath.Join(dir, spool.QuarantineDir, "*.reason"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range notes {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		from, reason := "", ""
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "from: "); ok {
				from = v
			} else if v, ok := strings.CutPrefix(line, "reason: "); ok {
				reason = v
			}
		}
		out[from] = reason
	}
	return out
}

// Snapshot maps every path under dir to its content (regular files), link
// target (symlinks) or mode (the rest), to check that nothing changed.
func Snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		switch {
		case err != nil:
			return err
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			out[path] = "-> " + target
			return err
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(path)
			out[path] = string(b)
			return err
		}
		out[path] = fi.Mode().String()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
