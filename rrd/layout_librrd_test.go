//go:build cgo

package rrd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestLayoutFileSize checks the size estimate against the file librrd
// makes for the layout: exact for the files the Go reader knows.
func TestLayoutFileSize(t *testing.T) {
	testenv.NeedRRDTool(t)
	path := filepath.Join(t.TempDir(), "f.rrd")
	p := testLayout()
	if err := pathCreate(path, p, t0); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.FileSize(); got != fi.Size() {
		t.Fatalf("fileSize %d, librrd made %d bytes", got, fi.Size())
	}
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
}
