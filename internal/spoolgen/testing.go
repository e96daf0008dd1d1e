package spoolgen

import (
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
