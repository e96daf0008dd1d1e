package rrdwriter

import (
	"context"
	"fmt"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// Graph calls draw with the RRD directory's root, the path and the header
// of key's RRD file, while no update of the file runs, and returns what it
// drew (package graph's Options.Draw renders the PNG, reading the file
// beneath the root: a directory swapped for a symlink out of it is
// refused, never drawn). It first flushes key's pending entries
// (FlushKey), so the graph is current; if that flush fails, the graph is
// drawn from what the file holds and the failure is logged and shown in
// TargetErrors. A file that does not exist gives an error wrapping
// fs.ErrNotExist. With Options.Forward the files are on the remote and
// Graph fails.
func (w *Writer) Graph(ctx context.Context, key string, draw func(root *rrd.Root, path string, fi rrd.FileInfo) ([]byte, error)) ([]byte, error) {
	if err := w.FlushKey(ctx, key); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("graph %s: %w", key, err)
		}
		w.log.Warn("flush before graph failed; drawing from the file", "key", key, "err", err)
	}
	t := w.fileOf(spool.KeyHash(key), key)
	t.mu.Lock()
	defer t.mu.Unlock()
	path := w.path(t)
	if !t.known() {
		fi, err := w.o.RRD.Info(path)
		if err != nil {
			return nil, fmt.Errorf("graph %s: %w", key, err)
		}
		t.setInfo(fi, &w.dsSets)
	}
	if w.fwd != nil {
		return nil, fmt.Errorf("graph %s: %w", key, w.fwd.graphRefused(path))
	}
	img, err := draw(w.o.RRD.Root(), path, t.info)
	if err != nil {
		return nil, fmt.Errorf("graph %s: %w", key, err)
	}
	w.c.graphs.Add(1)
	return img, nil
}
