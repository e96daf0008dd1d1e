package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spoold/spoold/spool"
)

// TestWalkQuarantine builds a spool with every kind of misplaced member and
// checks that entries are indexed, misfits quarantined with a reason,
// foreign directories left alone, stale temp files removed, and nothing
// else deleted; with real d_types and with DT_UNKNOWN (lstat fallback).
func TestWalkQuarantine(t *testing.T) {
	for _, unknown := range []bool{false, true} {
		t.Run(fmt.Sprintf("dtunknown=%v", unknown), func(t *testing.T) {
			sp := openSpool(t, "1:2")
			refs := putEntries(t, sp, 20, 1000)
			dir := sp.Dir()
			wrong := spool.Ref{Hash: spool.KeyHash("elsewhere"), Time: 5}
			wrongLeaf := sp.Levels().Dir(refs[0].Hash)
			misfits := map[string]string{ // path → expected reason fragment
				filepath.Join(wrongLeaf, "garbage"):      "bad name",
				filepath.Join(wrongLeaf, wrong.String()): "wrong level directory",
				filepath.Join(wrongLeaf[:1], "odd"):      "file at level 1",
				"stray":                                  "file at the spool root",
			}
			for p := range misfits {
				putFile(t, filepath.Join(dir, p))
			}
			for _, d := range []string{"junk", filepath.Join(wrongLeaf[:1], "zz"), filepath.Join(wrongLeaf, "sub")} {
				putFile(t, filepath.Join(dir, d, refs[1].String())) // foreign: never looked into
			}
			putFile(t, filepath.Join(dir, spool.TmpDir, "1.dead.7"))              // stale temp file
			putFile(t, filepath.Join(dir, spool.QuarantineDir, refs[2].String())) // not indexed
			before := regularFiles(t, dir)

			ix := newFakeIndex()
			l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
			l.forceUnknown = unknown
			st, err := l.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkStats(t, st, Stats{Files: 24, Indexed: 20, Quarantined: 4, Foreign: 3, TempRemoved: 1})
			for _, r := range refs {
				if !ix.refs[r] {
					t.Errorf("entry %s not indexed", r)
				}
			}
			if ix.Len() != len(refs) {
				t.Errorf("index has %d entries, want %d", ix.Len(), len(refs))
			}
			checkQuarantined(t, dir, misfits)
			checkNothingDeleted(t, dir, before, misfits)
		})
	}
}

// checkStats compares the counters of a finished walk.
func checkStats(t *testing.T, got, want Stats) {
	t.Helper()
	g := []uint64{got.Files, got.Indexed, got.Existing, got.Full, got.Quarantined, got.Foreign, got.TempRemoved, got.Errors}
	w := []uint64{want.Files, want.Indexed, want.Existing, want.Full, want.Quarantined, want.Foreign, want.TempRemoved, want.Errors}
	if !slices.Equal(g, w) {
		t.Errorf("files, indexed, existing, full, quarantined, foreign, temp removed, errors = %v, want %v", g, w)
	}
	if got.Running || got.Progress != 1 || got.Finished.IsZero() || got.ETA != 0 {
		t.Errorf("running %v, progress %v, finished %v, eta %v: want a finished walk", got.Running, got.Progress, got.Finished, got.ETA)
	}
}

// checkQuarantined checks that each misfit is in quarantine/ with a .reason.
func checkQuarantined(t *testing.T, dir string, misfits map[string]string) {
	t.Helper()
	for p, reason := range misfits {
		if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still in place (err %v)", p, err)
		}
		notes, _ := filepath.Glob(filepath.Join(dir, spool.QuarantineDir, filepath.Base(p)+".*.reason"))
		if len(notes) != 1 {
			t.Errorf("%s: %d reason files in quarantine, want 1", p, len(notes))
			continue
		}
		note, err := os.ReadFile(notes[0])
		if err != nil || !strings.Contains(string(note), reason) {
			t.Errorf("%s: reason %q (err %v), want it to say %q", p, note, err, reason)
		}
		if _, err := os.Stat(strings.TrimSuffix(notes[0], ".reason")); err != nil {
			t.Errorf("%s: quarantined file missing: %v", p, err)
		}
	}
}

// checkNothingDeleted checks that every file present before the walk is
// present after it, in place or in quarantine/, but the stale temp file.
func checkNothingDeleted(t *testing.T, dir string, before []string, misfits map[string]string) {
	t.Helper()
	after := regularFiles(t, dir)
	if got, want := len(after), len(before)-1; got != want {
		t.Errorf("%d files after the walk, want %d (all %d before but the stale temp file)", got, want, len(before))
	}
	for _, p := range before {
		if _, moved := misfits[p]; moved || strings.HasPrefix(p, spool.TmpDir+"/") {
			continue
		}
		if !slices.Contains(after, p) {
			t.Errorf("%s gone after the walk", p)
		}
	}
}

func TestIndexFull(t *testing.T) {
	sp := openSpool(t, "1:2")
	refs := putEntries(t, sp, 20, 1000)
	ix := newFakeIndex()
	ix.cap = 5
	l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
	st, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, st, Stats{Files: 20, Indexed: 5, Full: 15})
	for _, r := range refs {
		if _, err := os.Stat(sp.EntryPath(r)); err != nil {
			t.Errorf("entry left out of a full index is not on disk: %v", err)
		}
	}
}

func TestIndexError(t *testing.T) {
	sp := openSpool(t, "1:2")
	refs := putEntries(t, sp, 20, 1000)
	ix := newFakeIndex()
	ix.fail = func(r spool.Ref) error {
		if r == refs[3] {
			return errors.New("hash collision")
		}
		return nil
	}
	l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
	st, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, st, Stats{Files: 20, Indexed: 19, Errors: 1})
	if len(regularFiles(t, sp.Dir())) != 22 { // 20 entries, the lock and the marker
		t.Errorf("files changed on disk: %v", regularFiles(t, sp.Dir()))
	}
}

// Entries the poller indexed meanwhile count as Existing, not Indexed; a
// rescan finds everything Existing.
func TestExisting(t *testing.T) {
	sp := openSpool(t, "1:2")
	refs := putEntries(t, sp, 20, 1000)
	ix := newFakeIndex()
	for _, r := range refs[:8] {
		ix.refs[r] = true
	}
	l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
	st, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, st, Stats{Files: 20, Indexed: 12, Existing: 8})
	st, err = l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, st, Stats{Files: 20, Existing: 20})
}

func TestLevels(t *testing.T) {
	for _, levels := range []string{"1", "2", "1:1", "1:2", "2:2", "1:1:2"} {
		t.Run(levels, func(t *testing.T) {
			sp := openSpool(t, levels)
			putEntries(t, sp, 300, 7)
			ix := newFakeIndex()
			l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
			st, err := l.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkStats(t, st, Stats{Files: 300, Indexed: 300})
			dirs, _ := filepath.Glob(filepath.Join(sp.Dir(), strings.Repeat("[0-9a-f]*/", sp.Levels().Depth())))
			if st.LeafDirs != len(dirs) {
				t.Errorf("leaf dirs walked = %d, want %d", st.LeafDirs, len(dirs))
			}
		})
	}
}
