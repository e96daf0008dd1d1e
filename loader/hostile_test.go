package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/spoolgen"
	"github.com/spoold/spoold/spool"
)

// syncBuffer is a log destination safe for the loader and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHostileSpoolContent fills a spool with valid entries of three keys
// and every kind of hostile content (spoolgen.WriteHostile), walks it, then
// reads every indexed entry as the writer does. Misplaced files are
// quarantined by the walk, bad bytes on read, non-files are reported by path
// and left alone, no symlink is followed, nothing outside the spool is
// touched, and every valid entry is indexed and reads back intact.
func TestHostileSpoolContent(t *testing.T) {
	for _, unknown := range []bool{false, true} {
		t.Run(fmt.Sprintf("dtunknown=%v", unknown), func(t *testing.T) {
			testHostile(t, unknown)
		})
	}
}

func testHostile(t *testing.T, unknown bool) {
	var logs syncBuffer
	so := spool.DefaultOptions()
	so.Dir, so.Logger = t.TempDir(), slog.New(slog.NewTextHandler(&logs, nil))
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	keys := []string{"edge-1", "edge-2", "edge-3"}
	const t0 = 1_700_000_000
	valid := map[spool.Ref]spool.Entry{}
	for _, k := range keys {
		for i := range 10 {
			e := spool.Entry{Key: k, Time: t0 + 2*int64(i), Values: []spool.Value{{Name: "in", Type: spool.Counter, Counter: uint64(i)}}}
			ref, err := sp.Write(&e)
			if err != nil {
				t.Fatal(err)
			}
			valid[ref] = e
		}
	}
	outside := t.TempDir()
	asRoot := os.Geteuid() == 0
	cases, err := spoolgen.WriteHostile(sp, keys, t0, []string{"in"}, outside, asRoot)
	if err != nil {
		t.Fatal(err)
	}
	outsideBefore := spoolgen.Snapshot(t, outside)

	ix := newFakeIndex()
	opts := DefaultOptions()
	opts.Params, opts.Logger = Params{Files: 1000, Threshold: hour}, sp.Logger()
	l, err := New(sp, ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	l.forceUnknown = unknown
	st := runBounded(t, l)

	count := map[spoolgen.Outcome]uint64{}
	for _, c := range cases {
		count[c.Outcome]++
	}
	if st.Quarantined != count[spoolgen.QuarantinedByLoader] || st.Foreign != count[spoolgen.LeftAlone] || st.Errors != 0 {
		t.Errorf("loader quarantined %d, foreign %d, errors %d; want %d, %d, 0",
			st.Quarantined, st.Foreign, st.Errors, count[spoolgen.QuarantinedByLoader], count[spoolgen.LeftAlone])
	}
	for ref := range valid {
		if !ix.refs[ref] {
			t.Errorf("valid entry %s not indexed", ref)
		}
	}
	reasons := spoolgen.QuarantineReasons(t, sp.Dir())
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			checkHostileCase(t, sp, ix, c, reasons, logs.String())
		})
	}
	for ref, want := range valid {
		got, err := sp.Read(ref)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("valid entry %s: read %+v, %v", ref, got, err)
		}
	}
	if after := spoolgen.Snapshot(t, outside); !maps.Equal(after, outsideBefore) {
		t.Errorf("files outside the spool changed:\nbefore %v\nafter  %v", outsideBefore, after)
	}
}

// runBounded runs the loader, failing (instead of hanging) if the walk
// blocks, e.g. on a FIFO.
func runBounded(t *testing.T, l *Loader) Stats {
	t.Helper()
	type result struct {
		st  Stats
		err error
	}
	done := make(chan result, 1)
	go func() { st, err := l.Run(context.Background()); done <- result{st, err} }()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.st
	case <-time.After(time.Minute):
		t.Fatal("the loader's walk blocked for a minute")
	}
	return Stats{}
}

// checkHostileCase checks what the walk did with one case, then reads it
// as the writer would.
func checkHostileCase(t *testing.T, sp *spool.Spool, ix *fakeIndex, c spoolgen.HostileCase, reasons map[string]string, logs string) {
	switch c.Outcome {
	case spoolgen.QuarantinedByLoader:
		if _, err := os.Lstat(c.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still in place (%v)", c.Path, err)
		}
		if r, ok := reasons[c.Path]; !ok || !strings.Contains(r, c.Reason) {
			t.Errorf("quarantine reason for %s = %q, want one containing %q", c.Path, r, c.Reason)
		}
	case spoolgen.LeftAlone:
		if _, err := os.Lstat(c.Path); err != nil {
			t.Errorf("%s moved or removed: %v", c.Path, err)
		}
		if !strings.Contains(logs, c.Path) || !strings.Contains(logs, c.Reason) {
			t.Errorf("no log line names %s and %q", c.Path, c.Reason)
		}
		if c.Ref != (spool.Ref{}) && ix.refs[c.Ref] {
			t.Errorf("%s (not a regular file) was indexed", c.Path)
		}
		if c.Outside != "" {
			if r, err := spool.ParseName(filepath.Base(c.Outside)); err == nil && ix.refs[r] {
				t.Errorf("the entry behind symlink %s was indexed", c.Path)
			}
		}
	case spoolgen.QuarantinedOnRead:
		if !ix.refs[c.Ref] {
			t.Fatalf("%s not indexed", c.Path)
		}
		g, err := sp.ReadSegment(c.Ref)
		var ce *spool.CorruptionError
		reason := ""
		switch {
		case errors.As(err, &ce) && ce.Path == c.Path:
			reason = ce.Reason
		case err == nil && len(g.Bad) > 0:
			reason = g.Bad[0].Reason
		}
		if !strings.Contains(reason, c.Reason) {
			t.Fatalf("ReadSegment = %+v, %v; want a CorruptionError naming %s or a bad range with %q", g.Bad, err, c.Path, c.Reason)
		}
		if _, err := sp.Quarantine(c.Ref, reason); err != nil {
			t.Fatal(err)
		}
	case spoolgen.Lands:
		t.Log("LOUD: running as root, which chmod 000 does not stop: the unreadable case is read like any entry here; spool's TestUnreadableEntryIsCorrupt covers it with a dropped fsuid")
		if g, err := sp.ReadSegment(c.Ref); err != nil || len(g.Entries) != 1 || !reflect.DeepEqual(g.Entries[0], c.Entry) {
			t.Errorf("ReadSegment = %+v, %v; want %+v", g, err, c.Entry)
		}
	}
}

// TestSpoolRootMayBeASymlink: an operator may point /var/spool/spoold at
// another disk with a symlink; only the members of the spool are never
// followed, not its root.
func TestSpoolRootMayBeASymlink(t *testing.T) {
	real := t.TempDir()
	root := filepath.Join(t.TempDir(), "spool")
	if err := os.Symlink(real, root); err != nil {
		t.Fatal(err)
	}
	sp, err := spool.Open(spool.Options{Dir: root, Levels: "1:2"})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	refs := putEntries(t, sp, 5, 1000)
	ix := newFakeIndex()
	st := runBounded(t, newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock()))
	if st.Indexed != uint64(len(refs)) || st.Errors != 0 {
		t.Fatalf("indexed %d, errors %d through a symlinked root; want %d, 0", st.Indexed, st.Errors, len(refs))
	}
}
