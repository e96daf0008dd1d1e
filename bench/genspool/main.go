// Command genspool fills a spool directory with valid entries for the loader
// benchmarks: go run ./bench/genspool --spool-dir DIR --entries N --keys K.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/spoold/spoold/internal/testing/spoolgen"
	"github.com/spoold/spoold/spool"
)

func main() {
	o := spoolgen.DefaultOptions()
	so := spool.DefaultOptions()
	fs := pflag.NewFlagSet("genspool", pflag.ExitOnError)
	fs.StringVar(&so.Dir, "spool-dir", "", "spool directory to fill (created)")
	fs.StringVar(&so.Levels, "levels", so.Levels, "directory levels, nginx syntax")
	fs.IntVar(&o.Entries, "entries", o.Entries, "entries to write")
	fs.IntVar(&o.Keys, "keys", o.Keys, "distinct keys")
	fs.IntVar(&o.Values, "values", o.Values, "values per entry")
	fs.IntVar(&o.Workers, "workers", o.Workers, "parallel writers")
	_ = fs.Parse(os.Args[1:])
	sp, err := spool.Open(so)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genspool:", err)
		os.Exit(1)
	}
	defer sp.Close()
	start := time.Now()
	n, err := spoolgen.Generate(sp, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genspool:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "genspool: wrote %d entries over %d keys in %s in %.1fs\n", n, o.Keys, so.Dir, time.Since(start).Seconds())
}
