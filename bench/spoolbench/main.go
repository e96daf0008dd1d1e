// Command spoolbench is the Go half of bench/spool.sh: it writes TARGETS ×
// POLLS poll results of COUNTERS counters into scratch spools under -dir,
// once per round, in one of two modes, and drains them again:
//
//   - file: one file per poll, published with spool.Spool.Write (temp file +
//     rename), as spoold's poller did before segments; drained with one
//     Dir.Read and one Dir.Remove (unlink) per file.
//   - seg: spool.Spool.Append with the default segment options; the 12
//     polls of a target go to its open segment (the write window: every poll
//     of a target before the writer takes it); drained with Seal, one
//     Dir.ReadSegmentInto (into a reused buffer, as the writer reads) and
//     one Dir.Remove per segment.
//
// Polls are made in the poller's order (every target of cycle 1, then every
// target of cycle 2, ...) from one goroutine. Each round gets a fresh spool
// (level directories precreated, as the daemon opens it) and starts from a
// synced file system. Per poll it measures the wall time of the writes, the
// KiB written to the spool's block device from before the first write to
// after a syncfs(2) that follows the last, and the same two for the drain;
// the syncfs times are reported apart. A third mode, segfd, is seg with a
// descriptor held for every target (Options.SegmentOpenFiles twice the
// targets) instead of Append's open/append/close beyond the default 1,024
// (what holding more descriptors saves). Rounds run in the order
// --order (default A-B-C-C-B-A-A-B-C), so a load that changes during the
// run weighs on every mode; each figure is the median over the rounds of a
// mode, and the summary is
//
//	spool: file_us=<µs/poll> seg_us=<µs/poll> file_kib=<KiB/poll> seg_kib=<KiB/poll> drain_x=<file drain µs / seg drain µs>
//
// drain_x is the ratio of the drain wall times per poll (read + unlink,
// without the syncfs that follows).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/diskstat"
)

type config struct {
	dir                      string
	targets, polls, counters int
	order                    string
	cpuProfile               string
}

// round is what one round of one mode measured, per poll.
type round struct {
	Mode          string  `json:"mode"`
	WriteUs       float64 `json:"write_us"`         // wall µs per poll, writes
	WriteCPUUs    float64 `json:"write_cpu_us"`     // process CPU (user+sys) µs per poll, writes
	WriteKiB      float64 `json:"write_kib"`        // device KiB per poll, writes + syncfs
	WriteSyncMs   float64 `json:"write_sync_ms"`    // the syncfs after the writes, ms
	DrainUs       float64 `json:"drain_us"`         // wall µs per poll, read + unlink
	DrainReadUs   float64 `json:"drain_read_us"`    // wall µs per poll in the reads (seg: ReadSegmentInto)
	DrainUnlinkUs float64 `json:"drain_unlink_us"`  // wall µs per poll in the unlinks
	DrainCPUUs    float64 `json:"drain_cpu_us"`     // process CPU µs per poll, drain
	DrainKiB      float64 `json:"drain_kib"`        // device KiB per poll, drain + syncfs
	DrainSyncMs   float64 `json:"drain_sync_ms"`    // the syncfs after the drain, ms
	Files         int     `json:"files"`            // spool files written
	EntryBytes    int     `json:"entry_bytes"`      // encoded bytes of one poll
	EntriesRead   int     `json:"entries_read"`     // entries read back (must be every poll)
	DeviceWriteIO float64 `json:"device_write_ios"` // write requests completed by the device, writes + sync

	readTime, unlinkTime time.Duration
}

func main() {
	var c config
	fs := pflag.NewFlagSet("spoolbench", pflag.ExitOnError)
	fs.StringVar(&c.dir, "dir", "", "directory for the scratch spools, on the file system to measure")
	fs.IntVar(&c.targets, "targets", 10_000, "targets")
	fs.IntVar(&c.polls, "polls", 12, "polls per target (the write window)")
	fs.IntVar(&c.counters, "counters", 40, "counters per poll")
	fs.StringVar(&c.order, "order", "file,seg,segfd,segfd,seg,file,file,seg,segfd", "rounds, in order")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of all rounds here")
	_ = fs.Parse(os.Args[1:])
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "spoolbench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if c.dir == "" {
		return errors.New("no -dir given")
	}
	dev, err := diskstat.DeviceOf(c.dir)
	if err != nil {
		return fmt.Errorf("find the block device of %s: %w", c.dir, err)
	}
	fmt.Printf("spoolbench: device=%s targets=%d polls=%d counters=%d order=%s\n", dev.Name, c.targets, c.polls, c.counters, c.order)
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return fmt.Errorf("create cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	byMode := map[string][]round{}
	for i, mode := range strings.Split(c.order, ",") {
		if !slices.Contains(modes, mode) {
			return fmt.Errorf("round %d: mode %q: want one of %s", i+1, mode, strings.Join(modes, ", "))
		}
		r, err := runRound(c, dev.Name, filepath.Join(c.dir, fmt.Sprintf("round%d-%s", i+1, mode)), mode)
		if err != nil {
			return fmt.Errorf("round %d (%s): %w", i+1, mode, err)
		}
		fmt.Printf("round %d: %s\n", i+1, r)
		byMode[mode] = append(byMode[mode], r)
	}
	meds := map[string]round{}
	for _, mode := range modes {
		if rs := byMode[mode]; len(rs) > 0 {
			meds[mode] = median(rs)
			fmt.Printf("median %s (%d rounds): %s\n", mode, len(rs), meds[mode])
		}
	}
	f, okf := meds["file"]
	g, okg := meds["seg"]
	if h, ok := meds["segfd"]; ok && okg {
		fmt.Printf("fdcache: seg_us=%.2f segfd_us=%.2f open_close_share=%.0f%% (open/append/close against a descriptor held per target)\n",
			g.WriteUs, h.WriteUs, 100*(g.WriteUs-h.WriteUs)/g.WriteUs)
	}
	if !okf || !okg {
		fmt.Println("spoolbench: no summary: -order needs rounds of file and seg")
		return nil
	}
	fmt.Printf("spool: file_us=%.2f seg_us=%.2f file_kib=%.2f seg_kib=%.2f drain_x=%.1f\n",
		f.WriteUs, g.WriteUs, f.WriteKiB, g.WriteKiB, f.DrainUs/g.DrainUs)
	return nil
}

// modes are the modes a round can run in.
var modes = []string{"file", "seg", "segfd"}

// String is the round's figures as one line of JSON, rounded.
func (r round) String() string {
	r3 := func(v *float64) { *v = math.Round(*v*1000) / 1000 }
	for _, v := range []*float64{&r.WriteUs, &r.WriteCPUUs, &r.WriteKiB, &r.WriteSyncMs, &r.DrainUs,
		&r.DrainReadUs, &r.DrainUnlinkUs, &r.DrainCPUUs, &r.DrainKiB, &r.DrainSyncMs} {
		r3(v)
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// median returns the median of each figure over rs, all of one mode (the
// counts of files and entries are the same in every round).
func median(rs []round) round {
	m := rs[0]
	for _, field := range []func(*round) *float64{
		func(r *round) *float64 { return &r.WriteUs }, func(r *round) *float64 { return &r.WriteCPUUs },
		func(r *round) *float64 { return &r.WriteKiB }, func(r *round) *float64 { return &r.WriteSyncMs },
		func(r *round) *float64 { return &r.DrainUs }, func(r *round) *float64 { return &r.DrainReadUs },
		func(r *round) *float64 { return &r.DrainUnlinkUs }, func(r *round) *float64 { return &r.DrainCPUUs },
		func(r *round) *float64 { return &r.DrainKiB }, func(r *round) *float64 { return &r.DrainSyncMs },
		func(r *round) *float64 { return &r.DeviceWriteIO },
	} {
		v := make([]float64, len(rs))
		for i := range rs {
			v[i] = *field(&rs[i])
		}
		slices.Sort(v)
		med := v[len(v)/2]
		if n := len(v); n%2 == 0 {
			med = (v[n/2-1] + v[n/2]) / 2
		}
		*field(&m) = med
	}
	return m
}
