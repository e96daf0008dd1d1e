package loader

import (
	"math"
	"sync/atomic"
	"time"
)

// Stats describe the current or last walk. A snapshot is consistent per
// field, not across fields.
type Stats struct {
	Running  bool      `json:"running"`
	Started  time.Time `json:"started"`  // zero before the first Run
	Finished time.Time `json:"finished"` // zero while running and before the first Run ends

	LeafDirs int     `json:"leaf_dirs"` // leaf directories walked
	Progress float64 `json:"progress"`  // 0..1: fraction of the hash space (leaf directories) covered

	Files       uint64 `json:"files"`        // files seen: entries plus files quarantined
	Indexed     uint64 `json:"indexed"`      // entries newly added to the index
	Existing    uint64 `json:"existing"`     // entries the index already had (added by the poller meanwhile)
	Full        uint64 `json:"full"`         // entries left on disk because the index was full
	Quarantined uint64 `json:"quarantined"`  // files moved to quarantine/ (a dry run: that it would move)
	TempRemoved uint64 `json:"temp_removed"` // stale temp files of an earlier process removed
	Foreign     uint64 `json:"foreign"`      // unknown directories and non-regular files, left alone
	Errors      uint64 `json:"errors"`       // other failures (unreadable directory, Add error), logged

	Iterations uint64        `json:"iterations"`    // throttle iterations ended
	Sleeps     uint64        `json:"sleeps"`        // pauses taken (none when unthrottled)
	Slept      time.Duration `json:"slept_seconds"` // total pause time
	CPU        time.Duration `json:"cpu_seconds"`   // CPU time of the loader's thread

	Rate float64       `json:"rate_files_per_second"` // files per second over the elapsed time
	ETA  time.Duration `json:"eta_seconds"`           // time left, from Progress and elapsed; 0 when unknown

	// Params are the current parameters. In CPU mode (Params.CPU > 0)
	// Params.Files and Params.Sleep are not used: IterationFiles is the
	// iteration size the loader steers, and pauses follow the CPU share.
	Params         Params `json:"params"`
	IterationFiles int    `json:"iteration_files"`

	// Warmup is the leaf readiness: which keys may be written (see
	// Loader.Ready).
	Warmup Warmup `json:"warmup"`
}

// counters are the live values behind Stats, written by Run and read by
// Stats from any goroutine.
type counters struct {
	running                           atomic.Bool
	started, finished                 atomic.Int64 // UnixNano; 0 = zero time
	leafDirs                          atomic.Int64
	progress                          atomic.Uint64 // float64 bits
	files, indexed, existing, full    atomic.Uint64
	quarantined, tempRemoved, foreign atomic.Uint64
	errors, iterations, sleeps        atomic.Uint64
	slept, cpu                        atomic.Int64
	iterationFiles                    atomic.Int64
	leavesOnDemand                    atomic.Uint64 // never reset
}

// reset zeroes the counters of a walk that starts at now.
func (c *counters) reset(now time.Time) {
	c.started.Store(now.UnixNano())
	c.finished.Store(0)
	c.leafDirs.Store(0)
	c.progress.Store(0)
	for _, u := range []*atomic.Uint64{&c.files, &c.indexed, &c.existing, &c.full,
		&c.quarantined, &c.tempRemoved, &c.foreign, &c.errors, &c.iterations, &c.sleeps} {
		u.Store(0)
	}
	c.slept.Store(0)
	c.cpu.Store(0)
}

func (c *counters) setProgress(p float64) { c.progress.Store(math.Float64bits(p)) }

// snapshot returns the counters as Stats, with Rate and ETA computed at now.
func (c *counters) snapshot(now time.Time) Stats {
	s := Stats{
		Running:  c.running.Load(),
		Started:  unixNano(c.started.Load()),
		Finished: unixNano(c.finished.Load()),
		LeafDirs: int(c.leafDirs.Load()), Progress: math.Float64frombits(c.progress.Load()),
		Files: c.files.Load(), Indexed: c.indexed.Load(), Existing: c.existing.Load(), Full: c.full.Load(),
		Quarantined: c.quarantined.Load(), TempRemoved: c.tempRemoved.Load(), Foreign: c.foreign.Load(),
		Errors: c.errors.Load(), Iterations: c.iterations.Load(), Sleeps: c.sleeps.Load(),
		Slept: time.Duration(c.slept.Load()), CPU: time.Duration(c.cpu.Load()),
		IterationFiles: int(c.iterationFiles.Load()),
	}
	s.Rate, s.ETA = rateETA(s, now)
	return s
}

// rateETA returns files per second over the elapsed time and, while
// running with some progress made, the time left at that pace.
func rateETA(s Stats, now time.Time) (float64, time.Duration) {
	if s.Started.IsZero() {
		return 0, 0
	}
	end := now
	if !s.Running && !s.Finished.IsZero() {
		end = s.Finished
	}
	elapsed := end.Sub(s.Started)
	if elapsed <= 0 {
		return 0, 0
	}
	rate := float64(s.Files) / elapsed.Seconds()
	if !s.Running || s.Progress <= 0 || s.Progress >= 1 {
		return rate, 0
	}
	return rate, time.Duration(float64(elapsed) * (1 - s.Progress) / s.Progress)
}

func unixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
