package loader

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// hour is a threshold that no test iteration reaches: the largest allowed.
const hour = MaxThreshold

func TestThrottleFiles(t *testing.T) {
	tests := []struct {
		entries, files int
		sleep          time.Duration
		wantSleeps     int
		wantIterations uint64
	}{
		{1000, 100, 50 * time.Millisecond, 10, 10},
		{1000, 100, 0, 0, 10},
		{1000, 7, time.Millisecond, 142, 142},
		{1000, 1000, time.Second, 1, 1},
		{1000, 5000, time.Second, 0, 0},
		{10, 1, 10 * time.Millisecond, 10, 10},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("entries=%d,files=%d,sleep=%s", tt.entries, tt.files, tt.sleep), func(t *testing.T) {
			sp := openSpool(t, "1:2")
			putEntries(t, sp, tt.entries, 1000)
			clock := newFakeClock()
			l := newTestLoader(t, sp, newFakeIndex(), Params{Files: tt.files, Sleep: tt.sleep, Threshold: hour}, clock)
			st, err := l.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := clock.Sleeps(), repeat(tt.wantSleeps, tt.sleep); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Errorf("sleeps = %v, want %d × %s", got, tt.wantSleeps, tt.sleep)
			}
			if st.Iterations != tt.wantIterations || st.Sleeps != uint64(tt.wantSleeps) {
				t.Errorf("iterations, sleeps = %d, %d; want %d, %d", st.Iterations, st.Sleeps, tt.wantIterations, tt.wantSleeps)
			}
			if want := time.Duration(tt.wantSleeps) * tt.sleep; st.Slept != want {
				t.Errorf("slept = %s, want %s", st.Slept, want)
			}
			if st.Indexed != uint64(tt.entries) || st.Files != uint64(tt.entries) {
				t.Errorf("indexed, files = %d, %d; want %d", st.Indexed, st.Files, tt.entries)
			}
		})
	}
}

// A slow iteration (30ms per file) is cut by the 200ms threshold after the
// 7th file, as nginx's elapsed >= loader_threshold check does.
func TestThrottleThreshold(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 70, 1000)
	clock := newFakeClock()
	ix := newFakeIndex()
	var perIteration []int
	last := 0
	ix.onAdd = func(int) { clock.advance(30*time.Millisecond, 0) }
	clock.onSleep = func(time.Duration) {
		n := ix.adds
		perIteration = append(perIteration, n-last)
		last = n
	}
	l := newTestLoader(t, sp, ix, Params{Files: 100, Sleep: 50 * time.Millisecond, Threshold: 200 * time.Millisecond}, clock)
	st, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{7, 7, 7, 7, 7, 7, 7, 7, 7, 7}; !slices.Equal(perIteration, want) {
		t.Errorf("files per iteration = %v, want %v", perIteration, want)
	}
	if st.Sleeps != 10 || st.Iterations != 10 || st.Slept != 500*time.Millisecond {
		t.Errorf("sleeps, iterations, slept = %d, %d, %s; want 10, 10, 500ms", st.Sleeps, st.Iterations, st.Slept)
	}
}

// Parameters changed during Run (here from inside the 250th Add) apply
// from the next throttle check on: the one right after that file ends an
// iteration of 50 files.
func TestSetParamsDuringRun(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 1000, 1000)
	clock := newFakeClock()
	ix := newFakeIndex()
	l := newTestLoader(t, sp, ix, Params{Files: 100, Sleep: 50 * time.Millisecond, Threshold: hour}, clock)
	ix.onAdd = func(n int) {
		if n == 250 {
			if err := l.SetParams(Params{Files: 10, Sleep: 5 * time.Millisecond, Threshold: hour}); err != nil {
				t.Error(err)
			}
		}
	}
	st, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 50ms after files 100 and 200; 5ms after 250, 260, ..., 1000.
	want := append(repeat(2, 50*time.Millisecond), repeat(76, 5*time.Millisecond)...)
	if got := clock.Sleeps(); !slices.Equal(got, want) {
		t.Errorf("sleeps = %v\nwant %v", got, want)
	}
	if st.Params.Files != 10 || st.IterationFiles != 10 {
		t.Errorf("stats params = %+v (iteration files %d), want files 10", st.Params, st.IterationFiles)
	}
}

// In CPU mode each pause is c/share - w, and the iteration size is steered
// toward 20ms of CPU: halfway from the current size to the estimate.
func TestCPUMode(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 300, 1000)
	clock := newFakeClock()
	ix := newFakeIndex()
	ix.onAdd = func(int) { clock.advance(2*time.Millisecond, time.Millisecond) }
	l := newTestLoader(t, sp, ix, Params{Files: 1, Sleep: hour, Threshold: hour, CPU: 0.25}, clock)
	st, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Iterations of 100, 60, 40, 30, 25, 23, 22 files; c = k ms, w = 2k ms,
	// so the pause is 4k - 2k = 2k ms.
	var want []time.Duration
	for _, k := range []int{100, 60, 40, 30, 25, 23, 22} {
		want = append(want, time.Duration(2*k)*time.Millisecond)
	}
	if got := clock.Sleeps(); !slices.Equal(got, want) {
		t.Errorf("pauses = %v\nwant %v", got, want)
	}
	if st.CPU != 300*time.Millisecond || st.Iterations != 7 {
		t.Errorf("cpu, iterations = %s, %d; want 300ms, 7", st.CPU, st.Iterations)
	}
	if st.IterationFiles != 21 {
		t.Errorf("iteration files = %d, want 21", st.IterationFiles)
	}
}

// Threshold still cuts an iteration in CPU mode.
func TestCPUModeThreshold(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 20, 1000)
	clock := newFakeClock()
	ix := newFakeIndex()
	ix.onAdd = func(int) { clock.advance(50*time.Millisecond, 10*time.Millisecond) }
	l := newTestLoader(t, sp, ix, Params{Files: 1, Threshold: 200 * time.Millisecond, CPU: 0.5}, clock)
	if _, err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 4 files: c = 40ms, w = 200ms; 40ms/0.5 - 200ms < 0: no pause at all.
	if got := clock.Sleeps(); len(got) != 0 {
		t.Errorf("pauses = %v, want none", got)
	}
	if st := l.Stats(); st.Iterations != 5 {
		t.Errorf("iterations = %d, want 5", st.Iterations)
	}
}

func TestCPUPause(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		c, w  time.Duration
		share float64
		want  time.Duration
	}{
		{10 * ms, 10 * ms, 0.5, 10 * ms},
		{10 * ms, 10 * ms, 1, 0},
		{10 * ms, 40 * ms, 0.1, 60 * ms},
		{0, 10 * ms, 0.1, 0},
		{20 * ms, 20 * ms, 0.25, 60 * ms},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("c=%s,w=%s,share=%v", tt.c, tt.w, tt.share), func(t *testing.T) {
			if got := cpuPause(tt.c, tt.w, tt.share); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNextCPUFiles(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		cur   float64
		files int
		c     time.Duration
		want  float64
	}{
		{100, 100, 20 * ms, 100},
		{100, 100, 100 * ms, 60},
		{100, 100, 0, 150},
		{100, 10, 1 * ms, 150},
		{1, 1, time.Second, 1},
		{1e6, 1e6, ms, 1e6},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("cur=%v,files=%d,c=%s", tt.cur, tt.files, tt.c), func(t *testing.T) {
			if got := nextCPUFiles(tt.cur, tt.files, tt.c); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// pauseClock is the real clock whose Sleep says when it begins.
type pauseClock struct {
	realClock
	sleeping chan time.Duration
}

func (c pauseClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case c.sleeping <- d:
	default:
	}
	return c.realClock.Sleep(ctx, d)
}

// runLongPause starts a walk of 10 entries that pauses MaxSleep after each
// and returns once it is in its first pause; done yields Run's result.
func runLongPause(t *testing.T, ctx context.Context) (*Loader, <-chan error, <-chan Stats) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 10, 1000)
	clock := pauseClock{newRealClock(), make(chan time.Duration, 1)}
	l := newTestLoader(t, sp, newFakeIndex(), Params{Files: 1, Sleep: MaxSleep, Threshold: hour}, clock)
	errc, stc := make(chan error, 1), make(chan Stats, 1)
	go func() {
		st, err := l.Run(ctx)
		errc <- err
		stc <- st
	}()
	if d := <-clock.sleeping; d != MaxSleep {
		t.Fatalf("first pause %s, want %s", d, MaxSleep)
	}
	return l, errc, stc
}

func TestSetParamsEndsALongPause(t *testing.T) {
	l, errc, stc := runLongPause(t, context.Background())
	if err := l.SetParams(Params{Files: 1, Sleep: 0, Threshold: hour}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if st := <-stc; err != nil || st.Files != 10 {
			t.Fatalf("walk after loader_sleep=0: %v, %d files, want 10", err, st.Files)
		}
	case <-time.After(MaxSleep / 2): // a guard: the walk paused 9 × MaxSleep otherwise
		t.Fatal("the walk is still in its pause after SetParams(Sleep: 0)")
	}
}

func TestCancelEndsALongPause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, errc, _ := runLongPause(t, ctx)
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Fatalf("walk after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(MaxSleep / 2):
		t.Fatal("the walk is still in its pause after its context ended")
	}
}

// TestEstimateLoad checks the loader formula on the design's figures:
// 3 × 16 × 256 × 500 entries take 3,072 s of sleep with nginx's defaults.
func TestEstimateLoad(t *testing.T) {
	const files = 3 * 16 * 256 * 500
	tests := []struct {
		name           string
		files          int
		sleep, thresh  time.Duration
		cpu, work      float64
		wantIterations uint64
		wantLoad       float64
	}{
		{"nginx defaults", 100, 50 * time.Millisecond, 200 * time.Millisecond, 0, 0, 61440, 3072},
		{"loader_files=1000 plus 20s walk", 1000, 50 * time.Millisecond, 200 * time.Millisecond, 0, 20, 6144, 307.2 + 20},
		{"threshold cuts iterations", 1e6, 50 * time.Millisecond, 200 * time.Millisecond, 0, 20, 100, 5 + 20},
		{"unthrottled", 100, 0, 200 * time.Millisecond, 0, 20, 61440, 20},
		{"cpu 25%", 0, 0, 200 * time.Millisecond, 0.25, 20, 0, 80},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Params{Files: tc.files, Sleep: tc.sleep, Threshold: tc.thresh, CPU: tc.cpu}
			it, _, load := p.EstimateLoad(files, tc.work)
			if it != tc.wantIterations || math.Abs(load-tc.wantLoad) > 1e-6 {
				t.Errorf("iterations %d, load %.3fs; want %d, %.3fs", it, load, tc.wantIterations, tc.wantLoad)
			}
		})
	}
	if it, sleep, load := DefaultParams().EstimateLoad(0, 5); it != 0 || sleep != 0 || load != 0 {
		t.Errorf("empty spool: %d iterations, %.3fs sleep, %.3fs load; want nothing", it, sleep, load)
	}
}
