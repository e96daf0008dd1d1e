package main

import (
	"github.com/spf13/pflag"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/rrdwriter"
)

// The flags of an instance on many machines: --shard (which targets it
// polls) and --forward (where its RRD files are written).

func addShardFlags(fs *pflag.FlagSet, o *poller.Options) {
	fs.Var(&shardValue{&o.Shard}, "shard", `poll only the targets rendezvous hashing of their names gives shard K of N ("2/3"); every instance reads the same targets file (empty = all targets)`)
}

func addForwardFlags(fs *pflag.FlagSet, o *rrdwriter.Options) {
	fs.Var(&forwardValue{&o.Forward}, "forward", `write RRD files on a remote rrdcached or spoold instead of --rrd-dir ("tcp:HOST:PORT" or "unix:PATH"); spool entries are removed once the remote file's last update shows them (empty = local librrd)`)
	fs.DurationVar(&o.ForwardTimeout, "forward-timeout", o.ForwardTimeout, "longest wait for the --forward peer on one file's batch (send, flush, read back)")
}

type shardValue struct{ p *fleet.Shard }

func (v *shardValue) String() string { return v.p.String() }
func (v *shardValue) Type() string   { return "K/N" }
func (v *shardValue) Set(s string) (err error) {
	if s == "" {
		*v.p = fleet.Shard{}
		return nil
	}
	*v.p, err = fleet.ParseShard(s)
	return err
}

type forwardValue struct{ p *string }

func (v *forwardValue) String() string { return *v.p }
func (v *forwardValue) Type() string   { return "address" }
func (v *forwardValue) Set(s string) error {
	if s == "" {
		*v.p = ""
		return nil
	}
	a, err := rrdcached.ParseAddress(s)
	if err != nil {
		return err
	}
	*v.p = a.String()
	return nil
}
