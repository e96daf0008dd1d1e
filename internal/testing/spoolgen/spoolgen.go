// Package spoolgen fills a spool directory with valid entries for tests and
// benchmarks: entries over keys, each key with consecutive 5-minute polls.
// It starts goroutines only inside Generate and waits for them.
package spoolgen

import (
	"fmt"
	"sync"

	"github.com/spoold/spoold/spool"
)

// Options say what to generate.
type Options struct {
	Entries int   // total entries, spread evenly over the keys
	Keys    int   // distinct keys ("bench-000042")
	Values  int   // counter values per entry
	Start   int64 // poll time of the first entry of each key (Unix seconds)
	Step    int64 // seconds between polls of one key
	Workers int   // parallel writers
}

// DefaultOptions: 1,000 entries over 100 keys, 4 values, 5-minute polls.
func DefaultOptions() Options {
	return Options{Entries: 1000, Keys: 100, Values: 4, Start: 1_700_000_000, Step: 300, Workers: 2}
}

// Key returns the name of key i.
func Key(i int) string { return fmt.Sprintf("bench-%06d", i) }

// Generate writes the entries into sp and returns how many it wrote.
func Generate(sp *spool.Spool, o Options) (int, error) {
	if o.Keys <= 0 || o.Entries < 0 || o.Workers <= 0 {
		return 0, fmt.Errorf("generate spool: need keys > 0, entries >= 0, workers > 0: %+v", o)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		total int
	)
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			n, err := generateShare(sp, o, w)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if err != nil && first == nil {
				first = err
			}
		}(w)
	}
	wg.Wait()
	return total, first
}

// generateShare writes the entries with index i where i % Workers == w.
func generateShare(sp *spool.Spool, o Options, w int) (int, error) {
	e := spool.Entry{Values: make([]spool.Value, o.Values)}
	for v := range e.Values {
		e.Values[v] = spool.Value{Name: fmt.Sprintf("ds%d", v), Type: spool.Counter}
	}
	n := 0
	for i := w; i < o.Entries; i += o.Workers {
		k, poll := i%o.Keys, int64(i/o.Keys)
		e.Key = Key(k)
		e.Time = o.Start + poll*o.Step
		for v := range e.Values {
			e.Values[v].Counter = uint64(poll) * uint64(1000*(v+1))
		}
		if _, err := sp.Write(&e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
