package simulate

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
)

// Run serves a simulated fleet until ctx is done: the body of `spoold
// simulate`. ready, if not nil, is called with the simulator once it
// listens (to print its address or write a targets file).
func Run(ctx context.Context, opts Options, logger *slog.Logger, ready func(*Simulator) error) error {
	s, err := Listen(opts, logger)
	if err != nil {
		return err
	}
	if ready != nil {
		if err := ready(s); err != nil {
			s.Close()
			return err
		}
	}
	if logger != nil {
		logger.Info("simulating SNMP agents", "addr", s.Addr().String(), "devices", opts.Devices)
	}
	return s.Serve(ctx)
}

// WriteTargets writes a targets file (docs/configuration.md) that polls
// every device of the fleet at addr with the given profile ("if-mib:10")
// over SNMP v2c, timeout and retries as given (timeout "" and retries < 0
// leave the poller's defaults).
func (f *Fleet) WriteTargets(w io.Writer, addr *net.UDPAddr, profile, timeout string, retries int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %d simulated devices (spoold simulate); the community selects the device\n", f.Len())
	fmt.Fprintf(bw, "defaults version=2c profile=%s", profile)
	if timeout != "" {
		fmt.Fprintf(bw, " timeout=%s", timeout)
	}
	if retries >= 0 {
		fmt.Fprintf(bw, " retries=%d", retries)
	}
	fmt.Fprintln(bw)
	a := addr.String()
	for i := range f.Len() {
		name := f.Name(i)
		fmt.Fprintf(bw, "%s %s community=%s\n", name, a, name)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write targets file: %w", err)
	}
	return nil
}
