package rrdwriter

import (
	"context"
	"fmt"
	"time"

	"github.com/spoold/spoold/spool"
)

// Graph renders a PNG of key's RRD file: the data sources o.DS (all if
// empty) from o.Start to o.End (the last day if zero) at o.Width×o.Height
// (600×200 if zero). It first flushes key's pending entries (FlushKey), so
// the graph is current; if that flush fails, the graph is drawn from what
// the file holds and the failure is logged and shown in TargetErrors. The
// render holds the file's lock, so it never overlaps an update.
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
	ds, err := graphDS(t, o.DS)
	if err != nil {
		return nil, fmt.Errorf("graph %s: %w", key, err)
	}
	w.graphDefaults(&o)
	img, err := w.o.RRD.Graph(t.path, ds, o)
	if err != nil {
		return nil, fmt.Errorf("graph %s: %w", key, err)
	}
	w.c.graphs.Add(1)
	return img, nil
}

func graphDS(t *target, want []string) ([]string, error) {
	if len(want) == 0 {
		return t.template(), nil
	}
	for _, name := range want {
		if _, ok := t.index[name]; !ok {
			return nil, fmt.Errorf("no data source %q in %s", name, t.path)
		}
	}
	return want, nil
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
}
