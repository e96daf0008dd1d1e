package loader

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/spool"
)

// walkLeaf indexes the entries of the leaf directory fd, the idx-th in
// sorted order, straight out of the getdents buffer.
func (w *walk) walkLeaf(fd, idx int) error {
	err := w.dr.Each(fd, func(name []byte, typ uint8) error {
		return w.leafEntry(fd, name, typ)
	})
	if cerr := w.cancelled(); cerr != nil {
		return cerr
	}
	if err != nil {
		w.problem("read directory "+w.path(w.layout.Depth(), ""), err)
	}
	w.l.c.leafDirs.Add(1)
	if !w.onDemand {
		w.l.c.setProgress(float64(idx+1) / w.leafTotal)
		w.maybeLog(w.l.clock.Now())
	}
	return nil
}

// leafEntry handles one entry of a leaf directory: an entry file is
// indexed; a file with a bad name or in the wrong directory is quarantined;
// anything else is foreign. Each file then counts for the throttle.
func (w *walk) leafEntry(dirfd int, name []byte, typ uint8) error {
	typ, err := spool.ResolveType(dirfd, name, typ)
	if errors.Is(err, unix.ENOENT) {
		return nil // removed meanwhile (the writer applied it)
	}
	if err != nil {
		w.problem("read directory "+w.path(w.layout.Depth(), ""), err)
		return nil
	}
	if typ != unix.DT_REG {
		w.foreign(w.path(w.layout.Depth(), string(name)), typ)
		return nil
	}
	ref, ok := spool.ParseNameBytes(name)
	switch {
	case !ok:
		w.quarantine(w.layout.Depth(), string(name), "bad name: not <16 hex digits>-<unix seconds>")
	case !w.inLeaf(ref.Hash):
		w.quarantine(w.layout.Depth(), string(name), "wrong level directory: the name's hash belongs in "+w.layout.Dir(ref.Hash))
	default:
		w.index(ref)
	}
	return w.afterFile()
}

// inLeaf reports whether an entry with this hash belongs in the current
// leaf directory.
func (w *walk) inLeaf(hash uint64) bool {
	for i := 0; i < w.layout.Depth(); i++ {
		if !w.layout.LevelMatches(i, w.levels[i], hash) {
			return false
		}
	}
	return true
}

// index adds the entry to the index and counts the outcome.
func (w *walk) index(ref spool.Ref) {
	added, err := w.l.ix.Add(ref.Hash, "", ref.Time)
	c := &w.l.c
	switch {
	case err == nil && added:
		c.indexed.Add(1)
	case err == nil:
		c.existing.Add(1)
	case w.l.ix.Full(err):
		c.full.Add(1)
		if !w.fullSeen {
			w.fullSeen = true
			w.l.log.Warn("index is full: entries stay on disk until a later rescan", "entry", ref.String(), "err", err)
		}
	default:
		w.problem("index spool entry "+ref.String(), err)
	}
}
