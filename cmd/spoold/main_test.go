package main

import (
	"os"
	"testing"
)

// childEnv makes the test binary act as spoold itself, so the end-to-end
// tests run the real daemon as a separate process (signals, SIGKILL) without
// a separate build step.
const childEnv = "SPOOLD_TEST_RUN_AS_SPOOLD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(run(commandLine(os.Args), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
