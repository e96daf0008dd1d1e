package enum

import "testing"

func TestNameAndParse(t *testing.T) {
	names := []string{"none", "batch", "always"}
	for i, n := range names {
		if got := Name(names, "P", i); got != n {
			t.Errorf("Name(%d) = %q, want %q", i, got, n)
		}
		if v, err := Parse(names, "p", n); err != nil || v != i {
			t.Errorf("Parse(%q) = %d, %v", n, v, err)
		}
	}
	if got := Name(names, "P", 7); got != "P(7)" {
		t.Errorf("Name(7) = %q", got)
	}
	if _, err := Parse(names, "fsync policy", "None"); err == nil || err.Error() != `parse fsync policy "None": want none, batch or always` {
		t.Errorf("Parse(None) = %v", err)
	}
}
