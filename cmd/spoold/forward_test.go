package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCheckConfigForwardNeedsNoLocalFsync: --rrd-fsync syncs local RRD
// files, which a forwarding instance has none of: -t refuses the pair,
// naming both, and prints the address --forward normalized.
func TestCheckConfigForwardNeedsNoLocalFsync(t *testing.T) {
	targets := okTargets(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-t", "--targets", targets, "--rrd-dir", t.TempDir(), "--forward=/run/x.sock", "--rrd-fsync=always"}, &stdout, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "--rrd-fsync") || !strings.Contains(stderr.String(), "unix:/run/x.sock") {
		t.Fatalf("exit %d, stderr %q: want --rrd-fsync refused, naming the peer", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-t", "--targets", targets, "--rrd-dir", t.TempDir(), "--forward=/run/x.sock", "--shard=2/3"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"forward=unix:/run/x.sock", "shard=2/3", "forward-timeout=30s"} {
		if !strings.Contains(stdout.String(), want) {
			t.Fatalf("-t printed %q, without %q", stdout.String(), want)
		}
	}
}
