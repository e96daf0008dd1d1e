package spoolgen

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/spool"
)

// Outcome is what spoold must do with one piece of hostile spool content.
type Outcome uint8

const (
	// QuarantinedByLoader: the loader moves it to quarantine/ from its
	// directory entry alone (bad name, wrong place).
	QuarantinedByLoader Outcome = iota + 1
	// QuarantinedOnRead: its name is a valid entry name in the right leaf, so
	// the loader indexes it; reading it fails and the writer quarantines it.
	QuarantinedOnRead
	// LeftAlone: not a regular file (a directory, a FIFO, a symlink): the
	// loader logs it, counts it as foreign and neither follows nor moves it.
	LeftAlone
	// Lands: a valid entry (only the unreadable case when the reader is
	// root, whom chmod 000 does not stop).
	Lands
)

var outcomeNames = [...]string{"", "quarantined by the loader", "quarantined on read", "left alone", "lands"}

func (o Outcome) String() string {
	if o > 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// HostileCase is one piece of hostile content written into a spool.
type HostileCase struct {
	Name    string      // what it is, e.g. "bad checksum"
	Path    string      // where it was put
	Ref     spool.Ref   // its entry name, for content cases
	Outcome Outcome     // what spoold must do with it
	Reason  string      // a word the quarantine reason or log must contain
	Outside string      // for symlinks: the file or directory outside the spool it points to
	Entry   spool.Entry // for content cases whose bytes are a valid entry (unreadable)
}

// WriteHostile writes hostile content into the spool sp: content cases for
// keys[0] at the times t0+1, t0+3, ... (odd offsets, so valid entries can take
// the even ones), misplaced files, and things that are not regular files.
// outside is a directory outside the spool that symlinks point into; values
// are the data source names of the content cases' entries. No level
// directory of any of keys is replaced by a symlink, so entries written for
// them later stay inside the spool. asRoot says
// whether the reader will be root: then a chmod 000 entry lands.
func WriteHostile(sp *spool.Spool, keys []string, t0 int64, values []string, outside string, asRoot bool) ([]HostileCase, error) {
	h := &hostile{sp: sp, key: keys[0], keys: keys, t0: t0, t: t0 - 1, values: values, outside: outside}
	h.contentCases(asRoot)
	h.placementCases()
	h.specialCases()
	return h.cases, h.err
}

// RampCounter is the counter value of every value of an entry at time t
// in WriteHostile's content cases: 100 per second from 1,000,000 at t0.
// Valid entries written with it around the hostile ones give a rate of
// exactly 100/s, whichever of the hostile ones land.
func RampCounter(t0, t int64) uint64 { return uint64(1_000_000 + 100*(t-t0)) }

type hostile struct {
	sp      *spool.Spool
	key     string
	keys    []string
	t0, t   int64
	values  []string
	outside string
	cases   []HostileCase
	err     error
}

// next returns the next odd time's entry of the key, valid, and its ref.
func (h *hostile) next() (spool.Entry, spool.Ref) {
	h.t += 2
	e := spool.Entry{Key: h.key, Time: h.t}
	for _, name := range h.values {
		e.Values = append(e.Values, spool.Value{Name: name, Type: spool.Counter, Counter: RampCounter(h.t0, h.t)})
	}
	return e, e.Ref()
}

func (h *hostile) encode(e spool.Entry) []byte {
	b, err := e.AppendEncode(nil)
	h.fail(err)
	return b
}

func (h *hostile) fail(err error) {
	if err != nil && h.err == nil {
		h.err = fmt.Errorf("write hostile spool content: %w", err)
	}
}

// put writes data at path, creating its directory.
func (h *hostile) put(path string, data []byte) {
	h.fail(os.MkdirAll(filepath.Dir(path), 0o750))
	h.fail(os.WriteFile(path, data, 0o640))
}

func (h *hostile) add(c HostileCase) { h.cases = append(h.cases, c) }

// contentCases: valid names in the right leaf, bad bytes.
func (h *hostile) contentCases(asRoot bool) {
	mutations := []struct {
		name, reason string
		mutate       func(b []byte) []byte
	}{
		{"truncated entry (a torn append)", "torn", func(b []byte) []byte { return b[:len(b)-9] }},
		{"zero-length file", "empty segment", func(b []byte) []byte { return nil }},
		{"bad magic", "bad magic", func(b []byte) []byte { copy(b, "XPLD"); return b }},
		{"wrong version", "unsupported version", func(b []byte) []byte { b[4] = 9; return b }},
		{"bad checksum", "checksum mismatch", func(b []byte) []byte { b[len(b)-6] ^= 0x40; return b }},
		{"content of another key", "in a segment of hash", func(b []byte) []byte {
			e := spool.Entry{Key: h.key + "-other", Time: int64(binary.LittleEndian.Uint64(b[8:]))}
			return h.encode(e)
		}},
		{"oversized file", "longer than the largest segment", func(b []byte) []byte { return append(b, make([]byte, spool.MaxSegmentLen)...) }},
	}
	for _, m := range mutations {
		e, ref := h.next()
		path := h.sp.EntryPath(ref)
		h.put(path, m.mutate(h.encode(e)))
		h.add(HostileCase{Name: m.name, Path: path, Ref: ref, Outcome: QuarantinedOnRead, Reason: m.reason})
	}
	e, ref := h.next()
	path := h.sp.EntryPath(ref)
	h.put(path, h.encode(e))
	h.fail(os.Chmod(path, 0))
	c := HostileCase{Name: "unreadable file (chmod 000)", Path: path, Ref: ref, Outcome: QuarantinedOnRead, Reason: "unreadable", Entry: e}
	if asRoot {
		c.Outcome, c.Reason = Lands, ""
	}
	h.add(c)
}

// placementCases: files the loader quarantines from their names and places.
func (h *hostile) placementCases() {
	e, ref := h.next()
	leaf := filepath.Dir(h.sp.EntryPath(ref))
	good := h.encode(e)
	for _, c := range []struct{ name, path, reason string }{
		{"name that does not parse", filepath.Join(leaf, "not-an-entry"), "bad name"},
		{"upper-case hex name", filepath.Join(leaf, strings.ToUpper(ref.String())), "bad name"},
		{"name with a leading zero time", filepath.Join(leaf, ref.String()[:17]+"0"+ref.String()[17:]), "bad name"},
		{"temp-looking name", filepath.Join(leaf, ref.String()+".tmp"), "bad name"},
		{"entry in the wrong level directory", filepath.Join(h.otherLeaf(ref), ref.String()), "wrong level directory"},
		{"file at the spool root", filepath.Join(h.sp.Dir(), ref.String()), "spool root"},
		{"file at an intermediate level", filepath.Join(filepath.Dir(leaf), ref.String()), "above the leaf"},
	} {
		h.put(c.path, good)
		h.add(HostileCase{Name: c.name, Path: c.path, Outcome: QuarantinedByLoader, Reason: c.reason})
	}
}

// freeLeaf returns a leaf directory (relative) that none of the keys and
// none of the cases so far use, near hash.
func (h *hostile) freeLeaf(hash uint64) string {
	used := map[string]bool{}
	for _, k := range h.keys {
		used[h.sp.Levels().Dir(spool.KeyHash(k))] = true
	}
	for _, c := range h.cases {
		rel, _ := filepath.Rel(h.sp.Dir(), filepath.Dir(c.Path))
		used[rel] = true
	}
	for k := uint64(1); ; k++ {
		if d := h.sp.Levels().Dir(hash ^ k<<4); !used[d] {
			return d
		}
	}
}

// otherLeaf returns a leaf directory ref's hash does not belong in.
func (h *hostile) otherLeaf(ref spool.Ref) string {
	other := ref.Hash ^ 0xf // flips the last hex digit: the first level
	return filepath.Join(h.sp.Dir(), h.sp.Levels().Dir(other))
}

// specialCases: directories, FIFOs and symlinks where entries should be.
func (h *hostile) specialCases() {
	e, ref := h.next()
	valid := h.encode(e)
	outsideEntry := filepath.Join(h.outside, ref.String())
	h.put(outsideEntry, valid)
	outsideDir := filepath.Join(h.outside, "leaf")
	h.put(filepath.Join(outsideDir, ref.String()), valid)

	_, ref = h.next()
	path := h.sp.EntryPath(ref)
	h.fail(os.MkdirAll(path, 0o750))
	h.add(HostileCase{Name: "directory with an entry name", Path: path, Ref: ref, Outcome: LeftAlone, Reason: "directory"})

	_, ref = h.next()
	path = h.sp.EntryPath(ref)
	h.fail(unix.Mkfifo(path, 0o640))
	h.add(HostileCase{Name: "FIFO with an entry name", Path: path, Ref: ref, Outcome: LeftAlone, Reason: "type=FIFO"})

	_, ref = h.next()
	path = h.sp.EntryPath(ref)
	h.fail(os.Symlink(outsideEntry, path))
	h.add(HostileCase{Name: "symlink with an entry name to a valid entry outside", Path: path, Ref: ref, Outcome: LeftAlone, Reason: "symlink", Outside: outsideEntry})

	// A symlink in place of a leaf directory no key uses, pointing to a
	// directory holding an entry: if it were followed, the loader would
	// index or quarantine that entry.
	path = filepath.Join(h.sp.Dir(), h.freeLeaf(ref.Hash))
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		h.fail(err) // not empty: never delete anything
	}
	h.fail(os.MkdirAll(filepath.Dir(path), 0o750))
	h.fail(os.Symlink(outsideDir, path))
	h.add(HostileCase{Name: "symlink in place of a leaf directory", Path: path, Outcome: LeftAlone, Reason: "symlink", Outside: outsideDir})

	path = filepath.Join(h.sp.Dir(), "fifo")
	h.fail(unix.Mkfifo(path, 0o640))
	h.add(HostileCase{Name: "FIFO at the spool root", Path: path, Outcome: LeftAlone, Reason: "type=FIFO"})
}
