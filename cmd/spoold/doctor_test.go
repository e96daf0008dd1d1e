package main

import (
	"bytes"
	"encoding/json"
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
// code must agree with the warnings of the JSON document.
func TestDoctorJSON(t *testing.T) {
	base := t.TempDir()
	var out, errb bytes.Buffer
	code := runDoctor([]string{"--spool-dir", filepath.Join(base, "spool"), "--rrd-dir", base,
		"--loader-files", "500", "--loader-sleep", "10ms", "--json"}, &out, &errb)
	var rep struct {
		Findings []struct {
			Check, Severity, Found, Fix string
		}
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
}

func TestDoctorText(t *testing.T) {
	base := t.TempDir()
	var out, errb bytes.Buffer
	code := runDoctor([]string{"--spool-dir", base, "--rrd-dir", base}, &out, &errb)
	if code == exitUsage || !strings.Contains(out.String(), "nofile") {
		t.Errorf("exit %d, output:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
}
