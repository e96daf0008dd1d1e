//go:build cgo

package rrdwriter

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
)

// TestInfoFallsBackToLibRRD: what the Go reader does not recognize goes to
// rrd_info_r, which gives librrd's verdict.
func TestInfoFallsBackToLibRRD(t *testing.T) {
	testenv.NeedRRDTool(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.rrd")
	root := testRoot(t, dir)
	if err := LibRRD(root).Create(good, testLayout(), t0); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"garbage", []byte("this is not an RRD file at all, just some text that is long enough\n")},
		{"truncated header", b[:300]},
		{"other architecture", append(append(append([]byte(nil), b[:16]...), 0, 0, 0, 0, 0, 0, 0, 0), b[24:]...)},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".rrd")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := root.ReadHeader(path); !errors.Is(err, rrd.ErrHeaderUnknown) {
				t.Fatalf("Go reader: %v, want rrd.ErrHeaderUnknown", err)
			}
			_, err := LibRRD(root).Info(path)
			// ensureFile maps a failed header read to KindCorrupt with orCorrupt.
			if err == nil || orCorrupt(classify(err)) != KindCorrupt || !strings.Contains(err.Error(), path) {
				t.Fatalf("Info: %v (kind %s), want librrd's corrupt-file error", err, classify(err))
			}
		})
	}
	if _, err := LibRRD(root).Info(filepath.Join(dir, "missing.rrd")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
