package doctor

import (
	"fmt"
	"io"
	"strings"
)

// Severity of a finding.
type Severity string

const (
	OK   Severity = "ok"
	Warn Severity = "warn"
)

// Finding is one thing the doctor looked at.
type Finding struct {
	// Check names what was looked at: "read-ahead", "atime", "commit",
	// "data", "space", "inodes", "rrd-dir", "nofile", "landlock", "spool",
	// "rrd-update".
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	// Dirs are the directories the finding is about (empty for the process).
	Dirs []string `json:"dirs,omitempty"`
	// Found says what was found, with the figures.
	Found string `json:"found"`
	// Why is the trade-off, briefly.
	Why string `json:"why,omitempty"`
	// Fix is the exact command that changes it; only a warning has one
	// (Report.add drops it from an ok finding: nothing needs changing).
	Fix string `json:"fix,omitempty"`
}

// Report is the result of Run.
type Report struct {
	Findings []Finding `json:"findings"`
	// Spool is the spool's size and implied loader time; nil when the spool
	// directory does not exist.
	Spool *SpoolSize `json:"spool,omitempty"`
	// Update is the measured RRD update; nil when it was skipped or failed.
	Update *UpdateCost `json:"rrd_update,omitempty"`
	// Warnings counts the findings of severity warn.
	Warnings int `json:"warnings"`
}

func (r *Report) add(f Finding) {
	if f.Severity != Warn {
		f.Fix = ""
	}
	r.Findings = append(r.Findings, f)
	if f.Severity == Warn {
		r.Warnings++
	}
}

// WriteText writes the report for a terminal: one block per finding.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%-4s %-10s %s", f.Severity, f.Check, f.Found)
		if len(f.Dirs) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(f.Dirs, ", "))
		}
		b.WriteByte('\n')
		if f.Why != "" {
			fmt.Fprintf(&b, "               why: %s\n", f.Why)
		}
		if f.Fix != "" {
			fmt.Fprintf(&b, "               fix: %s\n", f.Fix)
		}
	}
	fmt.Fprintf(&b, "%d findings, %d warnings\n", len(r.Findings), r.Warnings)
	_, err := io.WriteString(w, b.String())
	return err
}
