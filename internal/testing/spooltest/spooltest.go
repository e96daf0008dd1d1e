// Package spooltest opens the spools of spoold's tests.
package spooltest

import (
	"testing"

	"github.com/spoold/spoold/spool"
)

// Open opens a spool with o, in a new temporary directory when o.Dir is
// empty, and closes it when the test ends; it fails the test if the spool
// does not open.
func Open(t testing.TB, o spool.Options) *spool.Spool {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	sp, err := spool.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp
}
