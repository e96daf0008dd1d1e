package poller

import (
	"fmt"
	"slices"
	"time"
)

// The bounds on a target's files. Each table row is its own key, so its
// own RRD file, and the files of rows that are gone stay (their history is
// kept, and the row may come back). An agent that renames its rows at
// every restart, or a misconfigured filter, would then make new files
// without end. So a target's row keys are bounded: at most
// Options.MaxFilesPerTarget keys over the life of the device (the keys any
// discovery admitted, gone ones included), and after its first discovery
// at most Options.NewFilesPerHour new keys an hour (a token bucket of that
// size, refilled at that rate), so that a burst of renames is stopped long
// before the total. A row whose key is new and over either bound is not
// polled: it is in TableDiscovery.OverLimit, writes no spool entry (so
// nothing of it waits in the spool) and makes no file; the device's status
// says how many and why (DeviceStatus.OverLimitRows, OverLimit). A row of
// a key admitted before is always polled. The target's own file (its
// scalars) is not counted.

// admitRows moves the rows of disc whose keys are new to d and over its
// bounds into their table's OverLimit, and adds the admitted keys to
// d.known. It returns how many rows it refused and why (the first bound
// reached). Discoveries of one device never overlap, so the rows are
// admitted in table and index order.
func (d *device) admitRows(disc *Discovery, now time.Time, o *Options) (refused int, why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	first := d.st.Discoveries == 0
	var added []string
	for ti := range disc.Tables {
		td := &disc.Tables[ti]
		kept := td.Rows[:0]
		for _, r := range td.Rows {
			_, known := slices.BinarySearch(d.known, r.Key)
			reason := ""
			switch {
			case known:
			case len(d.known)+len(added) >= o.MaxFilesPerTarget:
				reason = fmt.Sprintf("the target has %d row files, its bound (--max-files-per-target)", len(d.known)+len(added))
			case !first && !d.newFiles.take(now, o.NewFilesPerHour):
				reason = fmt.Sprintf("the target made %d new row files within the hour, its bound (--max-new-files-per-hour)", o.NewFilesPerHour)
			}
			if reason == "" {
				if !known {
					added = append(added, r.Key)
				}
				kept = append(kept, r)
				continue
			}
			td.OverLimit = append(td.OverLimit, NotPolled{Row: r, Why: "not polled: " + reason})
			if refused == 0 {
				why = reason
			}
			refused++
		}
		td.Rows = kept
	}
	if len(added) > 0 {
		// An array of just the keys (those of one discovery are distinct,
		// and added are not known): it holds them all, gone ones included,
		// for as long as the device is polled.
		known := append(append(make([]string, 0, len(d.known)+len(added)), d.known...), added...)
		slices.Sort(known)
		d.known = known
	}
	return refused, why
}

// tokenBucket is a rate of events per hour with a burst of as many: the
// new row files of one device.
type tokenBucket struct {
	tokens float64
	at     time.Time // of tokens; zero before the first take
}

// take takes one token at now if there is one, perHour <= 0 meaning no
// bound.
func (b *tokenBucket) take(now time.Time, perHour int) bool {
	if perHour <= 0 {
		return true
	}
	size := float64(perHour)
	if b.at.IsZero() {
		b.tokens = size
	} else if dt := now.Sub(b.at); dt > 0 {
		b.tokens = min(size, b.tokens+dt.Hours()*size)
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
