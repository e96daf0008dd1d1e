package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test if it does not
// within the bound: a bound on something that happens, not a wait for time
// to pass.
func WaitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
