// Package testenv says what a test does when the machine lacks something
// it needs (a tool, tmpfs, inotify, a block device): it skips, loudly,
// unless SPOOLD_TEST_STRICT=1 is set, as .ci/run sets it, and then it
// fails. So a CI run, which installs everything, can never pass a test by
// skipping it, while a developer's machine without chromium still runs
// the rest. It starts no goroutines.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// StrictVar is the environment variable that turns a missing requirement
// into a failure.
const StrictVar = "SPOOLD_TEST_STRICT"

// Strict reports whether missing requirements fail the test.
func Strict() bool { return os.Getenv(StrictVar) == "1" }

// Missing ends the test for a missing requirement described by format:
// a failure under SPOOLD_TEST_STRICT=1, a skip otherwise. It does not
// return.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Strict() {
		tb.Fatalf("missing requirement ("+StrictVar+"=1): "+format, args...)
	}
	tb.Skipf("SKIPPED LOUDLY (set "+StrictVar+"=1 to fail instead): "+format, args...)
}

// LookPath returns the path of the command name, or ends the test as
// Missing does; why says what the command is needed for.
func LookPath(tb testing.TB, name, why string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "the %s command is not installed (scripts/install-deps.sh installs it): %s", name, why)
	}
	return p
}
