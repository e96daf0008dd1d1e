package rrd

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// TestNativeFallsBack: files and updates the native path does not handle
// give a *NotNativeError with their reason, and leave the file as it was.
func TestNativeFallsBack(t *testing.T) {
	type tc struct {
		defs     []string
		patch    func(b []byte) // changes the created file
		template []string
		update   string
		reason   string
	}
	gauge := []string{"DS:a:GAUGE:120:U:U", "RRA:AVERAGE:0.5:1:5"}
	cases := []tc{
		{defs: []string{"DS:a:GAUGE:120:U:U", "RRA:AVERAGE:0.5:1:5", "RRA:HWPREDICT:10:0.1:0.0035:5"}, update: ":1", reason: ReasonArchive},
		{defs: []string{"DS:a:GAUGE:120:U:U", "RRA:AVERAGE:0.5:1:5", "RRA:MHWPREDICT:10:0.1:0.0035:5"}, update: ":1", reason: ReasonArchive},
		{defs: gauge, patch: func(b []byte) { copy(b[4:], "0001") }, update: ":1", reason: ReasonVersion},
		{defs: gauge, patch: func(b []byte) { b[16], b[23] = b[23], b[16] }, update: ":1", reason: ReasonArch},
		{defs: gauge, patch: func(b []byte) { copy(b[statHeadSize+nameSize:], "SPEED\x00") }, update: ":1", reason: ReasonDSType},
		{defs: []string{"DS:a:GAUGE:120:U:U", "DS:b:COMPUTE:a,SIN", "RRA:AVERAGE:0.5:1:5"}, update: ":1", reason: ReasonCompute},
		{defs: []string{"DS:a:GAUGE:120:U:U", "DS:b:COMPUTE:a,2,%", "RRA:AVERAGE:0.5:1:5"}, update: ":1", reason: ReasonCompute},
		{defs: gauge, update: ":nan", reason: ReasonValue},
		{defs: gauge, update: ":1e2000", reason: ReasonValue},
		{defs: gauge, update: ": 5", reason: ReasonValue},
		{defs: gauge, update: ":0x10", reason: ReasonValue},
		{defs: []string{"DS:a:COUNTER:120:U:U", "RRA:AVERAGE:0.5:1:5"}, update: ":-5", reason: ReasonValue},
		{defs: []string{"DS:a:COUNTER:120:U:U", "RRA:AVERAGE:0.5:1:5"}, update: ":1.5", reason: ReasonValue},
		{defs: gauge, update: ":1:2", reason: ReasonValue},
		{defs: gauge, template: []string{"b"}, update: ":1", reason: ReasonTemplate},
		{defs: []string{"DS:a:GAUGE:120:U:U", "DS:b:COMPUTE:a,2,*", "RRA:AVERAGE:0.5:1:5"}, template: []string{"b"}, update: ":1", reason: ReasonTemplate},
		{defs: gauge, patch: func(b []byte) { ne.PutUint64(b[len(b)-5*8-8:], 5) }, update: ":1", reason: ReasonLayout},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%s/%v", c.defs, c.update, c.template), func(t *testing.T) {
			tw := newTwin(t, t0, 60, c.defs...)
			b, _ := os.ReadFile(tw.nat)
			if c.patch != nil {
				c.patch(b)
				if err := os.WriteFile(tw.nat, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := tw.nativeUpdate(t, c.template, []string{fmt.Sprint(t0+30, c.update)})
			var nn *NotNativeError
			if !errors.As(err, &nn) || nn.Reason != c.reason {
				t.Fatalf("got %v, want a fallback for %s", err, c.reason)
			}
			if after, _ := os.ReadFile(tw.nat); string(after) != string(b) {
				t.Fatal("a fallback changed the file")
			}
		})
	}
}
