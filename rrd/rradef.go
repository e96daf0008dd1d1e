package rrd

import "time"

// readRRAs reads the archive definitions from the header of the file
// open at fd, locked for reading (path names it in errors), with the Go
// reader.
func readRRAs(fd int, path string) ([]RRADef, error) {
	var h *Header
	_, err := readHead(fd, path, rrdHeaderRead, func(b []byte) (need int, err error) {
		h, need, err = ParseHeader(b)
		return need, err
	})
	if err != nil {
		return nil, err
	}
	return h.RRA, nil
}

// FetchRows is the number of rows rrd_fetch returns for a fetch with
// consolidation function cf from start to end (Unix seconds) of a file
// with step and last update last: the finest archive of cf that covers the
// range, or else the one that covers the most of it (rrd_fetch_fn's choice
// with no step asked for, the most rows it picks). Without such archives
// it assumes one row per step.
func FetchRows(rras []RRADef, cf string, step time.Duration, last, start, end int64) int64 {
	base := max(int64(step/time.Second), 1)
	rowStep, bestPart := base, int64(-1)
	full := false
	for _, r := range rras {
		if r.CF != cf || r.PDPs == 0 {
			continue
		}
		s := base * int64(r.PDPs)
		calEnd := last - last%s
		calStart := calEnd - s*int64(r.Rows)
		switch {
		case calStart <= start:
			if !full || s < rowStep {
				rowStep, full = s, true
			}
		case !full:
			if match := end - start - (calStart - start); match > bestPart {
				rowStep, bestPart = s, match
			}
		}
	}
	return (end-start)/rowStep + 2
}
