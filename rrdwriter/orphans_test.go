package rrdwriter

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/spoold/spoold/rrd"
)

func TestFlushAllSucceedsBesideOrphans(t *testing.T) {
	fake := newFake()
	e := newEnv(t, fake, func(o *Options) {
		o.Layout = func(key string) (rrd.Layout, bool) { return testLayout(), key == "r" }
	})
	written := e.putCG("r", t0, 1, 1)
	orphan := e.putCG("gone", t0, 1, 1)
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatalf("FlushAll with an orphan: %v; want success", err)
	}
	if e.exists(written) || len(fake.rows(e.rrdPath("r"))) != 1 {
		t.Errorf("the configured target was not written")
	}
	if !e.exists(orphan) {
		t.Errorf("the orphan's entry left the spool")
	}
	if got := Orphans(e.w.TargetErrors()); !slices.Equal(got, []string{"gone"}) {
		t.Errorf("Orphans = %v, want [gone]", got)
	}
	// A real failure still fails the flush.
	e.putCG("r", t0+300, 2, 2)
	fake.setFail(errors.New("some librrd failure"))
	if err := e.w.FlushAll(context.Background()); err == nil {
		t.Errorf("FlushAll with a failing target: nil error")
	}
}
