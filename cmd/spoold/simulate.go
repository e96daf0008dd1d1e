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

// runSimulate is `spoold simulate`: a simulated fleet of SNMP agents on a
// loopback address until SIGINT or SIGTERM.
func runSimulate(args []string, stdout, stderr io.Writer) int {
	o := simulate.DefaultOptions()
	var targetsOut, profile, targetTimeout string
	targetRetries := -1
	fs := pflag.NewFlagSet("spoold simulate", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `usage: spoold simulate [flags]

Answers SNMP v1/v2c Gets for a simulated fleet on one loopback UDP port; the
community selects the device (dev00000, dev00001, ...). Counters are a known
function of device and time. Fractions ("10%%" or 0.1) of the devices can be
dead, slow, miss OIDs, wrap their counters or restart. --targets-out writes a
targets file that polls the whole fleet.

`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Addr, "listen", o.Addr, "UDP address to answer on (loopback only)")
	fs.IntVar(&o.Devices, "devices", o.Devices, "number of devices")
	fs.IntVar(&o.Interfaces, "interfaces", o.Interfaces, "interfaces per device (ifIndex 1..n)")
	fs.StringVar(&o.Prefix, "prefix", o.Prefix, "device name and community prefix")
	fs.Var(&fractionValue{&o.Dead}, "dead", "fraction of devices that never answer")
	fs.Var(&fractionValue{&o.Slow}, "slow", "fraction of devices that answer after --slow-delay")
	fs.DurationVar(&o.SlowDelay, "slow-delay", o.SlowDelay, "response delay of slow devices")
	fs.Var(&fractionValue{&o.Missing}, "missing", "fraction of devices missing a column and half their interfaces")
	fs.Var(&fractionValue{&o.Wrap}, "wrap", "fraction of devices whose counters wrap --wrap-after each boot")
	fs.DurationVar(&o.WrapAfter, "wrap-after", o.WrapAfter, "uptime at which wrapping counters pass zero")
	fs.Var(&fractionValue{&o.Restart}, "restart", "fraction of devices that reboot every --restart-every")
	fs.DurationVar(&o.RestartEvery, "restart-every", o.RestartEvery, "reboot period of restarting devices")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines answering requests (0 = GOMAXPROCS)")
	fs.StringVar(&targetsOut, "targets-out", "", "write a targets file for the fleet to this path")
	fs.StringVar(&profile, "targets-profile", "", "profile of the written targets (default if-mib:<interfaces>)")
	fs.StringVar(&targetTimeout, "targets-timeout", "", "timeout= of the written targets (default: the poller's)")
	fs.IntVar(&targetRetries, "targets-retries", targetRetries, "retries= of the written targets (-1: the poller's)")
	if code, ok := parseCommandFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "spoold simulate: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if profile == "" {
		profile = "if-mib:" + strconv.Itoa(o.Interfaces)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ready := func(s *simulate.Simulator) error {
		fmt.Fprintf(stdout, "simulate: listening on %s, %d devices\n", s.Addr(), o.Devices)
		if targetsOut == "" {
			return nil
		}
		f, err := os.Create(targetsOut)
		if err != nil {
			return fmt.Errorf("create targets file: %w", err)
		}
		err = s.Fleet().WriteTargets(f, s.Addr(), profile, targetTimeout, targetRetries)
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
