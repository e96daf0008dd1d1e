package spoolgen

import (
	"testing"

	"github.com/spoold/spoold/spool"
)

func TestGenerateWritesReadableEntries(t *testing.T) {
	sp := OpenTest(t, t.TempDir())
	o := Options{Entries: 50, Keys: 7, Values: 3, Start: 1000, Step: 300, Workers: 3}
	n, err := Generate(sp, o)
	if err != nil || n != 50 {
		t.Fatalf("Generate = %d, %v", n, err)
	}
	// Entry 49 is key 49%7=0, poll 49/7=7.
	e, err := sp.Read(spool.Ref{Hash: spool.KeyHash(Key(0)), Time: 1000 + 7*300})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Values) != 3 || e.Values[2].Counter != 7*3000 {
		t.Fatalf("entry = %+v", e)
	}
	if sp.Stats().Written != 50 {
		t.Fatalf("written = %d", sp.Stats().Written)
	}
}
