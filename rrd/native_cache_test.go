package rrd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestHeaderCacheChecksTheFileBeforeUse: a cached file replaced at its path, tuned
// or truncated behind the cache's back is never written through its old
// descriptor or header: the results match librrd's on the same changes.
func TestHeaderCacheChecksTheFileBeforeUse(t *testing.T) {
	defs := []string{"DS:a:GAUGE:120:U:U", "DS:b:COUNTER:120:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:MAX:0.5:3:5"}
	tw := newTwin(t, t0, 60, defs...)
	c := NewHeaderCache(testRoot(t, filepath.Dir(tw.nat)), 4)
	defer c.Close()
	step := func(k int) {
		t.Helper()
		arg := fmt.Sprint(t0+int64(k)*60+7, ":", k, ":", k*1000)
		if err := tw.librrdUpdate(t, nil, []string{arg}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Update(tw.nat, nil, []Sample{parseUpdateArg(t, arg)}); err != nil {
			t.Fatal(err)
		}
		tw.same(t, arg)
	}
	step(1)
	step(2)
	// Tuned in place: the heartbeat and the limits change; the header is
	// read again (k=3 is 60 s after k=2: within 120, not within 50).
	for _, p := range []string{tw.lib, tw.nat} {
		if _, err := rrdtool(t, "tune", p, "--heartbeat", "a:50", "--maximum", "b:5"); err != nil {
			t.Fatal(err)
		}
	}
	step(3)
	step(4)
	// Replaced by a rename: the new file is updated, not the old inode.
	// (rrdtool create picks the archives' current rows at random: one
	// file, copied.)
	fresh := newTwin(t, t0, 60, defs...)
	for _, p := range [][2]string{{fresh.lib, tw.lib}, {fresh.nat, tw.nat}} {
		if err := os.Rename(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	step(5)
	if s := c.Stats(); s.Replaced != 1 || s.Parses != 2 || s.Updates != 5 || s.Applied != 5 {
		t.Errorf("stats %+v, want 2 parses, 1 replaced, 5 updates", s)
	}
	// Truncated: refused, left to librrd (which refuses it too).
	if err := os.Truncate(tw.nat, 1000); err != nil {
		t.Fatal(err)
	}
	var nn *NotNativeError
	_, err := c.Update(tw.nat, nil, []Sample{parseUpdateArg(t, fmt.Sprint(t0+600, ":1:1"))})
	if !errors.As(err, &nn) || nn.Reason != ReasonLayout {
		t.Errorf("truncated file: %v", err)
	}
	if s := c.Stats(); s.Fallbacks[ReasonLayout] != 1 {
		t.Errorf("fallbacks %v", s.Fallbacks)
	}
}

// TestHeaderCacheBound: no more headers are kept than the bound, the least
// recently used dropped first; no descriptor is held between batches (the
// file system can be remounted read-only); a file the native path does
// not handle is not parsed again until it changes.
func TestHeaderCacheBound(t *testing.T) {
	dir := t.TempDir()
	c := NewHeaderCache(testRoot(t, dir), 2)
	defer c.Close()
	var paths []string
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprint(i, ".rrd"))
		createRRD(t, p, t0, 60, "DS:a:GAUGE:120:U:U", "RRA:AVERAGE:0.5:1:10")
		paths = append(paths, p)
	}
	for k, p := range append(paths, paths[3], paths[0]) {
		if _, err := c.Update(p, nil, []Sample{{Time: t0 + int64(k+1)*10, Values: []string{"1"}}}); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.Headers > 2 {
			t.Fatalf("%d headers kept", s.Headers)
		}
		if n := openDescriptors(t, dir); n != 0 {
			t.Fatalf("%d descriptors of the RRD files held after a batch", n)
		}
	}
	if s := c.Stats(); s.Parses != 5 || s.Evictions != 3 {
		t.Errorf("stats %+v, want 5 parses (paths[3] stayed kept), 3 evictions", s)
	}
	hw := filepath.Join(dir, "hw.rrd")
	createRRD(t, hw, t0, 60, "DS:a:GAUGE:120:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:HWPREDICT:10:0.1:0.0035:5")
	for range 3 {
		if _, err := c.Update(hw, nil, []Sample{{Time: t0 + 100, Values: []string{"1"}}}); err == nil {
			t.Fatal("HWPREDICT updated natively")
		}
	}
	if s := c.Stats(); s.Parses != 6 || s.Fallbacks[ReasonArchive] != 3 {
		t.Errorf("stats %+v, want the HWPREDICT file parsed once and 3 fallbacks", s)
	}
}

// openDescriptors counts this process's descriptors of files under dir.
func openDescriptors(t *testing.T, dir string) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// TestHeaderCacheSharesHeaders: files made from one set of definitions share one
// parsed header, even when the bound keeps none of them between their
// batches (more files than the bound, as in a daemon), and an update of
// such a file allocates nothing but the open's path.
func TestHeaderCacheSharesHeaders(t *testing.T) {
	dir := t.TempDir()
	defs := []string{"DS:a:COUNTER:600:0:U", "DS:b:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:100", "RRA:MAX:0.5:6:20"}
	paths := make([]string, 3)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprint(i, ".rrd"))
		createRRD(t, paths[i], t0, 300, defs...)
	}
	other := filepath.Join(dir, "other.rrd")
	createRRD(t, other, t0, 300, "DS:a:COUNTER:900:0:U", "DS:b:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:100", "RRA:MAX:0.5:6:20")
	c := NewHeaderCache(testRoot(t, dir), 1)
	defer c.Close()
	k := 0
	vals := []string{"", ""}
	rows := []Sample{{Values: vals}, {Values: vals}}
	update := func(path string) {
		for r := range rows {
			k++
			rows[r].Time = t0 + int64(k)*300
		}
		vals[0], vals[1] = "1000", "7"
		if _, err := c.Update(path, nil, rows); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range append(paths, other) {
		update(p)
	}
	if n := len(c.known.m); n != 2 {
		t.Errorf("%d headers parsed for 2 kinds of file", n)
	}
	i := 0
	allocs := testing.AllocsPerRun(20, func() {
		update(paths[i%len(paths)])
		i++
	})
	// The race detector's sync.Pool drops a share of what is put back on
	// purpose, so only a build without it counts what an update keeps.
	if allocs > 1 && !testenv.Race {
		t.Errorf("%.1f allocations an update, want at most 1 (the open's path)", allocs)
	}
	if s := c.Stats(); s.Parses != 4+21 || s.Headers != 1 {
		t.Errorf("stats %+v, want every update a file without a kept header", s)
	}
}

// TestUpdateForPlansFromTheInfoItReads: UpdateFor hands rowsFor the info
// Info reads (last update to the millisecond, step, data sources in
// order), applies the rows it returns as librrd applies them, writes
// nothing when it returns none, and does not call it for a file it cannot
// read (missing) or does not handle (counted as a fallback): the caller
// learns the info the usual way then.
func TestUpdateForPlansFromTheInfoItReads(t *testing.T) {
	defs := []string{"DS:a:GAUGE:600:U:U", "DS:b:COUNTER:600:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:MAX:0.5:3:5"}
	tw := newTwin(t, t0, 60, defs...)
	root := testRoot(t, filepath.Dir(tw.nat))
	c := NewHeaderCache(root, 4)
	defer c.Close()
	first := fmt.Sprint(t0+60, ".250:1:1000")
	if err := tw.librrdUpdate(t, nil, []string{first}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(tw.nat, nil, []Sample{parseUpdateArg(t, first)}); err != nil {
		t.Fatal(err)
	}
	rest := []string{fmt.Sprint(t0+120, ":2:1600"), fmt.Sprint(t0+185, ":U:2500")}
	if err := tw.librrdUpdate(t, nil, rest); err != nil {
		t.Fatal(err)
	}
	want, err := root.Info(tw.nat)
	if err != nil {
		t.Fatal(err)
	}
	var got []FileInfo
	rowsFor := func(fi FileInfo) []Sample {
		got = append(got, fi)
		var rows []Sample
		for _, a := range rest {
			if r := parseUpdateArg(t, a); r.Time > fi.Last {
				rows = append(rows, r)
			}
		}
		return rows
	}
	if n, err := c.UpdateFor(tw.nat, rowsFor, nil); n != 2 || err != nil {
		t.Fatalf("UpdateFor: %d rows, %v", n, err)
	}
	if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) || want.Last != t0+60 || want.LastMilli != 250 {
		t.Fatalf("rowsFor got %v, Info says %v", got, want)
	}
	tw.same(t, rest)
	// Every row is in the file now: none are planned, nothing is written.
	before, _ := os.ReadFile(tw.nat)
	if n, err := c.UpdateFor(tw.nat, rowsFor, nil); n != 0 || err != nil || len(got) != 2 || got[1].Last != t0+185 {
		t.Fatalf("UpdateFor of nothing: %d rows, %v, info %v", n, err, got[1:])
	}
	if after, _ := os.ReadFile(tw.nat); string(after) != string(before) {
		t.Error("an update of no rows changed the file")
	}
	never := func(FileInfo) []Sample { t.Fatal("rowsFor called"); return nil }
	if _, err := c.UpdateFor(filepath.Join(filepath.Dir(tw.nat), "missing.rrd"), never, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	hw := filepath.Join(filepath.Dir(tw.nat), "hw.rrd")
	createRRD(t, hw, t0, 60, "DS:a:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:HWPREDICT:10:0.1:0.0035:5")
	var nn *NotNativeError
	if _, err := c.UpdateFor(hw, never, nil); !errors.As(err, &nn) || nn.Reason != ReasonArchive {
		t.Errorf("a file the native path does not handle: %v", err)
	}
	if s := c.Stats(); s.Fallbacks[ReasonArchive] != 1 {
		t.Errorf("fallbacks %v", s.Fallbacks)
	}
}
