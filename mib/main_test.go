package mib

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: the package
// starts none.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
