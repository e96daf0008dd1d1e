package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestParamsValidate(t *testing.T) {
	ok := DefaultParams()
	tests := []struct {
		p    Params
		want string // error fragment; "" = valid
	}{
		{ok, ""},
		{Params{Files: 1, Sleep: 0, Threshold: 1, CPU: 1}, ""},
		{Params{Files: 0, Sleep: ok.Sleep, Threshold: ok.Threshold}, "loader_files must be >= 1, got 0"},
		{Params{Files: 1, Sleep: -1, Threshold: ok.Threshold}, "loader_sleep must be >= 0"},
		{Params{Files: 1, Threshold: 0}, "loader_threshold must be > 0"},
		{Params{Files: 1, Sleep: MaxSleep, Threshold: MaxThreshold}, ""},
		{Params{Files: 1, Sleep: time.Hour, Threshold: ok.Threshold}, "loader_sleep must be at most 1m0s, got 1h0m0s"},
		{Params{Files: 1, Sleep: 2562047 * time.Hour, Threshold: ok.Threshold}, "loader_sleep must be at most 1m0s"},
		{Params{Files: 1, Threshold: MaxThreshold + 1}, "loader_threshold must be at most 10s"},
		{Params{Files: 1, Threshold: 1, CPU: 1.5}, "loader_cpu must be between 0 and 1"},
		{Params{Files: 1, Threshold: 1, CPU: -0.1}, "loader_cpu must be between 0 and 1"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.p), func(t *testing.T) {
			err := tt.p.Validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseCPU(t *testing.T) {
	tests := []struct {
		in    string
		want  float64
		isErr bool
	}{
		{"25%", 0.25, false}, {"0.25", 0.25, false}, {"100%", 1, false}, {"1", 1, false},
		{"0", 0, false}, {"0%", 0, false}, {" 50 % ", 0.5, false}, {"12.5%", 0.125, false},
		{"", 0, true}, {"%", 0, true}, {"150%", 0, true}, {"2", 0, true}, {"-1%", 0, true},
		{"NaN", 0, true}, {"abc", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCPU(tt.in)
			if (err != nil) != tt.isErr || got != tt.want {
				t.Errorf("ParseCPU(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.isErr)
			}
		})
	}
}

func TestNewAndSetParamsRejectBadParams(t *testing.T) {
	sp := openSpool(t, "1:2")
	opts := DefaultOptions()
	opts.Params.Files = 0
	if _, err := New(sp, newFakeIndex(), opts); err == nil || !strings.Contains(err.Error(), "loader_files") {
		t.Errorf("New with loader_files 0: err = %v", err)
	}
	l := newTestLoader(t, sp, newFakeIndex(), DefaultParams(), nil)
	if err := l.SetParams(Params{Files: 5, Threshold: 0}); err == nil {
		t.Error("SetParams accepted loader_threshold 0")
	}
	if l.Params() != DefaultParams() {
		t.Errorf("params changed by a rejected SetParams: %+v", l.Params())
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name      string
		cancelAt  int // Add number after which to cancel; 0 = in the first sleep
		wantFiles uint64
	}{
		{"between-files", 50, 50},
		{"during-sleep", 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := openSpool(t, "1:2")
			putEntries(t, sp, 1000, 1000)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clock := newFakeClock()
			ix := newFakeIndex()
			ix.onAdd = func(n int) {
				if n == tt.cancelAt {
					cancel()
				}
			}
			if tt.cancelAt == 0 {
				clock.onSleep = func(time.Duration) { cancel() }
			}
			l := newTestLoader(t, sp, ix, Params{Files: 100, Sleep: time.Second, Threshold: hour}, clock)
			st, err := l.Run(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run() error = %v, want context.Canceled", err)
			}
			if st.Files != tt.wantFiles || st.Running || st.Progress >= 1 {
				t.Errorf("files %d, running %v, progress %v; want %d files, stopped, progress < 1", st.Files, st.Running, st.Progress, tt.wantFiles)
			}
		})
	}
}

// Run refuses to run concurrently with itself; Stats during a Run shows it
// running with progress between 0 and 1.
func TestRunWhileRunning(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 500, 1000)
	clock := newFakeClock()
	ix := newFakeIndex()
	l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, clock)
	var during Stats
	var nested error
	last := -1.0
	ix.onAdd = func(n int) {
		clock.advance(time.Millisecond, 0)
		s := l.Stats()
		if s.Progress < last {
			t.Errorf("progress went back from %v to %v", last, s.Progress)
		}
		last = s.Progress
		if n == 250 {
			during = s
			_, nested = l.Run(context.Background())
		}
	}
	if _, err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(nested, ErrRunning) {
		t.Errorf("nested Run() error = %v, want ErrRunning", nested)
	}
	if !during.Running || during.Progress <= 0 || during.Progress >= 1 || during.ETA <= 0 || during.Rate != 996 {
		t.Errorf("stats during the walk = %+v; want running, 0 < progress < 1, an ETA, rate 996/s (249 files counted in 250ms)", during)
	}
	if got := l.Stats(); got.Rate != 1000 || got.Files != 500 {
		t.Errorf("final rate, files = %v, %d; want 1000/s, 500", got.Rate, got.Files)
	}
}

func TestProgressLog(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 100, 1000)
	clock := newFakeClock()
	ix := newFakeIndex()
	ix.onAdd = func(int) { clock.advance(time.Second, 0) }
	var buf bytes.Buffer
	opts := DefaultOptions()
	opts.Params = Params{Files: 100, Threshold: hour}
	opts.Clock, opts.Logger = clock, slog.New(slog.NewTextHandler(&buf, nil))
	l, err := New(sp, ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// 100 files, one second each, a line every 5s: at 5s, 10s, ..., 100s.
	if n := strings.Count(out, "msg=\"loader progress\""); n != 20 {
		t.Errorf("%d progress lines, want 20:\n%s", n, out)
	}
	if !strings.Contains(out, "msg=\"loader finished\"") || !strings.Contains(out, "indexed=100") {
		t.Errorf("no summary line with indexed=100:\n%s", out)
	}
}

// The walk of a leaf directory allocates nothing per entry.
func TestWalkAllocations(t *testing.T) {
	allocs := func(n int) float64 {
		sp := openSpool(t, "1")
		refs := putEntries(t, sp, n, 1)
		ix := newFakeIndex()
		for _, r := range refs {
			ix.refs[r] = true // Existing: the fake index allocates nothing
		}
		l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
		return testing.AllocsPerRun(3, func() {
			if _, err := l.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(100), allocs(2000)
	if large-small > 5 {
		t.Errorf("a walk of 2000 entries allocates %v times, of 100 entries %v: allocations per entry", large, small)
	}
}

// FuzzParseCPU: --loader-cpu accepts a share in [0, 1], never NaN, and an
// error names the value.
func FuzzParseCPU(f *testing.F) {
	for _, s := range []string{"25%", "0.25", "0", "100%", "1", " 50 % ", "NaN", "-0", "1e-3", "101%", "0x1p-2", "Inf%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseCPU(s)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("error %q does not name the value", err)
			}
			return
		}
		if !(v >= 0 && v <= 1) {
			t.Fatalf("ParseCPU(%q) = %v", s, v)
		}
		if err := (Params{Files: 1, Threshold: time.Second, CPU: v}).Validate(); err != nil {
			t.Fatalf("ParseCPU(%q) = %v, which Validate refuses: %v", s, v, err)
		}
	})
}
