package rrd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/spool"
)

func TestRRDPath(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct{ key, want string }{
		{"router1", "router1.rrd"},
		{"site/router1", "site/router1.rrd"},
		{"../../etc/passwd", "%2E./%2E./etc/passwd.rrd"},
		{"/etc/passwd", "%2Fetc%2Fpasswd.rrd"},
		{"a//b", "a%2F%2Fb.rrd"},
		{"a/", "a%2F.rrd"},
		{"..", "%2E..rrd"},
		{".hidden", "%2Ehidden.rrd"},
		{"x.rrd/y", "x%2Errd/y.rrd"},
		{"sw 1:eth0%", "sw%201%3Aeth0%25.rrd"},
		{"é", "%C3%A9.rrd"},
		{long, long[:200] + "~" + spool.Ref{Hash: spool.KeyHash(long)}.String()[:16] + ".rrd"},
	} {
		t.Run(tc.key[:min(len(tc.key), 20)], func(t *testing.T) {
			got := RRDPath(tc.key)
			if got != tc.want {
				t.Fatalf("RRDPath(%q) = %q, want %q", tc.key, got, tc.want)
			}
			if filepath.IsAbs(got) || filepath.Clean(got) != got {
				t.Fatalf("RRDPath(%q) = %q is not a clean relative path", tc.key, got)
			}
			for _, seg := range strings.Split(got, "/") {
				if seg == "" || seg[0] == '.' || len(seg) > 255 {
					t.Fatalf("RRDPath(%q) has segment %q", tc.key, seg)
				}
			}
		})
	}
}

func FuzzRRDPath(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../x", "/", "x.rrd/y", "", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		got := RRDPath(key)
		if filepath.IsAbs(got) || filepath.Clean(got) != got || !strings.HasSuffix(got, ".rrd") {
			t.Fatalf("RRDPath(%q) = %q", key, got)
		}
		segs := strings.Split(got, "/")
		for i, seg := range segs {
			if seg == "" || seg[0] == '.' || (i < len(segs)-1 && strings.HasSuffix(seg, ".rrd")) {
				t.Fatalf("RRDPath(%q) = %q: bad segment %q", key, got, seg)
			}
		}
	})
}

// TestPathKeyInvertsRRDPath: the key of a poller target's file is found
// from the file's name, so an UPDATE of it can be refused.
func TestPathKeyInvertsRRDPath(t *testing.T) {
	for _, key := range []string{"router1", "sw-2.example.net", "dev/eth0", "a b", "dev//x", ".hidden", "x.rrd/y", "%41"} {
		got, ok := PathKey(RRDPath(key))
		if !ok || got != key {
			t.Errorf("pathKey(RRDPath(%q) = %q) = %q, %v", key, RRDPath(key), got, ok)
		}
	}
	for _, file := range []string{"host/load.rrd", "load", "a%2.rrd", "x%41.rrd"} {
		if k, ok := PathKey(file); ok && RRDPath(k) != file {
			t.Errorf("pathKey(%q) = %q, whose file is %q", file, k, RRDPath(k))
		}
	}
	if _, ok := PathKey(RRDPath(strings.Repeat("x", 300))); ok {
		t.Error("a name cut to a hash was inverted")
	}
}

// TestProtocolKeyPath: a protocol key's file is its name verbatim; a key
// that only looks like one goes through RRDPath.
func TestProtocolKeyPath(t *testing.T) {
	for key, want := range map[string]string{
		"/host/load.rrd": "host/load.rrd",
		"/x":             "x",
		"/../x":          RRDPath("/../x"),
		"/a//b":          RRDPath("/a//b"),
		"/":              RRDPath("/"),
		"router1":        "router1.rrd",
	} {
		if got := KeyPath(key); got != want {
			t.Errorf("keyPath(%q) = %q, want %q", key, got, want)
		}
	}
}
