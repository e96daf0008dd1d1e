package rrd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// The differential harness: one file made by rrdtool create, copied; the
// same batches of updates applied to one copy by librrd (the rrdtool
// update command: one rrd_update_r call a batch) and to the other by the
// native path; the two files must be byte for byte the same after every
// batch, and each batch must be refused (or not) with the same message.

// rrdtool runs the rrdtool command; it returns its output and, on
// failure, an error holding librrd's message.
func rrdtool(tb testing.TB, args ...string) (string, error) {
	tb.Helper()
	bin := testenv.LookPath(tb, "rrdtool", "librrd's side of the differential tests")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "RRDCACHED_ADDRESS=", "TZ=UTC", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		msg = strings.TrimPrefix(msg, "ERROR: ")
		return string(out), errors.New(msg)
	}
	return string(out), nil
}

// createArgs are the arguments of rrdtool create after the path.
func createRRD(tb testing.TB, path string, start int64, step int, defs ...string) {
	tb.Helper()
	args := append([]string{"create", path, "--start", strconv.FormatInt(start, 10), "--step", strconv.Itoa(step)}, defs...)
	if _, err := rrdtool(tb, args...); err != nil {
		tb.Fatalf("rrdtool create %v: %v", defs, err)
	}
}

// parseUpdateArg parses "<sec>[.<ms>]:v:v..." into a Row.
func parseUpdateArg(tb testing.TB, s string) Sample {
	tb.Helper()
	parts := strings.Split(s, ":")
	ts, frac, _ := strings.Cut(parts[0], ".")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		tb.Fatalf("update %q: %v", s, err)
	}
	var milli uint16
	if frac != "" {
		m, err := strconv.ParseUint(frac, 10, 16)
		if err != nil || len(frac) != 3 {
			tb.Fatalf("update %q: the fraction must be 3 digits", s)
		}
		milli = uint16(m)
	}
	return Sample{Time: sec, Milli: milli, Values: parts[1:]}
}

// twin is a pair of copies of one created file.
type twin struct {
	lib, nat string
}

func newTwin(tb testing.TB, start int64, step int, defs ...string) twin {
	tb.Helper()
	dir := tb.TempDir()
	tw := twin{lib: filepath.Join(dir, "librrd.rrd"), nat: filepath.Join(dir, "native.rrd")}
	createRRD(tb, tw.lib, start, step, defs...)
	b, err := os.ReadFile(tw.lib)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(tw.nat, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return tw
}

// librrdUpdate applies one batch with rrdtool update.
func (tw twin) librrdUpdate(tb testing.TB, template []string, args []string) error {
	tb.Helper()
	return tw.librrdUpdateFile(tb, tw.lib, template, args)
}

func (tw twin) librrdUpdateFile(tb testing.TB, path string, template []string, args []string) error {
	tb.Helper()
	a := []string{"update", path}
	if len(template) > 0 {
		a = append(a, "--template", strings.Join(template, ":"))
	}
	_, err := rrdtool(tb, append(a, args...)...)
	return err
}

// nativeUpdate applies one batch with the native path.
func (tw twin) nativeUpdate(tb testing.TB, template []string, args []string) (int, error) {
	tb.Helper()
	f, err := Open(tw.nat)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	ups := make([]Sample, len(args))
	for i, a := range args {
		ups[i] = parseUpdateArg(tb, a)
	}
	return f.Update(template, ups)
}

// batch applies one batch to both and checks that they answer and end
// the same; it fails the test if the native path fell back.
func (tw twin) batch(tb testing.TB, template []string, args ...string) {
	tb.Helper()
	if tw.batchOrFallback(tb, template, args...) {
		tb.Fatalf("native path fell back on %v", args)
	}
}

// batchOrFallback is batch where the native path may fall back: then
// librrd applies the batch to the native side too, as the writer does,
// and the files must still be the same. It reports whether it fell back.
func (tw twin) batchOrFallback(tb testing.TB, template []string, args ...string) (fellBack bool) {
	tb.Helper()
	libErr := tw.librrdUpdate(tb, template, args)
	_, natErr := tw.nativeUpdate(tb, template, args)
	var nn *NotNativeError
	if errors.As(natErr, &nn) {
		fellBack = true
		natErr = tw.librrdUpdateFile(tb, tw.nat, template, args)
	}
	if strings.ReplaceAll(errString(libErr), tw.lib, "<file>") != strings.ReplaceAll(errString(natErr), tw.nat, "<file>") {
		tb.Fatalf("batch %v:\nlibrrd: %v\nnative: %v", args, libErr, natErr)
	}
	tw.same(tb, args)
	return fellBack
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// same fails the test unless both files hold the same bytes, showing
// the first differences in rrdtool dump's words.
func (tw twin) same(tb testing.TB, what any) {
	tb.Helper()
	a, err1 := os.ReadFile(tw.lib)
	b, err2 := os.ReadFile(tw.nat)
	if err1 != nil || err2 != nil {
		tb.Fatal(err1, err2)
	}
	if bytes.Equal(a, b) {
		return
	}
	off := 0
	for off < len(a) && off < len(b) && a[off] == b[off] {
		off++
	}
	where := "?"
	if h, _, err := ParseHeader(a); err == nil && h != nil {
		where = describeOffset(h, int64(off))
		for o := off; o < min(len(a), len(b)); o += 8 {
			if o/8*8 == o && !bytes.Equal(a[o:min(o+8, len(a))], b[o:min(o+8, len(b))]) {
				where += fmt.Sprintf("\n  %s: librrd %x native %x", describeOffset(h, int64(o)), a[o:o+8], b[o:o+8])
			}
		}
	}
	da, _ := rrdtool(tb, "dump", tw.lib)
	db, _ := rrdtool(tb, "dump", tw.nat)
	tb.Fatalf("after %v the files differ from byte %d (of %d and %d), at %s\n%s", what, off, len(a), len(b), where, dumpDiff(da, db))
}

// dumpDiff lists the lines where two dumps differ (at most 20).
func dumpDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	n := 0
	for i := 0; i < max(len(la), len(lb)) && n < 20; i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			out.WriteString("line " + strconv.Itoa(i+1) + ":\n  librrd: " + strings.TrimSpace(x) + "\n  native: " + strings.TrimSpace(y) + "\n")
			n++
		}
	}
	if n == 0 {
		out.WriteString("(the dumps are the same)\n")
	}
	return out.String()
}

// describeOffset names the field of a file with header h at offset off.
func describeOffset(h *Header, off int64) string {
	ds := int64(len(h.DS))
	switch {
	case off < h.liveOff:
		return "static header"
	case off < h.pdpOff:
		return fmt.Sprintf("live_head+%d", off-h.liveOff)
	case off < h.cdpOff:
		o := off - h.pdpOff
		return fmt.Sprintf("pdp_prep[ds %d]+%d", o/pdpPrepSize, o%pdpPrepSize)
	case off < h.ptrOff:
		o := (off - h.cdpOff) / cdpPrepSize
		return fmt.Sprintf("cdp_prep[rra %d, ds %d] scratch %d", o/ds, o%ds, (off-h.cdpOff)%cdpPrepSize/8)
	case off < h.headerLen:
		return fmt.Sprintf("rra_ptr[%d]", (off-h.ptrOff)/8)
	}
	for r := len(h.RRA) - 1; r >= 0; r-- {
		if off >= h.rraStart[r] {
			o := (off - h.rraStart[r]) / 8
			return fmt.Sprintf("rra %d row %d ds %d", r, o/ds, o%ds)
		}
	}
	return "?"
}

// Open opens path for native updates and reads its header, as Files
// does for each batch. A file the native path does not handle gives a
// *NotNativeError (and no File).
func Open(path string) (*File, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	_ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) // a hint: no read-ahead
	f := openedFile(path, fd)
	if _, err := f.readHeader(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return f, nil
}

// Header is the file's static header as last read.
func (f *File) Header() *Header { return f.h }

// Close closes the file; a second Close does nothing.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}
