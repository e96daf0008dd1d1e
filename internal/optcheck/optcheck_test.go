package optcheck

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestFieldErrorNamesItsFieldAndTheOthers(t *testing.T) {
	for _, tc := range []struct {
		msg, err, flags string
		refs            []string
	}{
		{"must be positive", "CycleTimeout must be positive", "must be positive", nil},
		{"must be 0 to {Interval}", "CycleTimeout must be 0 to Interval", "must be 0 to --interval", []string{"Interval"}},
		{"{A} or {B}, not {A}", "CycleTimeout A or B, not A", "--a or --b, not --a", []string{"A", "B", "A"}},
		{"an open { only", "CycleTimeout an open { only", "an open { only", nil},
		{"in /run/{a b}.sock and /{}/{X}", "CycleTimeout in /run/{a b}.sock and /{}/X", "in /run/{a b}.sock and /{}/--x", []string{"X"}},
		{"a close } first {X}", "CycleTimeout a close } first X", "a close } first --x", []string{"X"}},
	} {
		t.Run(tc.msg, func(t *testing.T) {
			err := fmt.Errorf("check options: %w", Errorf("CycleTimeout", tc.msg))
			fe := As(err)
			if fe == nil || fe.Field != "CycleTimeout" {
				t.Fatalf("As(%v) = %v", err, fe)
			}
			if got := fe.Error(); got != tc.err {
				t.Errorf("Error() = %q, want %q", got, tc.err)
			}
			if got := fe.Text(func(f string) string { return "--" + strings.ToLower(f) }); got != tc.flags {
				t.Errorf("Text = %q, want %q", got, tc.flags)
			}
			if got := fe.Refs(); !slices.Equal(got, tc.refs) {
				t.Errorf("Refs = %q, want %q", got, tc.refs)
			}
		})
	}
	if As(fmt.Errorf("plain")) != nil {
		t.Error("As found a FieldError in a plain error")
	}
}
