//go:build cgo

package rrdwriter

/*
#cgo pkg-config: librrd
#include <stdlib.h>
#include <string.h>
#include <rrd.h>

// spoold_rrd_update calls rrd_update_r as rrdcached's queue thread does,
// with every row of one file. args holds the path, the template (if tmpl)
// and the rows, each NUL-terminated, back to back; librrd copies each row
// before parsing it and keeps nothing. It returns a copy of librrd's
// thread-local error message (the caller frees it), or NULL.
static char *spoold_rrd_update(const char *args, int rows, int tmpl) {
	const char *path = args, *template = NULL;
	args += strlen(args) + 1;
	if (tmpl) {
		template = args;
		args += strlen(args) + 1;
	}
	const char **argv = malloc(rows * sizeof *argv);
	if (argv == NULL)
		return strdup("update: out of memory");
	for (int i = 0; i < rows; i++) {
		argv[i] = args;
		args += strlen(args) + 1;
	}
	rrd_clear_error();
	rrd_update_r(path, template, rows, argv);
	free(argv);
	return rrd_test_error() ? strdup(rrd_get_error()) : NULL;
}
*/
import "C"

import (
	"errors"
	"time"
	"unsafe"

	"github.com/ziutek/rrd"
)

// This is the only file that calls librrd. github.com/ziutek/rrd v0.0.3
// calls the thread-safe rrd_create_r and rrd_info_r, and copies librrd's
// thread-local error string before returning to Go, so those are safe from
// any goroutine on different files. rrd_graph_v is not thread-safe: ziutek
// serializes it with a package mutex. Updates, the hot path, call
// rrd_update_r directly (spoold_rrd_update above): ziutek's Updater copies
// every row twice more (fmt.Sprint, then malloc) and makes a C string per
// row. An update error is librrd's message only: which rows landed is
// learned by reading the last update time again (rrd_update_r applies rows
// in order and stops at the first bad one).

// The shims: each one librrd call, no logic (librrd_logic.go has it).

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

// librrdUpdate updates a file with rows rows: args is as
// spoold_rrd_update takes it (updateArgs builds it). Go memory holding no
// Go pointers, used only during the call, may be passed to C.
func librrdUpdate(args []byte, rows int, template bool) error {
	tmpl := C.int(0)
	if template {
		tmpl = 1
	}
	e := C.spoold_rrd_update((*C.char)(unsafe.Pointer(&args[0])), C.int(rows), tmpl)
	if e == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(e))
	return errors.New(C.GoString(e))
}

func librrdGraph(o GraphOptions, lines []rrdLine) ([]byte, error) {
	g := rrd.NewGrapher()
	g.SetTitle(o.Title)
	g.SetSize(uint(o.Width), uint(o.Height))
	for _, l := range lines {
		g.Def(l.vname, l.def, l.ds, "AVERAGE")
		g.Line(1, l.vname, l.color, l.legend)
	}
	_, img, err := g.Graph(o.Start, o.End)
	return img, err
}
