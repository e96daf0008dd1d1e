package loader

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// Clock is the loader's source of time. Tests inject a fake one that
// advances on Sleep.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep pauses for d, or until ctx is done, when it returns ctx.Err().
	Sleep(ctx context.Context, d time.Duration) error
	// ThreadCPU returns the CPU time (user + system) used so far by the
	// calling OS thread.
	ThreadCPU() time.Duration
}

// realClock is the monotonic clock with getrusage(RUSAGE_THREAD).
type realClock struct{ base time.Time }

func newRealClock() realClock { return realClock{base: time.Now()} }

// Now returns base advanced by the monotonic time since: one monotonic
// clock read per call instead of time.Now's two (wall and monotonic), which
// matters at one call per file. It does not follow wall clock steps.
func (c realClock) Now() time.Time { return c.base.Add(time.Since(c.base)) }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ThreadCPU returns 0 if getrusage fails (it does not, for RUSAGE_THREAD on
// Linux): a CPU-mode loader then runs unpaused, as with CPU = 100%.
func (realClock) ThreadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
