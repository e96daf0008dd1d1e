package admin

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// jsonTime is a time in JSON: RFC 3339 in UTC, or null when zero.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return []byte(strconv.Quote(tt.UTC().Format(time.RFC3339Nano))), nil
}

// seconds is a duration in JSON: a number of seconds.
type seconds time.Duration

func (d seconds) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, time.Duration(d).Seconds(), 'f', -1, 64), nil
}

type statusDoc struct {
	Version         string            `json:"version"`
	Started         jsonTime          `json:"started"`
	Now             jsonTime          `json:"now"`
	Uptime          seconds           `json:"uptime_seconds"`
	Settings        map[string]string `json:"settings"`
	Loader          loaderDoc         `json:"loader"`
	Index           indexDoc          `json:"index"`
	Spool           spoolDoc          `json:"spool"`
	Writer          writerDoc         `json:"writer"`
	WriterErrors    []writerErrorDoc  `json:"writer_errors"`
	Orphans         orphansDoc        `json:"orphans"`
	LastCycle       *cycleDoc         `json:"last_cycle"`
	PollInterval    seconds           `json:"poll_interval_seconds"`
	TargetsByHealth map[Health]int    `json:"targets_by_health"`
	Targets         []targetDoc       `json:"targets"`
	Disk            diskDoc           `json:"disk"`
}

type loaderParamsDoc struct {
	Files     int     `json:"files"`
	Sleep     seconds `json:"sleep_seconds"`
	Threshold seconds `json:"threshold_seconds"`
	CPU       float64 `json:"cpu"`
	CPUMode   bool    `json:"cpu_mode"`
}

type loaderDoc struct {
	Running        bool            `json:"running"`
	Started        jsonTime        `json:"started"`
	Finished       jsonTime        `json:"finished"`
	NextRescan     jsonTime        `json:"next_rescan"`
	Progress       float64         `json:"progress"`
	ETA            seconds         `json:"eta_seconds"`
	Rate           float64         `json:"rate_files_per_second"`
	LeafDirs       int             `json:"leaf_dirs"`
	Files          uint64          `json:"files"`
	Indexed        uint64          `json:"indexed"`
	Existing       uint64          `json:"existing"`
	Full           uint64          `json:"full"`
	Quarantined    uint64          `json:"quarantined"`
	TempRemoved    uint64          `json:"temp_removed"`
	Foreign        uint64          `json:"foreign"`
	Errors         uint64          `json:"errors"`
	Iterations     uint64          `json:"iterations"`
	Sleeps         uint64          `json:"sleeps"`
	Slept          seconds         `json:"slept_seconds"`
	CPU            seconds         `json:"cpu_seconds"`
	IterationFiles int             `json:"iteration_files"`
	Params         loaderParamsDoc `json:"params"`
	Warmup         warmupDoc       `json:"warmup"`
}

// warmupDoc is the leaf readiness after a start: keys of the leaves done
// may be written while the walk goes on.
type warmupDoc struct {
	LeavesReady int    `json:"leaves_ready"`
	LeavesTotal int    `json:"leaves_total"`
	OnDemand    uint64 `json:"leaves_walked_on_demand"`
	Complete    bool   `json:"complete"`
}

type indexDoc struct {
	Shards        int      `json:"shards"`
	Keys          int      `json:"keys"`
	Entries       int      `json:"entries"`
	InFlight      int      `json:"in_flight"`
	Backoff       int      `json:"backoff_keys"`
	Bytes         int64    `json:"bytes"`
	MaxBytes      int64    `json:"capacity_bytes"`
	Fill          float64  `json:"fill_ratio"`
	Overflowed    bool     `json:"overflowed"`
	Held          int      `json:"held_keys"`
	Added         uint64   `json:"added"`
	Duplicates    uint64   `json:"duplicates"`
	Full          uint64   `json:"full"`
	Collisions    uint64   `json:"collisions"`
	Taken         uint64   `json:"taken"`
	Applied       uint64   `json:"applied"`
	Requeued      uint64   `json:"requeued"`
	OldestPending jsonTime `json:"oldest_pending"`
}

type spoolDoc struct {
	Written       uint64 `json:"written"`
	WrittenBytes  uint64 `json:"written_bytes"`
	WriteErrors   uint64 `json:"write_errors"`
	Read          uint64 `json:"read"`
	ReadErrors    uint64 `json:"read_errors"`
	Corrupt       uint64 `json:"corrupt"`
	Removed       uint64 `json:"removed"`
	Quarantined   uint64 `json:"quarantined"`
	TempRemoved   uint64 `json:"temp_removed"`
	Syncs         uint64 `json:"syncs"`
	NoAtimeDenied uint64 `json:"noatime_denied"`

	SegmentsCreated uint64 `json:"segments_created"`
	Appended        uint64 `json:"appended"`
	SegmentsClosed  uint64 `json:"segments_closed"`
	SegmentsRead    uint64 `json:"segments_read"`
	TempForeign     uint64 `json:"temp_foreign"`
}

type writerDoc struct {
	QueueLength           int               `json:"queue_length"`
	EntriesPending        int               `json:"entries_pending"`
	InFlight              int               `json:"in_flight"`
	BackingOff            int               `json:"backing_off"`
	TargetsFailing        int               `json:"targets_failing"`
	OldestPendingAge      seconds           `json:"oldest_pending_age_seconds"`
	UpdateCalls           uint64            `json:"update_calls"`
	EntriesWritten        uint64            `json:"entries_written"`
	ValuesWritten         uint64            `json:"values_written"`
	SkippedAlreadyApplied uint64            `json:"skipped_already_applied"`
	Vanished              uint64            `json:"vanished"`
	Quarantined           uint64            `json:"quarantined"`
	QuarantinedFuture     uint64            `json:"quarantined_future"`
	QuarantinedStale      uint64            `json:"quarantined_stale"`
	AwaitingRemoval       int               `json:"targets_awaiting_removal"`
	RemoveErrors          uint64            `json:"remove_errors"`
	RRDSyncs              uint64            `json:"rrd_syncs"`
	RRDSyncErrors         uint64            `json:"rrd_sync_errors"`
	RemovalsPending       int               `json:"removals_pending"`
	Creates               uint64            `json:"creates"`
	Backoffs              uint64            `json:"backoffs"`
	FlushesPriority       uint64            `json:"flushes_priority"`
	Graphs                uint64            `json:"graphs"`
	Errors                map[string]uint64 `json:"errors"`
}

type writerErrorDoc struct {
	Target   string   `json:"target"`
	Path     string   `json:"path"`
	Kind     string   `json:"kind"`
	Error    string   `json:"error"`
	At       jsonTime `json:"at"`
	Failures int      `json:"failures"`
	RetryAt  jsonTime `json:"retry_at"`
}

type cycleDoc struct {
	Seq             uint64   `json:"seq"`
	Start           jsonTime `json:"start"`
	Duration        seconds  `json:"duration_seconds"`
	Devices         int      `json:"devices"`
	OK              int      `json:"ok"`
	Failed          int      `json:"failed"`
	Skipped         int      `json:"skipped"`
	Overrun         int      `json:"overrun"`
	Values          int      `json:"values"`
	Unknown         int      `json:"unknown"`
	Discontinuities int      `json:"discontinuities"`
	WriteErrors     int      `json:"write_errors"`
	IndexDeferred   int      `json:"index_deferred"`
	Timeouts        int      `json:"timeouts"`
	Malformed       int      `json:"malformed"`
	AgentErrors     int      `json:"agent_errors"`
	OtherErrors     int      `json:"other_errors"`
	WrongTypes      int      `json:"wrong_types"`
}

type targetDoc struct {
	Name                string   `json:"name"`
	Profile             string   `json:"profile"`
	Address             string   `json:"address"`
	Health              Health   `json:"health"`
	LastPoll            jsonTime `json:"last_poll"`
	LastSuccess         jsonTime `json:"last_success"`
	LastError           string   `json:"last_error"`
	LastErrorTime       jsonTime `json:"last_error_time"`
	RTT                 seconds  `json:"rtt_seconds"`
	ConsecutiveFailures int      `json:"consecutive_failures"`
	SkipCycles          int      `json:"skip_cycles"`
	Polls               uint64   `json:"polls"`
	Failures            uint64   `json:"failures"`
	WriteError          string   `json:"write_error"`
	WriteErrorKind      string   `json:"write_error_kind"`
}

// MarshalJSON renders the /status document: snake_case names, times as
// RFC 3339 strings in UTC (null when unknown), durations as float seconds in
// fields ending in _seconds, and "uptime_seconds" at the top. Top-level
// members: version, started, now, uptime_seconds, settings, loader, index,
// spool, writer, writer_errors, orphans (count and targets: keys with
// entries in the spool but no profile and no RRD file), last_cycle (null before the first cycle),
// poll_interval_seconds, targets_by_health, targets and disk (the devices
// behind the directories with their iostat -x rates, the process's
// /proc/self/io, and the I/O of poll cycles and RRD updates).
func (s Status) MarshalJSON() ([]byte, error) {
	return json.Marshal(s.doc())
}

func (s Status) doc() statusDoc {
	now := s.Now
	if now.IsZero() {
		now = time.Now()
	}
	d := statusDoc{
		Version: s.Version, Started: jsonTime(s.Started), Now: jsonTime(now),
		Settings:        s.Settings,
		Loader:          loaderDocOf(s.Loader, s.LoaderNextRescan),
		Index:           indexDocOf(s.Index, s.IndexOverflowed),
		Spool:           spoolDocOf(s.Spool),
		Writer:          writerDocOf(s.Writer),
		WriterErrors:    make([]writerErrorDoc, 0, len(s.WriterErrors)),
		Orphans:         orphansDocOf(s.WriterErrors),
		LastCycle:       cycleDocOf(s.LastCycle),
		PollInterval:    seconds(s.PollInterval),
		TargetsByHealth: map[Health]int{},
		Targets:         make([]targetDoc, 0, len(s.Targets)),
		Disk:            diskDocOf(s.Disk),
	}
	if !s.Started.IsZero() {
		d.Uptime = seconds(now.Sub(s.Started))
	}
	if d.Settings == nil {
		d.Settings = map[string]string{}
	}
	for _, e := range s.WriterErrors {
		d.WriterErrors = append(d.WriterErrors, writerErrorDoc{
			Target: e.Key, Path: e.Path, Kind: e.Kind.String(), Error: e.Err,
			At: jsonTime(e.At), Failures: e.Failures, RetryAt: jsonTime(e.RetryAt),
		})
	}
	for _, h := range healthStates {
		d.TargetsByHealth[h] = 0
	}
	for _, t := range s.Targets {
		d.TargetsByHealth[t.Health]++
		d.Targets = append(d.Targets, targetDocOf(t))
	}
	return d
}

func loaderDocOf(l loader.Stats, next time.Time) loaderDoc {
	return loaderDoc{
		Running: l.Running, Started: jsonTime(l.Started), Finished: jsonTime(l.Finished),
		NextRescan: jsonTime(next), Progress: l.Progress, ETA: seconds(l.ETA), Rate: l.Rate,
		LeafDirs: l.LeafDirs, Files: l.Files, Indexed: l.Indexed, Existing: l.Existing,
		Full: l.Full, Quarantined: l.Quarantined, TempRemoved: l.TempRemoved,
		Foreign: l.Foreign, Errors: l.Errors, Iterations: l.Iterations, Sleeps: l.Sleeps,
		Slept: seconds(l.Slept), CPU: seconds(l.CPU), IterationFiles: l.IterationFiles,
		Params: loaderParamsDoc{
			Files: l.Params.Files, Sleep: seconds(l.Params.Sleep),
			Threshold: seconds(l.Params.Threshold), CPU: l.Params.CPU, CPUMode: l.Params.CPUMode(),
		},
		Warmup: warmupDoc{LeavesReady: l.Warmup.LeavesDone, LeavesTotal: l.Warmup.LeavesTotal,
			OnDemand: l.Warmup.OnDemand, Complete: l.Warmup.All},
	}
}

func indexDocOf(x shm.Stats, overflowed bool) indexDoc {
	return indexDoc{
		Shards: x.Shards, Keys: x.Keys, Entries: x.Entries, InFlight: x.InFlight,
		Backoff: x.Backoff, Bytes: x.Bytes, MaxBytes: x.MaxBytes, Fill: ratio(x.Bytes, x.MaxBytes),
		Overflowed: overflowed, Held: x.Held, Added: x.Added, Duplicates: x.Duplicates, Full: x.Full,
		Collisions: x.Collisions, Taken: x.Taken, Applied: x.Applied, Requeued: x.Requeued,
		OldestPending: jsonTime(x.OldestPending),
	}
}

func spoolDocOf(s spool.Stats) spoolDoc {
	return spoolDoc{
		Written: s.Written, WrittenBytes: s.WrittenBytes, WriteErrors: s.WriteErrors,
		Read: s.Read, ReadErrors: s.ReadErrors, Corrupt: s.Corrupt, Removed: s.Removed,
		Quarantined: s.Quarantined, TempRemoved: s.TempRemoved, Syncs: s.Syncs,
		NoAtimeDenied: s.NoAtimeDenied, SegmentsCreated: s.SegmentsCreated, Appended: s.Appended,
		SegmentsClosed: s.SegmentsClosed, SegmentsRead: s.SegmentsRead, TempForeign: s.TempForeign,
	}
}

func writerDocOf(w rrdwriter.Stats) writerDoc {
	d := writerDoc{
		QueueLength: w.QueueLength, EntriesPending: w.EntriesPending, InFlight: w.InFlight,
		BackingOff: w.BackingOff, TargetsFailing: w.TargetsFailing,
		OldestPendingAge: seconds(w.OldestPendingAge), UpdateCalls: w.UpdateCalls,
		EntriesWritten: w.EntriesWritten, ValuesWritten: w.ValuesWritten,
		SkippedAlreadyApplied: w.SkippedAlreadyApplied, Vanished: w.Vanished,
		Quarantined: w.Quarantined, QuarantinedFuture: w.QuarantinedFuture, QuarantinedStale: w.QuarantinedStale,
		AwaitingRemoval: w.KeysAwaitingRemoval, RemoveErrors: w.RemoveErrors, Creates: w.Creates,
		RRDSyncs: w.RRDSyncs, RRDSyncErrors: w.RRDSyncErrors, RemovalsPending: w.RemovalsPending,
		Backoffs: w.Backoffs, FlushesPriority: w.FlushesPriority, Graphs: w.Graphs,
		Errors: make(map[string]uint64, len(w.Errors)),
	}
	for k, n := range w.Errors {
		d.Errors[rrdwriter.ErrorKind(k).String()] = n
	}
	return d
}

func cycleDocOf(c *poller.CycleStats) *cycleDoc {
	if c == nil {
		return nil
	}
	return &cycleDoc{
		Seq: c.Seq, Start: jsonTime(c.Start), Duration: seconds(c.Duration), Devices: c.Devices,
		OK: c.OK, Failed: c.Failed, Skipped: c.Skipped, Overrun: c.Overrun, Values: c.Values,
		Unknown: c.Unknown, Discontinuities: c.Discontinuities, WriteErrors: c.WriteErrors,
		IndexDeferred: c.IndexDeferred, Timeouts: c.Timeouts, Malformed: c.Malformed, AgentErrors: c.AgentErrors,
		OtherErrors: c.OtherErrors, WrongTypes: c.WrongTypes,
	}
}

func targetDocOf(t TargetStatus) targetDoc {
	return targetDoc{
		Name: t.Name, Profile: t.Profile, Address: t.Address, Health: t.Health,
		LastPoll: jsonTime(t.LastPoll), LastSuccess: jsonTime(t.LastSuccess),
		LastError: t.LastError, LastErrorTime: jsonTime(t.LastErrorTime), RTT: seconds(t.RTT),
		ConsecutiveFailures: t.ConsecutiveFailures, SkipCycles: t.SkipCycles,
		Polls: t.Polls, Failures: t.Failures, WriteError: t.WriteError, WriteErrorKind: t.WriteErrorKind,
	}
}

// ratio is a/b, or 0 when b is not positive.
func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// orphansDoc lists the keys whose entries wait in the spool for a profile.
type orphansDoc struct {
	Count   int      `json:"count"`
	Targets []string `json:"targets"`
}

func orphansDocOf(errs []rrdwriter.TargetError) orphansDoc {
	keys := rrdwriter.Orphans(errs)
	if keys == nil {
		keys = []string{}
	}
	return orphansDoc{Count: len(keys), Targets: keys}
}
