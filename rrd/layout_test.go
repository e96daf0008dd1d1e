package rrd

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultRRAs(t *testing.T) {
	for _, tc := range []struct {
		step time.Duration
		want string
	}{
		{300 * time.Second, "RRA:AVERAGE:0.5:1:600 RRA:AVERAGE:0.5:6:700 RRA:AVERAGE:0.5:24:775 RRA:AVERAGE:0.5:288:797 RRA:MAX:0.5:1:600 RRA:MAX:0.5:6:700 RRA:MAX:0.5:24:775 RRA:MAX:0.5:288:797"},
		{60 * time.Second, "RRA:AVERAGE:0.5:1:3000 RRA:AVERAGE:0.5:5:600 RRA:AVERAGE:0.5:30:700 RRA:AVERAGE:0.5:120:775 RRA:AVERAGE:0.5:1440:797 RRA:MAX:0.5:5:600 RRA:MAX:0.5:30:700 RRA:MAX:0.5:120:775 RRA:MAX:0.5:1440:797"},
		{2 * time.Second, "RRA:AVERAGE:0.5:1:4000 RRA:AVERAGE:0.5:150:600 RRA:AVERAGE:0.5:900:700 RRA:AVERAGE:0.5:3600:775 RRA:AVERAGE:0.5:43200:797 RRA:MAX:0.5:150:600 RRA:MAX:0.5:900:700 RRA:MAX:0.5:3600:775 RRA:MAX:0.5:43200:797"},
		{time.Hour, "RRA:AVERAGE:0.5:1:50 RRA:AVERAGE:0.5:1:350 RRA:AVERAGE:0.5:2:775 RRA:AVERAGE:0.5:24:797 RRA:MAX:0.5:1:50 RRA:MAX:0.5:1:350 RRA:MAX:0.5:2:775 RRA:MAX:0.5:24:797"},
	} {
		t.Run(tc.step.String(), func(t *testing.T) {
			if got := strings.Join(DefaultRRAs(tc.step), " "); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestLayoutValidate(t *testing.T) {
	good := testLayout()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Layout){
		"step-fraction": func(p *Layout) { p.Step = 1500 * time.Millisecond },
		"no-rra":        func(p *Layout) { p.RRAs = nil },
		"long-name":     func(p *Layout) { p.DS[0].Name = strings.Repeat("a", 20) },
		"colon":         func(p *Layout) { p.DS[0].Name = "a:b" },
		"dup":           func(p *Layout) { p.DS[1].Name = p.DS[0].Name },
		"type":          func(p *Layout) { p.DS[0].Type = "RATE" },
		"heartbeat":     func(p *Layout) { p.DS[0].Heartbeat = 0 },
	} {
		p := testLayout()
		edit(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
