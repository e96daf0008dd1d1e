package simulate

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"
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

// snmprecTags are snmpsim's type tags of the types the fleet serves.
var snmprecTags = map[gosnmp.Asn1BER]string{
	gosnmp.Integer: "2", gosnmp.OctetString: "4", gosnmp.ObjectIdentifier: "6", gosnmp.Counter32: "65",
	gosnmp.Gauge32: "66", gosnmp.TimeTicks: "67", gosnmp.Counter64: "70",
}

// WriteSnmprec writes what device i serves at time t as an snmpsim data
// file (<community>.snmprec: "OID|tag|value" lines in OID order, strings
// in hex where they are not plain text), so that snmpsimd serves the same
// values, frozen at t.
func (f *Fleet) WriteSnmprec(w io.Writer, i int, t time.Time) error {
	bw := bufio.NewWriter(w)
	for _, v := range f.Walk(i, "", t) {
		tag, val := snmprecTags[v.Type], fmt.Sprint(v.Value)
		switch x := v.Value.(type) {
		case []byte:
			val = string(x)
			if !plainText(x) {
				tag, val = tag+"x", hex.EncodeToString(x)
			}
		case string:
			val = strings.TrimPrefix(x, ".")
		}
		fmt.Fprintf(bw, "%s|%s|%s\n", strings.TrimPrefix(v.Name, "."), tag, val)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write snmprec file: %w", err)
	}
	return nil
}

func plainText(b []byte) bool {
	for _, c := range b {
		if c < ' ' || c > '~' || c == '|' {
			return false
		}
	}
	return true
}
