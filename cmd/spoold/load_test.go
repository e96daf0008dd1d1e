package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/spoolgen"
	"github.com/spoold/spoold/spool"
)

func TestLoadPrintsSummaryAndQuarantinesOnlyBadFiles(t *testing.T) {
	dir := t.TempDir()
	sp := spoolgen.OpenTest(t, dir)
	o := spoolgen.DefaultOptions()
	o.Entries, o.Keys = 500, 40
	if _, err := spoolgen.Generate(sp, o); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, spool.TmpDir, "999.dead.1")
	if err := os.WriteFile(stale, []byte("half"), 0o640); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "0", "00", "not-an-entry")
	if err := os.MkdirAll(filepath.Dir(bad), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	sp.Close()

	var stdout, stderr bytes.Buffer
	code := run([]string{"load", "--spool-dir", dir, "--loader-files", "50", "--loader-sleep", "0"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	var sum loadSummary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	if sum.Entries != 500 || sum.Quarantined != 1 || sum.Files != 501 {
		t.Fatalf("summary = %+v, want 500 entries, 1 quarantined, 501 files", sum)
	}
	if sum.Iterations < 10 {
		t.Fatalf("iterations = %d, want >= 10 for 501 files at loader_files=50", sum.Iterations)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("the dry run removed a temp file: %v", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatalf("bad file not moved: %v", err)
	}
	q, _ := filepath.Glob(filepath.Join(dir, spool.QuarantineDir, "not-an-entry.*"))
	if len(q) != 2 { // the file and its .reason
		t.Fatalf("quarantine holds %v", q)
	}
}

func TestLoadRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--levels 3:3", "levels"},
		{"--loader-files 0", "loader_files"},
		{"--loader-cpu 150%", "loader-cpu"},
		{"--keys-zone 12q", "keys-zone"},
		{"--fsync sometimes", "fsync"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"load", "--spool-dir", t.TempDir()}, strings.Fields(tc.args)...)
			if code := run(args, &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q does not name %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestSecondLoadOnALockedSpoolFails(t *testing.T) {
	dir := t.TempDir()
	spoolgen.OpenTest(t, dir)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"load", "--spool-dir", dir}, &stdout, &stderr); code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if !strings.Contains(stderr.String(), "locked by another process") {
		t.Fatalf("stderr = %q", stderr.String())
	}
}
