package fleet

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/rrd"
)

func TestInstanceSegment(t *testing.T) {
	for _, tc := range []struct{ name, seg string }{
		{"eth0", "eth0"},
		{"Gi0/1", "Gi0_2F1"},
		{"ge-0/0/0.100", "ge-0_2F0_2F0.100"},
		{"Ethernet 1", "Ethernet_201"},
		{"br_lan", "br__lan"},
		{".hidden", "_2Ehidden"},
		{"a.b", "a.b"},
		{"..", "_2E."},
		{"%", "_25"},
		{"/", "_2F"},
		{"\xff", "_FF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := InstanceSegment(tc.name); got != tc.seg {
				t.Fatalf("InstanceSegment(%q) = %q, want %q", tc.name, got, tc.seg)
			}
			if back, ok := InstanceName(tc.seg); !ok || back != tc.name {
				t.Fatalf("InstanceName(%q) = %q, %v", tc.seg, back, ok)
			}
			key := RowKey("sw1", tc.seg)
			if p := rrd.RRDPath(key); p != "sw1/"+tc.seg+".rrd" {
				t.Fatalf("RRDPath(%q) = %q: the row's file is not named like its key", key, p)
			}
		})
	}
	long := strings.Repeat("x/", 100)
	seg := InstanceSegment(long)
	if len(seg) > MaxInstanceSegment+18 || !strings.Contains(seg, "_H") {
		t.Fatalf("long name: %q", seg)
	}
	if _, ok := InstanceName(seg); ok {
		t.Fatalf("the hash form %q decodes", seg)
	}
	longIndex := strings.Repeat("4294967295.", 127) + "1"
	if a, b := EmptyInstanceSegment(longIndex), EmptyInstanceSegment(longIndex+"0"); len(a) > 2+maxIndexInSegment+18 || a == b {
		t.Errorf("long indexes: %q and %q", a, b)
	}
	for _, s := range []string{EmptyInstanceSegment("3"), CollidingInstanceSegment("Null0", "12")} {
		if _, ok := InstanceName(s); ok {
			t.Errorf("%q decodes as a name: it could be some row's", s)
		}
	}
}

func TestSplitKey(t *testing.T) {
	for _, tc := range []struct{ key, target, rest string }{
		{"sw1", "sw1", ""}, {"sw1/Gi0_2F1", "sw1", "Gi0_2F1"}, {"h/storage/_2F", "h", "storage/_2F"},
	} {
		if tg, r := SplitKey(tc.key); tg != tc.target || r != tc.rest {
			t.Errorf("SplitKey(%q) = %q, %q", tc.key, tg, r)
		}
	}
}

// FuzzInstanceSegment checks the mapping's properties for any name: the
// segment is made of bytes RRDPath keeps, so the row's file is
// <target>/<segment>.rrd inside the RRD directory; it decodes back to the
// name (or is the hash form, of a long name); two different names give two
// different segments.
func FuzzInstanceSegment(f *testing.F) {
	for _, s := range []string{"eth0", "Gi0/1", "../../etc/passwd", ".", "..", "_2F", "a_b", strings.Repeat("/", 300)} {
		f.Add(s, "x"+s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if a == "" {
			return
		}
		seg := InstanceSegment(a)
		for i := 0; i < len(seg); i++ {
			if c := seg[i]; !segmentByte(c) && c != '_' || c == '.' && i == 0 {
				t.Fatalf("segment %q of %q has byte %q at %d", seg, a, c, i)
			}
		}
		p := rrd.RRDPath(RowKey("t", seg))
		if p != "t/"+seg+".rrd" || !filepath.IsLocal(p) || filepath.Clean(p) != p {
			t.Fatalf("name %q: file %q escapes or is renamed", a, p)
		}
		back, ok := InstanceName(seg)
		if ok && back != a || !ok && !strings.Contains(seg, "_H") {
			t.Fatalf("name %q: segment %q decodes to %q, %v", a, seg, back, ok)
		}
		if b != "" && b != a && InstanceSegment(b) == seg {
			t.Fatalf("names %q and %q share segment %q", a, b, seg)
		}
	})
}
