//go:build cgo

package rrd

/*
#cgo pkg-config: librrd
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <rrd.h>

// spoold_malloc_arenas: see BoundCMalloc.
static int spoold_malloc_arenas(int arenas) { return mallopt(M_ARENA_MAX, arenas); }

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

// librrd's error string is per thread: each helper copies it before
// returning to Go, whose next call may run on another thread.
static char *spoold_error(void) { return strdup(rrd_get_error()); }

static time_t spoold_first(const char *file, int rra, char **err) {
	rrd_clear_error();
	time_t t = rrd_first_r(file, rra);
	if (t < 0 || rrd_test_error()) *err = spoold_error();
	return t;
}

static rrd_info_t *spoold_info(const char *file, char **err) {
	rrd_clear_error();
	rrd_info_t *i = rrd_info_r(file);
	if (i == NULL) *err = spoold_error();
	return i;
}

static int spoold_create(const char *file, unsigned long step, time_t last_up, const char **sources, const char *template, int argc, const char **argv, char **err) {
	rrd_clear_error();
	int rc = rrd_create_r2(file, step, last_up, 1, sources, template, argc, argv);
	if (rc != 0) *err = spoold_error();
	return rc;
}

static int spoold_info_type(rrd_info_t *i) { return i->type; }
static double spoold_info_val(rrd_info_t *i) { return i->value.u_val; }
static unsigned long spoold_info_cnt(rrd_info_t *i) { return i->value.u_cnt; }
static int spoold_info_int(rrd_info_t *i) { return i->value.u_int; }
static char *spoold_info_str(rrd_info_t *i) { return i->value.u_str; }
static unsigned long spoold_info_blob(rrd_info_t *i) { return i->value.u_blo.size; }
*/
import "C"

import (
	"errors"
	"time"
	"unsafe"

	ziutek "github.com/ziutek/rrd"
)

// This is the only file that calls librrd, one shim per librrd call and no
// logic (the package's other files have it, and build without cgo).
// Updates, the hot path, call rrd_update_r directly (spoold_rrd_update
// above): ziutek's Updater copies every row twice more (fmt.Sprint, then
// malloc) and makes a C string per row. An update error is librrd's
// message only: which rows landed is learned by reading the last update
// time again (rrd_update_r applies rows in order and stops at the first
// bad one). rrd_first_r, rrd_info_r and rrd_create_r2 are called directly
// too, and rrd_fetch_r through github.com/ziutek/rrd v0.0.3, which copies
// librrd's thread-local error string before returning to Go, so all are
// safe from any goroutine on different files. rrd_graph_v is not
// thread-safe: ziutek serializes it with a package mutex.

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

func librrdGraph(c GraphCall) ([]byte, error) {
	g := ziutek.NewGrapher()
	g.SetTitle(c.Title)
	g.SetVLabel(c.VLabel)
	g.SetSize(uint(c.Width), uint(c.Height))
	g.AddOptions(c.Args...)
	_, img, err := g.Graph(c.Start, c.End)
	return img, err
}

// cError returns the copied librrd error and frees it.
func cError(err *C.char) error {
	defer C.free(unsafe.Pointer(err))
	return errors.New(C.GoString(err))
}

func librrdFirst(path string, rra int) (int64, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.char
	t := C.spoold_first(cpath, C.int(rra), &cerr)
	if cerr != nil {
		return 0, cError(cerr)
	}
	return int64(t), nil
}

// librrdInfo lists the header with rrd_info_r, in librrd's order.
func librrdInfo(path string) ([]InfoItem, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.char
	info := C.spoold_info(cpath, &cerr)
	if info == nil {
		return nil, cError(cerr)
	}
	defer C.rrd_info_free(info)
	var items []InfoItem
	for i := info; i != nil; i = i.next {
		it := InfoItem{Key: C.GoString(i.key), Type: InfoType(C.spoold_info_type(i))}
		switch it.Type {
		case C.RD_I_VAL:
			it.Val = float64(C.spoold_info_val(i))
		case C.RD_I_CNT:
			it.Cnt = uint64(C.spoold_info_cnt(i))
		case C.RD_I_INT:
			it.Int = int64(C.spoold_info_int(i))
		case C.RD_I_STR:
			it.Str = C.GoString(C.spoold_info_str(i))
		case C.RD_I_BLO:
			it.Cnt = uint64(C.spoold_info_blob(i))
		}
		items = append(items, it)
	}
	return items, nil
}

func librrdFetch(path, cf string, start, end time.Time, step time.Duration) (Fetched, error) {
	r, err := ziutek.Fetch(path, cf, start, end, step)
	if err != nil {
		return Fetched{}, err
	}
	defer r.FreeValues()
	// The binding counts one row more than rrd_fetch_r returns (its
	// RowCnt): only the rows from Start + Step to End are read.
	rows := int(r.End.Sub(r.Start) / max(r.Step, time.Second))
	vals := make([]float64, 0, rows*len(r.DsNames))
	for row := range min(rows, r.RowCnt) {
		for ds := range r.DsNames {
			vals = append(vals, r.ValueAt(ds, row))
		}
	}
	return Fetched{Start: r.Start, End: r.End, Step: r.Step, DS: r.DsNames, Values: vals}, nil
}

// mallocArenas sets glibc's M_ARENA_MAX (BoundCMalloc).
func mallocArenas(n int) error {
	if C.spoold_malloc_arenas(C.int(n)) != 1 {
		return errors.New("mallopt refused M_ARENA_MAX")
	}
	return nil
}

// librrdCreate calls rrd_create_r2, never overwriting a file.
func librrdCreate(path string, step uint64, lastUp int64, sources []string, template string, defs []string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var ctmpl *C.char
	if template != "" {
		ctmpl = C.CString(template)
		defer C.free(unsafe.Pointer(ctmpl))
	}
	csrc := cStrings(sources, true)
	defer freeCStrings(csrc)
	cdefs := cStrings(defs, false)
	defer freeCStrings(cdefs)
	var srcp, defp **C.char
	if len(sources) > 0 {
		srcp = &csrc[0]
	}
	if len(defs) > 0 {
		defp = &cdefs[0]
	}
	var cerr *C.char
	if C.spoold_create(cpath, C.ulong(step), C.time_t(lastUp), srcp, ctmpl, C.int(len(defs)), defp, &cerr) != 0 {
		return cError(cerr)
	}
	return nil
}

// cStrings copies ss to C, NULL-terminated if asked.
func cStrings(ss []string, null bool) []*C.char {
	out := make([]*C.char, 0, len(ss)+1)
	for _, s := range ss {
		out = append(out, C.CString(s))
	}
	if null {
		out = append(out, nil)
	}
	return out
}

func freeCStrings(cs []*C.char) {
	for _, c := range cs {
		C.free(unsafe.Pointer(c))
	}
}
