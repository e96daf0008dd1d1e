package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissingFailsUnderStrict runs a test that calls Missing in a child
// process, with and without SPOOLD_TEST_STRICT=1: it must fail, not skip,
// under the variable.
func TestMissingFailsUnderStrict(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Missing(t, "a tool that no machine has")
		return
	}
	for _, tc := range []struct {
		strict   string
		wantFail bool
		want     string
	}{
		{"1", true, "missing requirement"},
		{"", false, "SKIPPED LOUDLY"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingFailsUnderStrict$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", StrictVar+"="+tc.strict)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s=%q: failed %v, output:\n%s", StrictVar, tc.strict, failed, out)
		}
	}
}
