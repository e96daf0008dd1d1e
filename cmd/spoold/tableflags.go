package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/spoold/spoold/poller"
)

// addTableFlags adds the flags of SNMP tables (poller's discovery and
// table polls) and of MIB names to the Polling group.
func addTableFlags(fs *pflag.FlagSet, c *config) {
	fs.IntVar(&c.poller.MaxRepetitions, "poll-max-repetitions", c.poller.MaxRepetitions, "GetBulk max-repetitions of table walks (discovery and bulk polls)")
	fs.IntVar(&c.poller.MaxTableRows, "poll-max-table-rows", c.poller.MaxTableRows, "most rows discovery keeps of one table (more: the table is marked truncated)")
	fs.Var(&tableModeValue{&c.poller.TableMode}, "poll-table-mode", "how table rows are polled: get (Gets of the rows' cells, --poll-max-varbinds each), bulk (GetBulk walks of the columns), auto (per table, the one of fewer round trips)")
	fs.DurationVar(&c.poller.RediscoverInterval, "rediscover-interval", c.poller.RediscoverInterval, "walk a device's tables again this often, in the background (0 = only at start, on SIGHUP, after an agent restart or a lost row)")
	fs.IntVar(&c.poller.DiscoveryConcurrency, "discovery-concurrency", c.poller.DiscoveryConcurrency, "most background table discoveries in flight (one UDP socket each)")
	fs.DurationVar(&c.poller.DiscoveryTimeout, "discovery-timeout", c.poller.DiscoveryTimeout, "end a table discovery that runs beside the poll cycles (a first one longer than a poll, a rediscovery) after this long (0 = no limit)")
	fs.IntVar(&c.poller.MaxFilesPerTarget, "max-files-per-target", c.poller.MaxFilesPerTarget, "most table row files (keys) of one target, gone rows' included; rows of new keys beyond it are not polled and the target is shown as needing attention")
	fs.IntVar(&c.poller.NewFilesPerHour, "max-new-files-per-hour", c.poller.NewFilesPerHour, "most new table row files (keys) one target's discoveries after its first may add in an hour (0 = no limit); rows beyond it are not polled until the hour allows them")
	fs.Var(&dirsValue{&c.mibDirs}, "mib-dir", "directory of MIB files whose names profiles may use (repeat or comma-separate; the built-in IF-MIB, HOST-RESOURCES, UCD names need none); reloaded on SIGHUP")
}

type tableModeValue struct{ p *poller.TableMode }

func (v *tableModeValue) String() string { return string(*v.p) }
func (v *tableModeValue) Type() string   { return "mode" }
func (v *tableModeValue) Set(s string) (err error) {
	*v.p, err = poller.ParseTableMode(s)
	return err
}

// dirsValue is a list of directories: each use of the flag adds its
// comma-separated directories; it prints as they were given.
type dirsValue struct{ p *[]string }

func (v *dirsValue) String() string { return strings.Join(*v.p, ",") }
func (v *dirsValue) Type() string   { return "dirs" }
func (v *dirsValue) Set(s string) error {
	for d := range strings.SplitSeq(s, ",") {
		if d != "" {
			*v.p = append(*v.p, d)
		}
	}
	return nil
}
