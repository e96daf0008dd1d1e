package rrdwriter

import (
	"strconv"
	"strings"
	"testing"

	"github.com/spoold/spoold/rrdcached"
)

// FuzzParseRemoteInfo: from any INFO a peer sends, the forwarder takes a
// header with a step, a last update and data sources of distinct names in
// the order of their ds[].index, or an error naming the peer.
func FuzzParseRemoteInfo(f *testing.F) {
	f.Add("step 1 300\nlast_update 1 1700000000\nds[b].index 1 1\nds[a].index 1 0\nds[a].type 2 GAUGE\nds[b].type 2 COUNTER")
	f.Add("step 1 300\nlast_update 1 1700000000\nds[a].type 2 GAUGE\nds[a].type 2 GAUGE\nds[a].index 1 0")
	f.Add("step 1 x")
	f.Fuzz(func(t *testing.T, info string) {
		vals, err := rrdcached.ParseInfo(strings.Split(info, "\n"))
		if err != nil {
			return
		}
		fi, err := parseRemoteInfo("tcp:127.0.0.1:42217", "a.rrd", vals)
		if err != nil {
			if !strings.Contains(err.Error(), "tcp:127.0.0.1:42217") {
				t.Fatalf("error %q does not name the peer", err)
			}
			return
		}
		index := map[string]int{} // the last ds[NAME].index line of each name
		for _, v := range vals {
			if name, ok := strings.CutSuffix(v.Key, "].index"); ok && strings.HasPrefix(name, "ds[") {
				n, _ := strconv.Atoi(v.Value)
				index[name[len("ds["):]] = n
			}
		}
		seen := map[string]bool{}
		for i, ds := range fi.DS {
			if seen[ds.Name] {
				t.Fatalf("data source %q twice in %+v", ds.Name, fi)
			}
			seen[ds.Name] = true
			if i > 0 && index[fi.DS[i-1].Name] > index[ds.Name] {
				t.Fatalf("data sources %+v not in the order of their indexes %v", fi.DS, index)
			}
		}
		if len(fi.DS) == 0 || len(seen) != len(index) {
			t.Fatalf("%+v from the indexes %v", fi, index)
		}
	})
}
