package loader

import (
	"context"
	"time"
)

// WalkIndex is what Rescans needs of the index besides Indexer
// (*shm.Index): the bounds of a whole walk, and whether an index that
// refused entries has room for them again.
type WalkIndex interface {
	// BeginWalk is called before each walk of the whole spool.
	BeginWalk()
	// EndWalk is called after a walk that visited every directory
	// without an error: keys held for refused entries are released.
	EndWalk()
	// RoomAgain reports whether the index refused entries and has room
	// for them now.
	RoomAgain() bool
}

// roomCheck is how often Rescans asks an index whether it has room again
// for entries it refused (Loader.roomEvery, which tests shorten).
const roomCheck = 10 * time.Second

// Rescans walks the spool (Run), then again Options.RescanInterval after
// each walk ended (never, when it is 0), and early when ix has room again
// for entries it refused; until ctx ends or a walk fails. NextRescan says
// when the next walk is due. Keys ix holds for refused entries are
// released after a walk only when that walk had no errors: one with
// unreadable directories may have missed some of their entries.
//
// It runs on the caller's goroutine, as Run does.
func (l *Loader) Rescans(ctx context.Context, ix WalkIndex) error {
	room := time.NewTicker(l.roomEvery)
	defer room.Stop()
	for {
		ix.BeginWalk()
		st, err := l.Run(ctx)
		if err != nil {
			return err
		}
		if st.Errors == 0 {
			ix.EndWalk()
		} else {
			l.log.Warn("the walk of the spool had errors: keys with entries a full index refused stay held until a walk without errors", "errors", st.Errors)
		}
		tick, stop := l.scheduleRescan()
		err = l.waitRescan(ctx, ix, tick, room.C)
		stop()
		l.nextRescan.Store(0)
		if err != nil {
			return err
		}
	}
}

// NextRescan returns when Rescans walks the spool again; the zero time
// while a walk runs or when no rescan is scheduled.
func (l *Loader) NextRescan() time.Time {
	if n := l.nextRescan.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// scheduleRescan starts the timer of the next rescan and records when it
// fires; without a rescan interval the channel is nil (never fires).
func (l *Loader) scheduleRescan() (<-chan time.Time, func()) {
	if l.rescanEvery <= 0 {
		return nil, func() {}
	}
	t := time.NewTimer(l.rescanEvery)
	l.nextRescan.Store(time.Now().Add(l.rescanEvery).UnixNano())
	return t.C, func() { t.Stop() }
}

// waitRescan returns when the next walk is due: the rescan interval, or
// an index with room again for entries it refused.
func (l *Loader) waitRescan(ctx context.Context, ix WalkIndex, tick, room <-chan time.Time) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			return nil
		case <-room:
			if ix.RoomAgain() {
				l.log.Info("index has room again after refusing entries; rescanning the spool")
				return nil
			}
		}
	}
}
