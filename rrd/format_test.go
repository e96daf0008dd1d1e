package rrd

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestParseHeaderMatchesRRDTool: the layout read from files rrdtool
// create writes (formats 0003 and 0005, every data source type, forecasting
// archives too) is the one rrdtool info reports, and the file is exactly
// as long as the layout says.
func TestParseHeaderMatchesRRDTool(t *testing.T) {
	cases := []struct {
		version int
		defs    []string
	}{
		{3, []string{"DS:a:GAUGE:600:U:U", "DS:bb:COUNTER:700:0:1e9", "DS:c:DERIVE:60:-5:5", "DS:d:ABSOLUTE:1:U:7", "DS:e:COMPUTE:a,bb,+",
			"RRA:AVERAGE:0.5:1:10", "RRA:MIN:0.25:3:7", "RRA:MAX:0:288:2", "RRA:LAST:0.99:12:5"}},
		{5, []string{"DS:a:DCOUNTER:600:U:U", "DS:b:DDERIVE:600:-1:1", "RRA:AVERAGE:0.5:1:10"}},
		{3, []string{"DS:a:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:HWPREDICT:20:0.1:0.0035:6"}},
		{4, []string{"DS:a:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:MHWPREDICT:20:0.1:0.0035:6"}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%04d/%s", c.version, strings.Join(c.defs, ",")), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.rrd")
			createRRD(t, path, t0, 300, c.defs...)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			h, need, err := ParseHeader(b)
			if err != nil || h == nil || need > len(b) {
				t.Fatalf("ParseHeader: %v (need %d of %d)", err, need, len(b))
			}
			if h.Version != c.version || h.FileLen() != int64(len(b)) {
				t.Errorf("version %d, file length %d; want %d and %d", h.Version, h.FileLen(), c.version, len(b))
			}
			info := rrdInfo(t, path)
			want := map[string]string{"step": "300", "last_update": strconv.FormatInt(t0, 10), "header_size": strconv.FormatInt(h.HeaderLen(), 10)}
			for _, d := range h.DS {
				k := "ds[" + d.Name + "]."
				want[k+"type"] = `"` + d.Type + `"`
				if d.Type != "COMPUTE" {
					want[k+"minimal_heartbeat"] = strconv.FormatUint(d.Heartbeat(), 10)
					want[k+"min"] = infoFloat(d.Min())
					want[k+"max"] = infoFloat(d.Max())
				}
			}
			for i, r := range h.RRA {
				k := fmt.Sprintf("rra[%d].", i)
				want[k+"cf"] = `"` + r.CF + `"`
				want[k+"rows"] = strconv.FormatUint(r.Rows, 10)
				want[k+"pdp_per_row"] = strconv.FormatUint(r.PDPs, 10)
			}
			for k, v := range want {
				if info[k] != v {
					t.Errorf("%s: rrdtool info says %q, the header %q", k, info[k], v)
				}
			}
		})
	}
}

// rrdInfo returns rrdtool info's keys and values.
func rrdInfo(t *testing.T, path string) map[string]string {
	out, err := rrdtool(t, "info", path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, " = "); ok {
			m[k] = v
		}
	}
	return m
}

// infoFloat formats v as rrdtool info does.
func infoFloat(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return strconv.FormatFloat(v, 'e', 10, 64)
}

// TestParseHeaderShort: every prefix of a header asks for more bytes
// rather than misreading it.
func TestParseHeaderShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rrd")
	createRRD(t, path, t0, 300, "DS:a:GAUGE:600:U:U", "DS:b:COUNTER:600:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:MAX:0.5:6:10")
	b, _ := os.ReadFile(path)
	full, _, err := ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	for n := range int(full.liveOff) {
		h, need, err := ParseHeader(b[:n])
		if h != nil || err != nil || need <= n {
			t.Fatalf("%d bytes: header %v, need %d, %v", n, h != nil, need, err)
		}
	}
}

// FileLen is the length of a whole file with this header: librrd refuses
// a shorter one.
func (h *Header) FileLen() int64 { return h.fileLen }
