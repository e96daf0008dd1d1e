package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctorExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"--bogus"}, exitUsage},
		{"bad levels", []string{"--levels", "1:9"}, exitUsage},
		{"loader-files 0", []string{"--loader-files", "0"}, exitUsage},
		{"poll-concurrency 0", []string{"--poll-concurrency", "0"}, exitUsage},
		{"stray argument", []string{"extra"}, exitUsage},
		{"help", []string{"--help"}, exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := runDoctor(tc.args, &out, &errb); got != tc.want {
				t.Errorf("runDoctor(%q) = %d, want %d; stderr:\n%s", tc.args, got, tc.want, errb.String())
			}
		})
	}
}

// TestDoctorJSON runs the whole doctor on temporary directories: the exit
// code must agree with the warnings of the JSON document, the spool's
// files are counted with its levels, and an update of a librrd file is
// measured.
func TestDoctorJSON(t *testing.T) {
	base := t.TempDir()
	spoolDir := filepath.Join(base, "spool")
	for _, p := range []string{"c/29/000000000000029c-1700000000", "c/29/000000000000029c-1700000300", "0/10/0000000000000100-1700000000"} {
		p = filepath.Join(spoolDir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code := runDoctor([]string{"--spool-dir", spoolDir, "--levels", "1:2", "--rrd-dir", base,
		"--loader-files", "500", "--loader-sleep", "10ms", "--json"}, &out, &errb)
	var rep struct {
		Findings []struct {
			Check, Severity, Found, Fix string
		}
		Spool *struct {
			Entries  uint64 `json:"entries"`
			LeafDirs int    `json:"leaf_dirs"`
		}
		Update *struct {
			FileBytes int64 `json:"file_bytes"`
		} `json:"rrd_update"`
		Warnings int
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out.String())
	}
	want := exitOK
	if rep.Warnings > 0 {
		want = exitError
	}
	if code != want || len(rep.Findings) == 0 {
		t.Errorf("exit %d with %d warnings in %d findings; stderr:\n%s", code, rep.Warnings, len(rep.Findings), errb.String())
	}
	if rep.Spool == nil || rep.Spool.Entries != 3 || rep.Spool.LeafDirs != 2 {
		t.Errorf("spool %+v, want 3 entries in 2 leaf directories", rep.Spool)
	}
	if rep.Update == nil || rep.Update.FileBytes == 0 {
		t.Errorf("no update measured on a librrd sample file:\n%s", out.String())
	}
}

func TestDoctorText(t *testing.T) {
	base := t.TempDir()
	var out, errb bytes.Buffer
	code := runDoctor([]string{"--spool-dir", base, "--rrd-dir", base}, &out, &errb)
	if code == exitUsage || !strings.Contains(out.String(), "nofile") {
		t.Errorf("exit %d, output:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
}
