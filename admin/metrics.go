package admin

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/rrdwriter"
)

// metricsContentType is the Prometheus text exposition format, version 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// expo writes the Prometheus text format: a family's HELP and TYPE lines,
// then its samples, each family once.
type expo struct {
	b bytes.Buffer
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// family starts a metric family. typ is "gauge" or "counter"; a counter's
// name ends in _total.
func (e *expo) family(name, typ, help string) {
	e.b.WriteString("# HELP " + name + " " + helpEscaper.Replace(help) + "\n")
	e.b.WriteString("# TYPE " + name + " " + typ + "\n")
}

// sample writes one sample; labels are name, value pairs.
func (e *expo) sample(name string, v float64, labels ...string) {
	e.b.WriteString(name)
	if len(labels) > 0 {
		e.b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.b.WriteString(labels[i] + `="` + labelEscaper.Replace(labels[i+1]) + `"`)
		}
		e.b.WriteByte('}')
	}
	e.b.WriteByte(' ')
	e.b.WriteString(formatFloat(v))
	e.b.WriteByte('\n')
}

func (e *expo) gauge(name, help string, v float64) {
	e.family(name, "gauge", help)
	e.sample(name, v)
}

func (e *expo) counter(name, help string, v uint64) {
	e.family(name, "counter", help)
	e.sample(name, float64(v))
}

func formatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds is t as Unix seconds, or 0 when t is zero.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// writeMetrics renders s in the Prometheus text format.
func writeMetrics(s Status, now time.Time) []byte {
	var e expo
	e.family("spoold_build_info", "gauge", "Always 1; the version label is spoold's version.")
	e.sample("spoold_build_info", 1, "version", s.Version)
	e.gauge("spoold_start_time_seconds", "When the daemon started, Unix seconds.", unixSeconds(s.Started))
	uptime := 0.0
	if !s.Started.IsZero() {
		uptime = now.Sub(s.Started).Seconds()
	}
	e.gauge("spoold_uptime_seconds", "Seconds since the daemon started.", uptime)
	loaderMetrics(&e, s)
	indexMetrics(&e, s)
	spoolMetrics(&e, s)
	writerMetrics(&e, s)
	cycleMetrics(&e, s)
	targetMetrics(&e, s)
	diskMetrics(&e, s)
	return e.b.Bytes()
}

func loaderMetrics(e *expo, s Status) {
	l := s.Loader
	e.gauge("spoold_loader_running", "1 while a loader walk of the spool is running.", boolf(l.Running))
	e.gauge("spoold_loader_progress_ratio", "Fraction of the spool's hash space covered by the current or last walk (0..1).", l.Progress)
	e.gauge("spoold_loader_eta_seconds", "Estimated time left of the running walk; 0 when unknown or not running.", l.ETA.Seconds())
	e.gauge("spoold_loader_rate_files_per_second", "Files per second of the current or last walk.", l.Rate)
	e.gauge("spoold_loader_walk_start_time_seconds", "When the current or last walk started, Unix seconds; 0 before the first.", unixSeconds(l.Started))
	e.gauge("spoold_loader_walk_end_time_seconds", "When the last walk ended, Unix seconds; 0 while running and before the first.", unixSeconds(l.Finished))
	e.gauge("spoold_loader_next_rescan_time_seconds", "When the next rescan walk starts, Unix seconds; 0 if none is scheduled.", unixSeconds(s.LoaderNextRescan))
	e.gauge("spoold_loader_walk_leaf_dirs", "Leaf directories walked by the current or last walk.", float64(l.LeafDirs))
	e.gauge("spoold_warmup_leaves_ready", "Leaf directories whose keys may be written: walked by the start-up walk or on demand.", float64(l.Warmup.LeavesDone))
	e.gauge("spoold_warmup_leaves", "Leaf directories of the spool's layout.", float64(l.Warmup.LeavesTotal))
	e.counter("spoold_warmup_leaves_on_demand_total", "Leaf directories walked at once for a graph or flush before the start-up walk reached them.", l.Warmup.OnDemand)
	e.gauge("spoold_warmup_complete", "1 once the start-up walk (or a flush of everything) has indexed the whole spool.", boolf(l.Warmup.All))
	const files = "spoold_loader_walk_files"
	e.family(files, "gauge", "Files of the current or last walk by result (reset at each walk): seen, indexed, existing (already indexed), full (left on disk, index full), quarantined, temp_removed, foreign, error.")
	for _, r := range []struct {
		result string
		n      uint64
	}{
		{"seen", l.Files}, {"indexed", l.Indexed}, {"existing", l.Existing}, {"full", l.Full},
		{"quarantined", l.Quarantined}, {"temp_removed", l.TempRemoved},
		{"foreign", l.Foreign}, {"error", l.Errors},
	} {
		e.sample(files, float64(r.n), "result", r.result)
	}
	e.gauge("spoold_loader_walk_iterations", "Throttle iterations of the current or last walk.", float64(l.Iterations))
	e.gauge("spoold_loader_walk_sleep_seconds", "Time the current or last walk paused.", l.Slept.Seconds())
	e.gauge("spoold_loader_walk_cpu_seconds", "CPU time of the current or last walk's thread.", l.CPU.Seconds())
	e.gauge("spoold_loader_iteration_files", "Iteration size in files (steered in CPU mode, loader_files otherwise).", float64(l.IterationFiles))
	e.gauge("spoold_loader_param_files", "loader_files: the most files of one iteration.", float64(l.Params.Files))
	e.gauge("spoold_loader_param_sleep_seconds", "loader_sleep: the pause between iterations.", l.Params.Sleep.Seconds())
	e.gauge("spoold_loader_param_threshold_seconds", "loader_threshold: the longest iteration.", l.Params.Threshold.Seconds())
	e.gauge("spoold_loader_param_cpu_ratio", "loader_cpu: the share of one core in CPU mode; 0 when off.", l.Params.CPU)
}

func indexMetrics(e *expo, s Status) {
	x := s.Index
	e.gauge("spoold_index_shards", "Shards of the in-memory index.", float64(x.Shards))
	e.gauge("spoold_index_keys", "Keys (targets) in the index.", float64(x.Keys))
	e.gauge("spoold_index_entries", "Entries in the index, pending and in flight.", float64(x.Entries))
	e.gauge("spoold_index_in_flight_entries", "Entries taken by the writer and not yet done.", float64(x.InFlight))
	e.gauge("spoold_index_backoff_keys", "Keys whose retry time is in the future.", float64(x.Backoff))
	e.gauge("spoold_index_bytes", "Accounted bytes of the index.", float64(x.Bytes))
	e.gauge("spoold_index_capacity_bytes", "Capacity of the index in accounted bytes (--keys-zone).", float64(x.MaxBytes))
	e.gauge("spoold_index_full", "1 when an add was refused because the index was full since the last rescan began: entries wait on disk.", boolf(s.IndexOverflowed))
	e.gauge("spoold_index_oldest_pending_time_seconds", "The oldest poll time in the index, Unix seconds; 0 if empty.", unixSeconds(x.OldestPending))
	e.counter("spoold_index_added_total", "Entries added to the index.", x.Added)
	e.counter("spoold_index_duplicates_total", "Adds of an entry already pending or in flight.", x.Duplicates)
	e.counter("spoold_index_full_total", "Adds refused because the index was full.", x.Full)
	e.gauge("spoold_index_held_keys", "Targets not written until a walk of the spool indexes the entries a full index refused (their older values must land first).", float64(x.Held))
	e.counter("spoold_index_collisions_total", "Adds refused because of a key hash collision.", x.Collisions)
	e.counter("spoold_index_taken_total", "Entries handed to the writer in batches.", x.Taken)
	e.counter("spoold_index_applied_total", "Entries removed from the index after they were applied.", x.Applied)
	e.counter("spoold_index_requeued_total", "Entries put back to pending after a failed write.", x.Requeued)
}

func spoolMetrics(e *expo, s Status) {
	p := s.Spool
	e.counter("spoold_spool_written_entries_total", "Spool entries published.", p.Written)
	e.counter("spoold_spool_written_bytes_total", "Encoded bytes of the spool entries published.", p.WrittenBytes)
	e.counter("spoold_spool_write_errors_total", "Spool writes that failed (nothing published).", p.WriteErrors)
	e.counter("spoold_spool_read_entries_total", "Spool entries read and verified.", p.Read)
	e.counter("spoold_spool_read_errors_total", "Spool reads that failed for another reason than corruption.", p.ReadErrors)
	e.counter("spoold_spool_corrupt_total", "Spool reads that found a corrupt entry.", p.Corrupt)
	e.counter("spoold_spool_removed_total", "Spool entries removed after their values were applied.", p.Removed)
	e.counter("spoold_spool_quarantined_total", "Files moved to the spool's quarantine.", p.Quarantined)
	e.counter("spoold_spool_temp_removed_total", "Stale temp files of an earlier process removed.", p.TempRemoved)
	e.counter("spoold_spool_syncs_total", "syncfs calls of the batch fsync policy.", p.Syncs)
	e.counter("spoold_spool_noatime_denied_total", "Reads that could not use O_NOATIME.", p.NoAtimeDenied)
	e.counter("spoold_spool_segments_created_total", "Spool segments started by appends (one per target and write window).", p.SegmentsCreated)
	e.counter("spoold_spool_appended_entries_total", "Entries appended to an open segment (the rest started one).", p.Appended)
	e.counter("spoold_spool_segments_closed_total", "Open segments closed: taken by the writer, full, or after a clock step.", p.SegmentsClosed)
	e.counter("spoold_spool_segments_read_total", "Spool segments read by the writer.", p.SegmentsRead)
	e.gauge("spoold_spool_temp_foreign_files", "Files in tmp/ that spoold did not make, left alone (at the last clean-up).", float64(p.TempForeign))
}

func writerMetrics(e *expo, s Status) {
	w := s.Writer
	e.gauge("spoold_writer_queue_targets", "Targets with entries pending or being written.", float64(w.QueueLength))
	e.gauge("spoold_writer_pending_entries", "Entries waiting to be written to RRD files.", float64(w.EntriesPending))
	e.gauge("spoold_writer_in_flight_entries", "Entries being written now.", float64(w.InFlight))
	e.gauge("spoold_writer_backoff_targets", "Targets waiting for a retry after a failure.", float64(w.BackingOff))
	e.gauge("spoold_writer_failing_targets", "Targets with a current write error.", float64(w.TargetsFailing))
	e.gauge("spoold_writer_orphan_targets", "Keys with entries in the spool but no profile and no RRD file; their entries stay.", float64(len(rrdwriter.Orphans(s.WriterErrors))))
	e.gauge("spoold_writer_oldest_pending_age_seconds", "How long the oldest pending entry has been waiting.", w.OldestPendingAge.Seconds())
	e.counter("spoold_writer_update_calls_total", "librrd update calls.", w.UpdateCalls)
	e.counter("spoold_writer_entries_written_total", "Entries whose values librrd accepted.", w.EntriesWritten)
	e.counter("spoold_writer_values_written_total", "Values written to RRD files.", w.ValuesWritten)
	e.counter("spoold_writer_skipped_already_applied_total", "Entries at or before the RRD file's last update, removed unapplied.", w.SkippedAlreadyApplied)
	e.counter("spoold_writer_vanished_total", "Entries already gone from the spool when read.", w.Vanished)
	e.counter("spoold_writer_quarantined_total", "Corrupt segments and bytes, and entries set aside (librrd rejected, dated ahead, never applied, duplicate), quarantined.", w.Quarantined)
	e.counter("spoold_writer_quarantined_future_total", "Entries dated further ahead of the clock than --future-tolerance, quarantined unapplied.", w.QuarantinedFuture)
	e.counter("spoold_writer_quarantined_stale_total", "Entries older than their RRD file's last update that were never applied (a clock step), quarantined.", w.QuarantinedStale)
	e.gauge("spoold_writer_targets_awaiting_removal", "Targets whose applied segments could not be removed (a read-only spool); they wait.", float64(w.KeysAwaitingRemoval))
	e.counter("spoold_writer_remove_errors_total", "Applied entries that could not be removed from the spool.", w.RemoveErrors)
	e.counter("spoold_writer_rrd_syncs_total", "Syncs of updated RRD files or their file system before removing their entries (--rrd-fsync).", w.RRDSyncs)
	e.counter("spoold_writer_rrd_sync_errors_total", "Failed RRD syncs; their entries were kept.", w.RRDSyncErrors)
	e.gauge("spoold_writer_removals_pending", "Applied entries waiting for an RRD sync before their removal (--rrd-fsync batch).", float64(w.RemovalsPending))
	e.counter("spoold_writer_creates_total", "RRD files created.", w.Creates)
	e.counter("spoold_writer_backoffs_total", "Failed batches, each backing its target off.", w.Backoffs)
	e.counter("spoold_writer_priority_flushes_total", "Flushes of one target before a graph that took a batch.", w.FlushesPriority)
	e.counter("spoold_writer_graphs_total", "Graphs rendered.", w.Graphs)
	const errs = "spoold_writer_errors_total"
	e.family(errs, "counter", "Failed write batches by kind.")
	for k, n := range w.Errors {
		e.sample(errs, float64(n), "kind", rrdwriter.ErrorKind(k).String())
	}
}

func cycleMetrics(e *expo, s Status) {
	e.gauge("spoold_poller_interval_seconds", "Time between poll cycle starts.", s.PollInterval.Seconds())
	c := s.LastCycle
	if c == nil {
		e.gauge("spoold_poller_cycles_seen", "0 before the first poll cycle ended, 1 after.", 0)
		return
	}
	e.gauge("spoold_poller_cycles_seen", "0 before the first poll cycle ended, 1 after.", 1)
	e.gauge("spoold_poller_last_cycle_seq", "Sequence number of the last poll cycle.", float64(c.Seq))
	e.gauge("spoold_poller_last_cycle_start_time_seconds", "When the last poll cycle started, Unix seconds.", unixSeconds(c.Start))
	e.gauge("spoold_poller_last_cycle_duration_seconds", "Duration of the last poll cycle.", c.Duration.Seconds())
	const dev = "spoold_poller_last_cycle_devices"
	e.family(dev, "gauge", "Devices of the last poll cycle by result: ok (answered), failed (no answer), skipped (backoff), overrun (cut by the cycle deadline).")
	for _, r := range []struct {
		result string
		n      int
	}{{"ok", c.OK}, {"failed", c.Failed}, {"skipped", c.Skipped}, {"overrun", c.Overrun}} {
		e.sample(dev, float64(r.n), "result", r.result)
	}
	const fails = "spoold_poller_last_cycle_failures"
	e.family(fails, "gauge", "Failed polls of the last cycle by kind: timeout (no usable answer in time: silent, late, or answers that do not match the request), malformed (bytes that do not parse as SNMP), agent_error (an error status), other.")
	for _, r := range []struct {
		kind string
		n    int
	}{{"timeout", c.Timeouts}, {"malformed", c.Malformed}, {"agent_error", c.AgentErrors}, {"other", c.OtherErrors}} {
		e.sample(fails, float64(r.n), "kind", r.kind)
	}
	e.gauge("spoold_poller_last_cycle_wrong_types", "Values of the last cycle whose SNMP type does not fit their data source (stored as unknown).", float64(c.WrongTypes))
	e.gauge("spoold_poller_last_cycle_values", "Values written by the last poll cycle.", float64(c.Values))
	e.gauge("spoold_poller_last_cycle_unknown_values", "Unknown values among them.", float64(c.Unknown))
	e.gauge("spoold_poller_last_cycle_discontinuities", "Entries of the last cycle flagged as a counter discontinuity.", float64(c.Discontinuities))
	e.gauge("spoold_poller_last_cycle_write_errors", "Answered polls of the last cycle whose entry could not be written.", float64(c.WriteErrors))
	e.gauge("spoold_poller_last_cycle_index_deferred", "Entries of the last cycle the index refused (waiting on disk).", float64(c.IndexDeferred))
}

func targetMetrics(e *expo, s Status) {
	const health = "spoold_target_health"
	e.family(health, "gauge", "Target health as a state set: 1 for the target's current state (ok, failing, backoff, new), 0 for the others.")
	for _, t := range s.Targets {
		for _, h := range healthStates {
			e.sample(health, boolf(t.Health == h), "target", t.Name, "state", string(h))
		}
	}
	const last = "spoold_target_last_success_time_seconds"
	e.family(last, "gauge", "When the target last answered a poll, Unix seconds; 0 if never.")
	for _, t := range s.Targets {
		e.sample(last, unixSeconds(t.LastSuccess), "target", t.Name)
	}
	const rtt = "spoold_target_rtt_seconds"
	e.family(rtt, "gauge", "Duration of the target's last answered poll.")
	for _, t := range s.Targets {
		e.sample(rtt, t.RTT.Seconds(), "target", t.Name)
	}
	const fails = "spoold_target_consecutive_failures"
	e.family(fails, "gauge", "Polls without an answer since the target's last success.")
	for _, t := range s.Targets {
		e.sample(fails, float64(t.ConsecutiveFailures), "target", t.Name)
	}
	const polls = "spoold_target_polls_total"
	e.family(polls, "counter", "Polls of the target since it was added.")
	for _, t := range s.Targets {
		e.sample(polls, float64(t.Polls), "target", t.Name)
	}
	const pf = "spoold_target_poll_failures_total"
	e.family(pf, "counter", "Polls of the target without an answer since it was added.")
	for _, t := range s.Targets {
		e.sample(pf, float64(t.Failures), "target", t.Name)
	}
	const we = "spoold_target_write_failing"
	e.family(we, "gauge", "1 while the target's RRD file has a current write error.")
	for _, t := range s.Targets {
		e.sample(we, boolf(t.WriteError != ""), "target", t.Name)
	}
}
