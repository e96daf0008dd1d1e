package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/spoold/spoold/simulate"
)

// simulateFlags returns the flags of `spoold simulate`, bound to o and cli.
func simulateFlags(o *simulate.Options, cli *simulateCLI, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("spoold simulate", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: spoold simulate [flags]

Answers SNMP v1/v2c Get, GetNext and GetBulk for a simulated fleet on one
loopback UDP port; the community selects the device (dev00000, dev00001,
...). Each device serves the system group, IF-MIB's ifTable and ifXTable,
HOST-RESOURCES and UCD tables. Counters are a known function of device and
time. Fractions ("10%%" or 0.1) of the devices can be dead, slow, miss OIDs,
wrap their counters, restart, lack HC counters, or renumber or rename their
interfaces at restarts. --targets-out writes a targets file that polls the whole fleet.

`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Addr, "listen", o.Addr, "UDP address to answer on (loopback only)")
	fs.IntVar(&o.Devices, "devices", o.Devices, "number of devices")
	fs.IntVar(&o.Interfaces, "interfaces", o.Interfaces, "interfaces per device (rows of ifTable and ifXTable)")
	fs.Var(&numberingValue{&o.Numbering}, "numbering", "ifIndex numbering: contiguous (1..n, for if-mib:<n>) or vendor (as real gear: 1, 2, 10101...)")
	fs.Var(&fractionValue{&o.Down}, "down", "fraction of each device's interfaces that are down (counters flat)")
	fs.StringVar(&o.Prefix, "prefix", o.Prefix, "device name and community prefix")
	fs.Var(&fractionValue{&o.Dead}, "dead", "fraction of devices that never answer")
	fs.Var(&fractionValue{&o.Slow}, "slow", "fraction of devices that answer after --slow-delay")
	fs.DurationVar(&o.SlowDelay, "slow-delay", o.SlowDelay, "response delay of slow devices")
	fs.Var(&fractionValue{&o.Missing}, "missing", "fraction of devices missing a column and half their interfaces")
	fs.Var(&fractionValue{&o.Wrap}, "wrap", "fraction of devices whose counters wrap --wrap-after each boot")
	fs.DurationVar(&o.WrapAfter, "wrap-after", o.WrapAfter, "uptime at which wrapping counters pass zero")
	fs.Var(&fractionValue{&o.Restart}, "restart", "fraction of devices that reboot every --restart-every")
	fs.DurationVar(&o.RestartEvery, "restart-every", o.RestartEvery, "reboot period of restarting devices")
	fs.Var(&fractionValue{&o.NoHC}, "no-hc", "fraction of devices without 64-bit counters (no ifHC columns)")
	fs.Var(&fractionValue{&o.Renumber}, "renumber", "fraction of devices that renumber their interfaces at each restart")
	fs.Var(&fractionValue{&o.Rename}, "rename", "fraction of devices that give their interfaces new names at each restart")
	fs.IntVar(&o.MaxMessageSize, "max-message-size", o.MaxMessageSize, "largest response in bytes: bigger is tooBig, a GetBulk is cut short")
	fs.IntVar(&o.MaxBulkVarbinds, "max-bulk-varbinds", o.MaxBulkVarbinds, "most varbinds in a GetBulk response")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines answering requests (0 = GOMAXPROCS)")
	fs.StringVar(&cli.targetsOut, "targets-out", "", "write a targets file for the fleet to this path")
	fs.StringVar(&cli.profile, "targets-profile", "", "profile of the written targets (default if-mib:<interfaces>)")
	fs.StringVar(&cli.targetTimeout, "targets-timeout", "", "timeout= of the written targets (default: the poller's)")
	fs.IntVar(&cli.targetRetries, "targets-retries", cli.targetRetries, "retries= of the written targets (-1: the poller's)")
	return fs
}

// simulateCLI is what `spoold simulate` does besides serving the fleet.
type simulateCLI struct {
	targetsOut, profile, targetTimeout string
	targetRetries                      int
}

// runSimulate is `spoold simulate`: a simulated fleet of SNMP agents on a
// loopback address until SIGINT or SIGTERM.
func runSimulate(args []string, stdout, stderr io.Writer) int {
	o := simulate.DefaultOptions()
	cli := simulateCLI{targetRetries: -1}
	fs := simulateFlags(&o, &cli, stderr)
	if code, ok := parseCommandFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "spoold simulate: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if cli.profile == "" {
		cli.profile = "if-mib:" + strconv.Itoa(o.Interfaces)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ready := func(s *simulate.Simulator) error {
		fmt.Fprintf(stdout, "simulate: listening on %s, %d devices\n", s.Addr(), o.Devices)
		if cli.targetsOut == "" {
			return nil
		}
		f, err := os.Create(cli.targetsOut)
		if err != nil {
			return fmt.Errorf("create targets file: %w", err)
		}
		err = s.Fleet().WriteTargets(f, s.Addr(), cli.profile, cli.targetTimeout, cli.targetRetries)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	start := time.Now()
	if err := simulate.Run(ctx, o, logger, ready); err != nil {
		fmt.Fprintf(stderr, "spoold simulate: %v\n", err)
		return exitError
	}
	logger.Info("simulate stopped", "seconds", time.Since(start).Seconds())
	return exitOK
}

// fractionValue is a pflag value for a fraction: "10%" or "0.1".
type fractionValue struct{ p *float64 }

func (v *fractionValue) String() string { return strconv.FormatFloat(*v.p*100, 'g', -1, 64) + "%" }
func (v *fractionValue) Type() string   { return "fraction" }
func (v *fractionValue) Set(s string) error {
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if pct {
		f /= 100
	}
	if err != nil || f < 0 || f > 1 {
		return fmt.Errorf("parse fraction %q: want 0 to 1 or 0%% to 100%%", s)
	}
	*v.p = f
	return nil
}

// numberingValue is a pflag value for simulate.Numbering.
type numberingValue struct{ p *simulate.Numbering }

func (v *numberingValue) String() string { return v.p.String() }
func (v *numberingValue) Type() string   { return "numbering" }
func (v *numberingValue) Set(s string) error {
	n, err := simulate.ParseNumbering(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}
