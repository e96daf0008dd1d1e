package shm

import (
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"
)

// ErrFull is wrapped by the error of an Add (or SetKey) that would take the
// index beyond Options.MaxBytes. Nothing was changed; the entry stays on disk.
var ErrFull = errors.New("index full")

// ErrCollision is wrapped by the error of an Add or SetKey that names a key
// different from the non-empty key the index holds for the same hash.
var ErrCollision = errors.New("hash collision")

// Index is the sharded index of pending spool entries. Create it with New.
type Index struct {
	shards   []shard
	shift    uint8 // 64 - log2(len(shards))
	maxBytes int64
	minDelay int64 // Options.MinDelay in nanoseconds
	now      func() time.Time

	_        [cacheLine]byte
	bytes    atomic.Int64 // accounted bytes; see bytes.go
	_        [cacheLine - 8]byte
	cursor   atomic.Uint64 // first shard of the next TakeDue, for fairness
	overflow atomic.Bool
	held     held // keys with refused entries on disk; see held.go
}

// New returns an empty index. Its error names the bad option.
func New(opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("new index: %w", err)
	}
	ix := &Index{
		shards:   make([]shard, opts.Shards),
		shift:    uint8(64 - bits.TrailingZeros(uint(opts.Shards))),
		maxBytes: opts.MaxBytes,
		minDelay: int64(opts.MinDelay),
		now:      opts.Now,
	}
	if ix.now == nil {
		ix.now = time.Now
	}
	for i := range ix.shards {
		ix.shards[i].slots = make(map[uint64]uint32)
	}
	return ix, nil
}

// shardOf returns the shard of hash: the top bits of a Fibonacci mix of the
// whole hash, independent of the low bits that choose spool directories.
func (ix *Index) shardOf(hash uint64) *shard {
	return &ix.shards[(hash*0x9e3779b97f4a7c15)>>ix.shift]
}

// Add records the pending entry (hash, ts) and reports whether it was new.
//
// key may be "" when unknown (the loader knows only the hash); a later Add or
// SetKey with the key fills it in. Add is idempotent: an entry already
// pending or in flight gives (false, nil) (and its key is learned if it was
// unknown and fits). If key is not "" and the index holds a different
// non-empty key for hash, Add returns an error wrapping ErrCollision and
// changes nothing. If recording the entry (and the key, if new) would exceed
// Options.MaxBytes, Add returns (false, err wrapping ErrFull), changes
// nothing and sets the overflow flag; it never evicts anything.
//
// Add does not allocate when the key is present with a known key (or key is
// "") and its pending times have room. The index keeps key as given (it does
// not copy it): do not pass a substring of a large buffer, or the index pins
// the whole buffer.
func (ix *Index) Add(hash uint64, key string, ts int64) (added bool, err error) {
	s := ix.shardOf(hash)
	s.mu.Lock()
	added, err = ix.addLocked(s, hash, key, ts)
	s.mu.Unlock()
	return added, err
}

func (ix *Index) addLocked(s *shard, hash uint64, key string, ts int64) (bool, error) {
	if ix.held.refuses(hash, ts) {
		return false, ix.fullError(s, hash, ts, timeBytes)
	}
	st, _ := s.lookup(hash)
	if st == nil {
		return ix.addKeyLocked(s, hash, key, ts)
	}
	if key != "" && st.key != "" && st.key != key {
		s.collisions++
		return false, collisionError(hash, st.key, key)
	}
	learn := key != "" && st.key == ""
	pos, dup := st.findTime(ts)
	if dup {
		s.duplicates++
		if learn && ix.reserve(int64(len(key))) {
			st.key = key
		}
		return false, nil
	}
	need := int64(timeBytes)
	if learn {
		need += int64(len(key))
	}
	if !ix.reserve(need) {
		return false, ix.fullError(s, hash, ts, need)
	}
	if learn {
		st.key = key
	}
	st.pending = insertAt(st.pending, pos, ts)
	if pos == 0 {
		st.forget()
		s.wakeFor(ts, ix.minDelay) // a new oldest time: the key's due time moved
	}
	s.entries++
	s.added++
	return true, nil
}

// addKeyLocked adds the first entry of a key the index does not hold.
func (ix *Index) addKeyLocked(s *shard, hash uint64, key string, ts int64) (bool, error) {
	need := keyOverhead + int64(len(key)) + timeBytes
	if !ix.reserve(need) {
		return false, ix.fullError(s, hash, ts, need)
	}
	st := s.create(hash)
	st.key = key
	st.pending = append(st.pending, ts)
	s.wakeFor(ts, ix.minDelay)
	s.entries++
	s.added++
	return true, nil
}

// Full reports whether err (from Add or SetKey) says the index is full:
// the entry was refused for room, not for what it is, and stays on disk
// for a later walk.
func (ix *Index) Full(err error) bool { return errors.Is(err, ErrFull) }

// fullError counts a refused Add, raises the overflow flag and describes it.
func (ix *Index) fullError(s *shard, hash uint64, ts int64, need int64) error {
	s.full++
	if !ix.overflow.Load() {
		ix.overflow.Store(true)
	}
	ix.held.hold(hash, ts)
	if st, slot := s.lookup(hash); st != nil {
		freed := s.dropFrom(st, ts)
		if len(st.pending) == 0 && !st.inFlight() {
			freed += keyOverhead + int64(len(st.key))
			s.remove(hash, slot)
		}
		ix.release(freed)
	}
	return fmt.Errorf("add entry %016x-%d (%d bytes, %d of %d in use): %w",
		hash, ts, need, ix.bytes.Load(), ix.maxBytes, ErrFull)
}

func collisionError(hash uint64, held, key string) error {
	return fmt.Errorf("add key %q: hash %016x already belongs to %q: %w", key, hash, held, ErrCollision)
}

// SetKey records the key of hash if the index holds hash with an unknown key.
// It is a no-op if hash is absent, key is "" or the key is already known and
// equal. A different known key gives an error wrapping ErrCollision; a key
// that does not fit in Options.MaxBytes gives an error wrapping ErrFull
// (counted in Stats.Full, but the overflow flag is not raised: no entry was
// refused). In both cases nothing changes.
func (ix *Index) SetKey(hash uint64, key string) error {
	if key == "" {
		return nil
	}
	s := ix.shardOf(hash)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := s.lookup(hash)
	switch {
	case st == nil || st.key == key:
		return nil
	case st.key != "":
		s.collisions++
		return collisionError(hash, st.key, key)
	case !ix.reserve(int64(len(key))):
		s.full++
		return fmt.Errorf("set key %q of %016x: %w", key, hash, ErrFull)
	}
	st.key = key
	return nil
}

// Overflowed reports whether an Add failed with ErrFull since New or the
// last ClearOverflow: some entries are on disk but not indexed, and the
// daemon should schedule a rescan of the spool.
func (ix *Index) Overflowed() bool { return ix.overflow.Load() }

// ClearOverflow lowers the overflow flag (BeginWalk does too, and starts
// releasing held keys); call it before starting the rescan
// so that an Add failing during the rescan raises it again.
func (ix *Index) ClearOverflow() { ix.overflow.Store(false) }

// Len returns the number of entries, pending and in flight. It locks each
// shard in turn, so it is a sum, not a snapshot.
func (ix *Index) Len() int {
	n := 0
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.Lock()
		n += s.entries
		s.mu.Unlock()
	}
	return n
}
