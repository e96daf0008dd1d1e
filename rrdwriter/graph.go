package rrdwriter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spoold/spoold/spool"
)

// Graph renders a PNG of key's RRD file: the data sources o.DS (see
// GraphOptions for the default) from o.Start to o.End (the last day if zero)
// at o.Width×o.Height (600×200 if zero). It first flushes key's pending
// entries (FlushKey), so the graph is current; if that flush fails, the
// graph is drawn from what the file holds and the failure is logged and
// shown in TargetErrors. The render holds the file's lock, so it never
// overlaps an update. A file that does not exist gives an error wrapping
// fs.ErrNotExist; a data source the file lacks, ErrNoDataSource; a graph
// beyond o.MaxDS or o.MaxBytes, ErrGraphTooLarge. The messages of the last
// two name no path.
func (w *Writer) Graph(ctx context.Context, key string, o GraphOptions) ([]byte, error) {
	if err := w.FlushKey(ctx, key); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("graph %s: %w", key, err)
		}
		w.log.Warn("flush before graph failed; drawing from the file", "key", key, "err", err)
	}
	t := w.target(spool.KeyHash(key), key)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.known {
		fi, err := w.o.RRD.Info(t.path)
		if err != nil {
			return nil, fmt.Errorf("graph %s: %w", key, err)
		}
		t.setInfo(fi)
	}
	w.graphDefaults(&o)
	rras, err := w.readRRAs(t.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.log.Debug("read rrd archives for the graph's cost; assuming one row per step", "key", key, "err", err)
	}
	ds, err := graphSelect(t, rras, o)
	if err != nil {
		return nil, fmt.Errorf("graph %s: %w", key, err)
	}
	img, err := w.o.RRD.Graph(t.path, ds, o)
	if err != nil {
		return nil, fmt.Errorf("graph %s: %w", key, err)
	}
	w.c.graphs.Add(1)
	return img, nil
}

func (w *Writer) graphDefaults(o *GraphOptions) {
	if o.End.IsZero() {
		o.End = w.o.Now()
	}
	if o.Start.IsZero() {
		o.Start = o.End.Add(-24 * time.Hour)
	}
	if o.Width <= 0 {
		o.Width = 600
	}
	if o.Height <= 0 {
		o.Height = 200
	}
	if o.MaxDS <= 0 {
		o.MaxDS = DefaultGraphMaxDS
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultGraphMaxBytes
	}
}
