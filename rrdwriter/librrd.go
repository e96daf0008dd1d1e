//go:build cgo

package rrdwriter

import (
	"time"

	"github.com/ziutek/rrd"
)

// This is the only file that calls librrd. github.com/ziutek/rrd v0.0.3
// calls the thread-safe rrd_create_r, rrd_update_r and rrd_info_r, and
// copies librrd's thread-local error string before returning to Go, so
// those are safe from any goroutine on different files. rrd_graph_v is not
// thread-safe: ziutek serializes it with a package mutex. An update error is
// librrd's message only: which rows landed is learned by reading the last
// update time again (rrd_update_r applies rows in order and stops at the
// first bad one).

// The shims: each one librrd call through github.com/ziutek/rrd, no logic
// (librrd_logic.go has it).

func librrdCreate(path string, start int64, step uint, ds []rrdDS, rras []rrdRRA) error {
	c := rrd.NewCreator(path, time.Unix(start, 0), step)
	for _, d := range ds {
		c.DS(d.name, d.typ, d.heartbeat, d.min, d.max)
	}
	for _, r := range rras {
		c.RRA(r.cf, r.args)
	}
	return c.Create(true)
}

func librrdInfoMap(path string) (map[string]any, error) { return rrd.Info(path) }

func librrdUpdate(path string, template, args []string) error {
	u := rrd.NewUpdater(path)
	if len(template) > 0 {
		u.SetTemplate(template...)
	}
	for _, a := range args {
		u.Cache(a)
	}
	return u.Update()
}

func librrdGraph(c graphCall) ([]byte, error) {
	g := rrd.NewGrapher()
	g.SetTitle(c.title)
	g.SetVLabel(c.vlabel)
	g.SetSize(uint(c.width), uint(c.height))
	g.AddOptions(c.args...)
	_, img, err := g.Graph(c.start, c.end)
	return img, err
}
