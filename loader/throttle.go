package loader

import (
	"context"
	"math"
	"time"
)

// CPU mode's steering of the iteration size.
const (
	cpuIterationTarget = 20 * time.Millisecond // CPU time one iteration aims at
	cpuInitialFiles    = 100                   // size of the first iteration
	cpuMinFiles        = 1
	cpuMaxFiles        = 1e6
)

// throttle is the state of the iterations of one walk; only Run's
// goroutine touches it.
type throttle struct {
	clock     Clock
	c         *counters
	files     int           // files of the current iteration
	iterStart time.Time     // wall time the iteration began
	cpuStart  time.Duration // thread CPU when it began
	cpuRun    time.Duration // thread CPU when the walk began
	cpuFiles  float64       // CPU mode: the current iteration size
	// l, when set (Run sets it), makes a pause end early when SetParams
	// gives new parameters that want a shorter one.
	l *Loader
}

func newThrottle(clock Clock, c *counters, now time.Time) *throttle {
	cpu := clock.ThreadCPU()
	c.iterationFiles.Store(cpuInitialFiles)
	return &throttle{clock: clock, c: c, iterStart: now, cpuStart: cpu, cpuRun: cpu, cpuFiles: cpuInitialFiles}
}

// afterFile is nginx's check after each file (ngx_http_file_cache_manage_file):
// the iteration ends when it has p.Files files (CPU mode: the steered size)
// or else when p.Threshold has passed since it began. now is the time after
// the file. It returns ctx.Err() if ctx is done during the pause.
func (t *throttle) afterFile(ctx context.Context, p *Params, now time.Time) error {
	t.files++
	limit := p.Files
	if p.CPUMode() {
		limit = int(t.cpuFiles)
	}
	if t.files >= limit || now.Sub(t.iterStart) >= p.Threshold {
		return t.endIteration(ctx, p, now)
	}
	return nil
}

// endIteration pauses (p.Sleep, or in CPU mode max(0, c/p.CPU - w)) and
// begins the next iteration.
func (t *throttle) endIteration(ctx context.Context, p *Params, now time.Time) error {
	cpu := t.clock.ThreadCPU()
	c, w := cpu-t.cpuStart, now.Sub(t.iterStart)
	t.c.iterations.Add(1)
	t.c.cpu.Store(int64(cpu - t.cpuRun))
	pause := pauseAfter(p, c, w)
	if p.CPUMode() {
		t.cpuFiles = nextCPUFiles(t.cpuFiles, t.files, c)
		t.c.iterationFiles.Store(int64(t.cpuFiles))
	}
	t.files, t.cpuStart = 0, cpu
	if pause <= 0 {
		t.iterStart = now
		return nil
	}
	err := t.sleep(ctx, now, pause, c, w)
	t.iterStart = t.clock.Now()
	t.c.sleeps.Add(1)
	t.c.slept.Add(int64(t.iterStart.Sub(now)))
	return err
}

// pauseAfter is the pause p asks for after an iteration that used c of CPU
// over w of wall time: p.Sleep, or in CPU mode cpuPause.
func pauseAfter(p *Params, c, w time.Duration) time.Duration {
	if p.CPUMode() {
		return cpuPause(c, w, p.CPU)
	}
	return p.Sleep
}

// sleep pauses for d from start, until ctx ends (it returns ctx.Err()) or
// SetParams gives parameters whose pause after this iteration (c of CPU,
// w of wall time) has already passed; a longer new pause sleeps the rest.
func (t *throttle) sleep(ctx context.Context, start time.Time, d, c, w time.Duration) error {
	if t.l == nil {
		return t.clock.Sleep(ctx, d)
	}
	for {
		changed := t.l.changed.wait()
		sctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-changed:
				cancel()
			case <-sctx.Done():
			}
		}()
		err := t.clock.Sleep(sctx, d)
		cancel()
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		d = pauseAfter(t.l.params.Load(), c, w) - t.clock.Now().Sub(start)
		if d <= 0 {
			return nil
		}
	}
}

// cpuPause returns the pause after an iteration that used c of CPU over w of
// wall time, so that over iteration plus pause the CPU share is share.
func cpuPause(c, w time.Duration, share float64) time.Duration {
	return max(0, time.Duration(float64(c)/share)-w)
}

// nextCPUFiles steers the iteration size toward cpuIterationTarget of CPU:
// halfway from cur to the size that files/c per-file cost suggests (double
// cur when no CPU time was measured), clamped to [cpuMinFiles, cpuMaxFiles].
func nextCPUFiles(cur float64, files int, c time.Duration) float64 {
	want := 2 * cur
	if c > 0 {
		want = float64(files) * float64(cpuIterationTarget) / float64(c)
	}
	next := math.Round((cur + want) / 2)
	return min(max(next, cpuMinFiles), cpuMaxFiles)
}
