//go:build cgo

package spoolbackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/rrdwriter"
)

// TestProtocolUpdatesStayInsideRRDDir: a client CREATEs and UPDATEs
// a/x.rrd over the protocol (acknowledged); someone who can write in the
// RRD directory then replaces the directory a with a symlink to a
// directory outside it. The writer's own pass opens the file beneath the
// RRD directory and is refused: the outside file keeps its bytes and its
// last update, the acknowledged updates stay spooled, the refusal is
// counted (kind "path") and named in the writer's target errors, and the
// backend's own FETCH and INFO of the file are refused too.
func TestProtocolUpdatesStayInsideRRDDir(t *testing.T) {
	e, b := newProtoEnv(t)
	sock, _ := serveProto(t, e, b, rrdcached.DefaultOptions())
	send := func(line string) string {
		t.Helper()
		got := fetchOnce(sock, line)
		t.Logf("%s -> %s", line, got)
		return got
	}
	if got := send(fmt.Sprintf("CREATE a/x.rrd -s 300 -b %d DS:g:GAUGE:600:U:U RRA:AVERAGE:0.5:1:100", t0)); !strings.HasPrefix(got, "0 ") {
		t.Fatalf("CREATE: %q", got)
	}
	if got := send(fmt.Sprintf("UPDATE a/x.rrd %d:1 %d:2", t0+300, t0+600)); !strings.HasPrefix(got, "0 ") {
		t.Fatalf("UPDATE: %q", got)
	}

	outside := testenv.SwapForSymlink(t, filepath.Join(e.dir, "a"))
	outFile := filepath.Join(outside, "x.rrd")
	before, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}

	e.clock.Advance(24 * time.Hour)
	e.runPass()

	after, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the writer wrote the acknowledged updates into the file outside the RRD directory")
	}
	if info := testenv.RRDTool(t, "info", outFile); !strings.Contains(info, fmt.Sprintf("last_update = %d\n", t0)) {
		t.Errorf("the outside file's last update moved:\n%s", info)
	}
	ctx := context.Background()
	key := rrd.ProtocolKey("a/x.rrd")
	if pending, err := b.spooled(ctx, key); err != nil || len(pending) != 2 {
		t.Errorf("spooled updates of a/x.rrd after the refused write = %d, %v; want the 2 acknowledged", len(pending), err)
	}
	if n := e.w.Stats().Errors[rrdwriter.KindPath]; n == 0 {
		t.Errorf("writer errors of kind %s = 0, want the refused write counted", rrdwriter.KindPath)
	}
	var found bool
	for _, te := range e.w.TargetErrors() {
		if te.Key == key {
			found = true
			if te.Kind != rrdwriter.KindPath || !strings.Contains(te.Err, "a/x.rrd") || !strings.Contains(te.Err, "leads out of the RRD directory") {
				t.Errorf("target error of a/x.rrd = %+v, want kind path naming the file and why", te)
			}
		}
	}
	if !found {
		t.Errorf("no target error for a/x.rrd in %+v", e.w.TargetErrors())
	}

	// The protocol refuses the name; the backend itself, asked directly,
	// refuses to open the file too.
	for _, cmd := range []string{"FETCH a/x.rrd AVERAGE", "INFO a/x.rrd", "FLUSH a/x.rrd"} {
		if got := send(cmd); !strings.HasPrefix(got, "-1 ") {
			t.Errorf("%s through the swapped symlink: %q, want refused", cmd, got)
		}
	}
	if _, err := b.Info(ctx, "a/x.rrd"); !errors.Is(err, rrd.ErrOutside) {
		t.Errorf("backend Info through the swapped symlink = %v, want rrd.ErrOutside", err)
	}
	if _, err := b.Fetch(ctx, "a/x.rrd", rrdcached.FetchArgs{CF: "AVERAGE"}); err == nil {
		t.Error("backend Fetch through the swapped symlink succeeded")
	}
	if _, err := b.First(ctx, "a/x.rrd", 0); !errors.Is(err, rrd.ErrOutside) {
		t.Errorf("backend First through the swapped symlink = %v, want rrd.ErrOutside", err)
	}
	if err := b.Create(ctx, "a/y.rrd", rrdcached.CreateArgs{Step: 300 * time.Second, Defs: []string{"DS:g:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:100"}}); !errors.Is(err, rrd.ErrOutside) {
		t.Errorf("backend Create through the swapped symlink = %v, want rrd.ErrOutside", err)
	}
	if _, err := e.w.Graph(ctx, key, graph.Options{}.Draw); !errors.Is(err, rrd.ErrOutside) {
		t.Errorf("graph through the swapped symlink = %v, want rrd.ErrOutside", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "y.rrd")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file created outside the RRD directory: %v", err)
	}
}
