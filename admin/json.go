package admin

import (
	"encoding/json"
	"time"

	"github.com/spoold/spoold/internal/jsonfmt"
	"github.com/spoold/spoold/rrdwriter"
)

// MarshalJSON renders the /status document: snake_case names, times as
// RFC 3339 strings in UTC (null when unknown), durations as float seconds in
// fields ending in _seconds, and "uptime_seconds" at the top. Top-level
// members: version, started, now, uptime_seconds, settings, loader, index,
// spool, writer (with forward: the --forward peer's state, when set), writer_errors, orphans (count and targets: keys with
// entries in the spool but no profile and no RRD file), last_cycle (null before the first cycle),
// shard (the --shard K/N, the targets it polls and the targets in the file),
// poll_interval_seconds, targets_by_health, targets, disk (the devices
// behind the directories with their iostat -x rates, the process's
// /proc/self/io, and the I/O of poll cycles and RRD updates) and landlock
// (mode, abi: whether the kernel confines the daemon's file access).
//
// Each member is named once: by the struct tag of the field it shows
// (here, in Status, TargetStatus and DiskStatus, and in the packages' Stats
// types), times and durations rendered by jsonfmt's rules, or, for the
// members computed from the fields, below and in the MarshalJSON of the
// field's type.
func (s Status) MarshalJSON() ([]byte, error) {
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	index, err := joinJSON(s.Index, struct {
		Overflowed bool `json:"overflowed"`
	}{s.IndexOverflowed})
	if err != nil {
		return nil, err
	}
	ld, err := joinJSON(s.Loader, struct {
		NextRescan jsonfmt.Time `json:"next_rescan"`
	}{jsonfmt.Time(s.LoaderNextRescan)})
	if err != nil {
		return nil, err
	}
	byHealth := make(map[Health]int, len(healthStates))
	for _, h := range healthStates {
		byHealth[h] = 0
	}
	for _, t := range s.Targets {
		byHealth[t.Health]++
	}
	return jsonfmt.Marshal(s, struct {
		Uptime          jsonfmt.Seconds         `json:"uptime_seconds"`
		Settings        map[string]string       `json:"settings"`
		Loader          json.RawMessage         `json:"loader"`
		Index           json.RawMessage         `json:"index"`
		WriterErrors    []rrdwriter.TargetError `json:"writer_errors"`
		Orphans         orphansDoc              `json:"orphans"`
		TargetsByHealth map[Health]int          `json:"targets_by_health"`
		Targets         []TargetStatus          `json:"targets"`
	}{
		Uptime: jsonfmt.Seconds(s.uptime()), Settings: nonNilMap(s.Settings), Loader: ld, Index: index,
		WriterErrors: nonNil(s.WriterErrors), Orphans: orphansDocOf(s.WriterErrors),
		TargetsByHealth: byHealth, Targets: nonNil(s.Targets),
	})
}

// MarshalJSON renders a target by its tags (jsonfmt's times and durations).
func (t TargetStatus) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(t) }

// joinJSON is the members of a's JSON object followed by those of b's.
func joinJSON(a, b any) (json.RawMessage, error) {
	ja, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	return jsonfmt.Join(ja, jb)
}

// nonNil is s, or an empty slice (JSON [], not null) for nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// orphansDoc lists the keys whose entries wait in the spool for a profile.
type orphansDoc struct {
	Count   int      `json:"count"`
	Targets []string `json:"targets"`
}

func orphansDocOf(errs []rrdwriter.TargetError) orphansDoc {
	keys := nonNil(rrdwriter.Orphans(errs))
	return orphansDoc{Count: len(keys), Targets: keys}
}

// uptime is Now - Started, or 0 before the start is known.
func (s Status) uptime() time.Duration {
	if s.Started.IsZero() {
		return 0
	}
	return s.Now.Sub(s.Started)
}
