package loader

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/internal/optcheck"
)

// Params are the loader's throttle settings, named after nginx's
// proxy_cache_path loader_* parameters.
type Params struct {
	// Files is nginx's loader_files: the most files of one iteration.
	// Not used in CPU mode.
	Files int `json:"files"`
	// Sleep is nginx's loader_sleep: the pause between iterations. Zero runs
	// unthrottled. Not used in CPU mode.
	Sleep time.Duration `json:"sleep_seconds"`
	// Threshold is nginx's loader_threshold: the longest wall time of one
	// iteration, in both modes.
	Threshold time.Duration `json:"threshold_seconds"`
	// CPU, when above zero, selects CPU mode: the loader holds itself to
	// this share of one core (0.25 = 25%), and Files and Sleep are not used.
	CPU float64 `json:"cpu"`
}

// Upper bounds of Sleep and Threshold: a pause or an iteration longer than
// these holds a start-up walk (and the flushes and graphs waiting for it)
// for no gain; nginx's defaults are 50ms and 200ms.
const (
	MaxSleep     = time.Minute
	MaxThreshold = 10 * time.Second
)

// DefaultParams returns nginx's defaults: 100 files, 50ms sleep, 200ms
// threshold, and CPU mode off.
func DefaultParams() Params {
	return Params{Files: 100, Sleep: 50 * time.Millisecond, Threshold: 200 * time.Millisecond}
}

// Validate reports the first parameter out of range, as a
// *optcheck.FieldError named as nginx names it: "loader_files must be >= 1,
// got 0".
func (p Params) Validate() error {
	switch {
	case p.Files < 1:
		return optcheck.Errorf("loader_files", fmt.Sprintf("must be >= 1, got %d", p.Files))
	case p.Sleep < 0:
		return optcheck.Errorf("loader_sleep", fmt.Sprintf("must be >= 0, got %s", p.Sleep))
	case p.Sleep > MaxSleep:
		return optcheck.Errorf("loader_sleep", fmt.Sprintf("must be at most %s, got %s", MaxSleep, p.Sleep))
	case p.Threshold <= 0:
		return optcheck.Errorf("loader_threshold", fmt.Sprintf("must be > 0, got %s", p.Threshold))
	case p.Threshold > MaxThreshold:
		return optcheck.Errorf("loader_threshold", fmt.Sprintf("must be at most %s, got %s", MaxThreshold, p.Threshold))
	case p.CPU != 0 && !(p.CPU >= MinCPU && p.CPU <= 1):
		return optcheck.Errorf("loader_cpu", fmt.Sprintf("must be between 0 and 1 (0%% to 100%%), and 0 (off) or at least %v (%v%%), got %v", MinCPU, MinCPU*100, p.CPU))
	}
	return nil
}

// CPUMode reports whether the loader throttles by CPU share (CPU > 0)
// rather than by Files and Sleep.
func (p Params) CPUMode() bool { return p.CPU > 0 }

// EstimateLoad is the time a walk of a spool of files entry files takes
// under p when the walk's own work (reading the directories, indexing)
// takes workSeconds: iterations of at most p.Files files, or of
// p.Threshold of work, with a pause of p.Sleep after each, nginx's
// (files / loader_files) × loader_sleep; in CPU mode the work stretched to
// p.CPU of one core (no iterations counted). loadSeconds is the sleep plus
// the work. An empty spool takes nothing.
func (p Params) EstimateLoad(files uint64, workSeconds float64) (iterations uint64, sleepSeconds, loadSeconds float64) {
	if files == 0 {
		return 0, 0, 0
	}
	if p.CPUMode() {
		loadSeconds = workSeconds / p.CPU
		return 0, loadSeconds - workSeconds, loadSeconds
	}
	iterations = uint64(math.Ceil(float64(files) / float64(max(p.Files, 1))))
	if th := p.Threshold.Seconds(); th > 0 {
		iterations = max(iterations, uint64(math.Ceil(workSeconds/th)))
	}
	sleepSeconds = float64(iterations) * p.Sleep.Seconds()
	return iterations, sleepSeconds, sleepSeconds + workSeconds
}

// MinCPU is the smallest CPU share besides 0 (off): at 0.1% of a core the
// loader already sleeps 1,000 times each iteration's CPU time; a share such
// as 5e-324 was accepted and meant a pause of centuries.
const MinCPU = 0.001

// ParseCPU parses a share of one core written as a percentage ("25%") or a
// fraction ("0.25"). It accepts 0 (CPU mode off, also written -0) and
// MinCPU (0.1%) up to 100% / 1.
func ParseCPU(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if rest, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(rest), 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("parse loader cpu share %q: %w", s, err)
	}
	v /= scale
	if v == 0 {
		return 0, nil // -0 too: no sign to print back
	}
	if !(v >= MinCPU && v <= 1) {
		return 0, fmt.Errorf("parse loader cpu share %q: want 0 (off) or %v%% to 100%% (%v to 1)", s, MinCPU*100, MinCPU)
	}
	return v, nil
}
