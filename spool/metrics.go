package spool

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/statmetric"
)

// NewCollector returns a prometheus.Collector of the spool's Stats: one
// stats() per scrape (Spool.Stats, or a snapshot taken for /status too).
func NewCollector(stats func() Stats) prometheus.Collector { return metrics.Collector(stats) }

var metrics = statmetric.Table[Stats]{
	statmetric.Counter("spoold_spool_written_entries_total", "Spool entries published.", func(s Stats) uint64 { return s.Written }),
	statmetric.Counter("spoold_spool_written_bytes_total", "Encoded bytes of the spool entries published.", func(s Stats) uint64 { return s.WrittenBytes }),
	statmetric.Counter("spoold_spool_write_errors_total", "Spool writes that failed (nothing published).", func(s Stats) uint64 { return s.WriteErrors }),
	statmetric.Counter("spoold_spool_read_entries_total", "Spool entries read and verified.", func(s Stats) uint64 { return s.Read }),
	statmetric.Counter("spoold_spool_read_errors_total", "Spool reads that failed for another reason than corruption.", func(s Stats) uint64 { return s.ReadErrors }),
	statmetric.Counter("spoold_spool_corrupt_total", "Spool reads that found a corrupt entry.", func(s Stats) uint64 { return s.Corrupt }),
	statmetric.Counter("spoold_spool_removed_total", "Spool entries removed after their values were applied.", func(s Stats) uint64 { return s.Removed }),
	statmetric.Counter("spoold_spool_quarantined_total", "Files moved to the spool's quarantine.", func(s Stats) uint64 { return s.Quarantined }),
	statmetric.Counter("spoold_spool_temp_removed_total", "Stale temp files of an earlier process removed.", func(s Stats) uint64 { return s.TempRemoved }),
	statmetric.Counter("spoold_spool_syncs_total", "syncfs calls of the batch fsync policy.", func(s Stats) uint64 { return s.Syncs }),
	statmetric.Counter("spoold_spool_noatime_denied_total", "Reads that could not use O_NOATIME.", func(s Stats) uint64 { return s.NoAtimeDenied }),
	statmetric.Counter("spoold_spool_segments_created_total", "Spool segments started by appends (one per target and write window).", func(s Stats) uint64 { return s.SegmentsCreated }),
	statmetric.Counter("spoold_spool_appended_entries_total", "Entries written after the first of their segment (each of the rest started one).", func(s Stats) uint64 { return s.Appended }),
	statmetric.Counter("spoold_spool_segments_closed_total", "Open segments closed: taken by the writer, full, or after a clock step.", func(s Stats) uint64 { return s.SegmentsClosed }),
	statmetric.Counter("spoold_spool_segment_opens_total", "Appends that opened their open segment by name: its descriptor was not held (more open segments than --segment-open-files).", func(s Stats) uint64 { return s.SegmentOpens }),
	statmetric.Counter("spoold_spool_segments_read_total", "Spool segments read by the writer.", func(s Stats) uint64 { return s.SegmentsRead }),
	statmetric.Counter("spoold_spool_segments_read_from_memory_total", "Spool segments the writer read from the memory of what this process appended, not from disk.", func(s Stats) uint64 { return s.SegmentsFromMemory }),
	statmetric.Gauge("spoold_spool_memory_bytes", "Memory holding the bytes of segments this process appended until the writer reads them (--segment-memory).", func(s Stats) float64 { return float64(s.MemoryBytes) }),
	statmetric.Counter("spoold_spool_symlinks_refused_total", "Opens of spool files and level directories refused: a symlink stood on the way.", func(s Stats) uint64 { return s.SymlinksRefused }),
	statmetric.Gauge("spoold_spool_temp_foreign_files", "Files in tmp/ that spoold did not make, left alone (at the last clean-up).", func(s Stats) float64 { return float64(s.TempForeign) }),
}
