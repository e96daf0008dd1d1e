package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// childEnv makes the test binary a child that confines itself to the
// directory named by the variable and tries each access of childChecks.
const (
	childEnv        = "SPOOLD_CONFINE_TEST_DIR"
	childEnabledEnv = "SPOOLD_CONFINE_TEST_ENABLED"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(child(dir, os.Getenv(childEnabledEnv) == "1"))
	}
	os.Exit(m.Run())
}

// check is one access the child tries after Apply.
type check struct {
	name string
	try  func(dir string) error
}

// childChecks, in order; dir holds "in" (ReadWrite), "ro" (ReadOnly),
// "out" (not named) and "before" (a file of out opened before Apply).
func childChecks(before *os.File, thread func(func() error) error) []check {
	in := func(dir string, p ...string) string { return filepath.Join(append([]string{dir, "in"}, p...)...) }
	return []check{
		{"write outside", func(dir string) error { return os.WriteFile(filepath.Join(dir, "out", "x"), []byte("x"), 0o600) }},
		{"write outside from a thread older than Apply", func(dir string) error {
			return thread(func() error { return os.WriteFile(filepath.Join(dir, "out", "y"), []byte("y"), 0o600) })
		}},
		{"write outside through a symlink inside", func(dir string) error {
			return os.WriteFile(in(dir, "link-out", "z"), []byte("z"), 0o600)
		}},
		{"reopen a file outside for writing by /proc/self/fd", func(string) error {
			f, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", before.Fd()), os.O_WRONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"write the file outside opened before Apply", func(string) error { _, err := before.Write([]byte("b")); return err }},
		{"write in the read-only tree", func(dir string) error { return os.WriteFile(filepath.Join(dir, "ro", "x"), []byte("x"), 0o600) }},
		{"read the read-only tree", func(dir string) error { _, err := os.ReadFile(filepath.Join(dir, "ro", "conf")); return err }},
		{"make a symlink inside", func(dir string) error { return os.Symlink("x", in(dir, "sym")) }},
		{"create inside", func(dir string) error { return os.WriteFile(in(dir, "x"), []byte("x"), 0o600) }},
		{"make a directory inside", func(dir string) error { return os.Mkdir(in(dir, "sub"), 0o700) }},
		{"rename between directories inside", func(dir string) error { return os.Rename(in(dir, "x"), in(dir, "sub", "x")) }},
		{"truncate inside", func(dir string) error { return os.Truncate(in(dir, "sub", "x"), 0) }},
		{"reopen a file inside by /proc/self/fd", func(dir string) error {
			f, err := os.Open(in(dir, "sub", "x"))
			if err != nil {
				return err
			}
			defer f.Close()
			g, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDWR, 0)
			if err == nil {
				g.Close()
			}
			return err
		}},
		{"remove inside", func(dir string) error { return os.RemoveAll(in(dir, "sub")) }},
		{"read a system file", func(string) error { _, err := os.ReadFile("/proc/self/status"); return err }},
		{"write /dev/null", func(string) error { return os.WriteFile("/dev/null", []byte("x"), 0) }},
	}
}

// child confines itself to dir/in (enabled) and prints each check's
// result as "name: errno" ("ok" for none), for the parent to judge.
func child(dir string, enabled bool) int {
	before, err := os.OpenFile(filepath.Join(dir, "out", "before"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Println("setup:", err)
		return 1
	}
	// A goroutine on an OS thread of its own from before Apply: the
	// restriction must reach threads that already run.
	work, done := make(chan func() error), make(chan error)
	go func() {
		runtime.LockOSThread()
		for f := range work {
			done <- f()
		}
	}()
	thread := func(f func() error) error { work <- f; return <-done }
	_ = thread(func() error { return nil })
	o := DefaultOptions()
	o.Enabled = enabled
	o.ReadWrite = []string{filepath.Join(dir, "in")}
	o.ReadOnly = []string{filepath.Join(dir, "ro")}
	st, err := Apply(o)
	if err != nil {
		fmt.Println("apply:", err)
		return 1
	}
	fmt.Println("status:", st)
	for _, c := range childChecks(before, thread) {
		res := "ok"
		if err := c.try(dir); err != nil {
			var errno syscall.Errno
			if !errors.As(err, &errno) {
				res = err.Error()
			} else {
				res = errno.Error()
			}
		}
		fmt.Printf("%s: %s\n", c.name, res)
	}
	return 0
}

// runChild runs the child on a fresh directory and returns its results by
// check name, and its status line.
func runChild(t *testing.T, enabled bool) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"in", "ro", "out"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ro", "conf"), []byte("c"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "out"), filepath.Join(dir, "in", "link-out")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, fmt.Sprintf("%s=%d", childEnabledEnv, map[bool]int{true: 1}[enabled]))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	res := map[string]string{}
	var status string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, v, _ := strings.Cut(line, ": ")
		if name == "status" {
			status = v
			continue
		}
		res[name] = v
	}
	return res, status
}

// TestApplyRefusesWritesOutside: a process confined to one directory is
// refused by the kernel (EACCES) a write anywhere else, on every thread,
// through a symlink and through /proc/self/fd, while the spool's and the
// RRD writer's operations inside (create, mkdir, rename between
// directories, truncate, remove) and reads of system files work. The same
// child unconfined does every write, so it is the confinement that refuses.
func TestApplyRefusesWritesOutside(t *testing.T) {
	if st := Probe(true); st.Mode != Enforced {
		testenv.Missing(t, "this kernel cannot confine a process: %s", st)
	}
	denied := map[string]bool{
		"write outside": true, "write outside from a thread older than Apply": true,
		"write outside through a symlink inside": true, "reopen a file outside for writing by /proc/self/fd": true,
		"write in the read-only tree": true, "make a symlink inside": true,
	}
	on, status := runChild(t, true)
	if !strings.HasPrefix(status, "enforced (Landlock ABI ") {
		t.Errorf("status %q, want enforced", status)
	}
	off, offStatus := runChild(t, false)
	if !strings.HasPrefix(offStatus, "off") {
		t.Errorf("status with Enabled false %q, want off", offStatus)
	}
	names := make([]string, 0, len(on))
	for n := range on {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) != len(childChecks(nil, nil)) {
		t.Fatalf("the child ran %d checks, want %d: %v", len(names), len(childChecks(nil, nil)), on)
	}
	for _, n := range names {
		want := "ok"
		if denied[n] {
			want = syscall.EACCES.Error()
		}
		if on[n] != want {
			t.Errorf("confined, %s: %s, want %s", n, on[n], want)
		}
		if off[n] != "ok" {
			t.Errorf("not confined, %s: %s, want ok", n, off[n])
		}
	}
}

// TestApplyRefusesAMissingPath: a directory to write or remove in that
// does not exist is an error, before anything is restricted; a missing
// path to read (a MIB directory not made yet, a system file) is skipped.
func TestApplyRefusesAMissingPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nosuch")
	for _, tc := range []struct {
		name  string
		set   func(o *Options)
		fails bool
	}{
		{"read-write", func(o *Options) { o.ReadWrite = []string{missing} }, true},
		{"remove-in", func(o *Options) { o.RemoveIn = []string{missing} }, true},
		{"read-only", func(o *Options) { o.ReadOnly = []string{missing} }, false},
		{"system", func(o *Options) { o.System = append(o.System, missing) }, false},
	} {
		o := DefaultOptions()
		tc.set(&o)
		_, err := o.rules()
		if tc.fails != (err != nil) || err != nil && !strings.Contains(err.Error(), missing) {
			t.Errorf("a missing %s path: %v, want an error naming it: %v", tc.name, err, tc.fails)
		}
	}
}

// TestProbe: disabled is Off whatever the kernel; enabled on a kernel
// with Landlock of ABI 2 or later is Enforced, naming what its ABI
// cannot restrict.
func TestProbe(t *testing.T) {
	abi, err := kernelABI()
	if st := Probe(false); st.Mode != Off || st.ABI != abi {
		t.Errorf("Probe(false) = %+v, want off with ABI %d", st, abi)
	}
	st := Probe(true)
	switch {
	case err != nil || abi < minABI:
		if st.Mode != Unsupported || st.Reason == "" {
			t.Errorf("Probe(true) without usable Landlock (ABI %d, %v) = %+v, want unsupported with a reason", abi, err, st)
		}
	case st.Mode != Enforced || st.ABI != abi || (abi >= 5) != (len(st.Unrestricted) == 0):
		t.Errorf("Probe(true) on ABI %d = %+v", abi, st)
	}
}

// TestStatusByABI: what each kernel gives: no Landlock and ABI 1 (no
// renames between directories) restrict nothing and say why; ABI 2 to 4
// are enforced, naming what they cannot restrict; off is off whatever
// the kernel.
func TestStatusByABI(t *testing.T) {
	for _, tc := range []struct {
		abi          int
		err          error
		want         Mode
		unrestricted string
	}{
		{0, syscall.ENOSYS, Unsupported, ""},
		{0, syscall.EOPNOTSUPP, Unsupported, ""},
		{1, nil, Unsupported, ""},
		{2, nil, Enforced, "truncate, ioctl on devices"},
		{4, nil, Enforced, "ioctl on devices"},
		{5, nil, Enforced, ""},
		{7, nil, Enforced, ""},
	} {
		st := statusOf(true, tc.abi, tc.err)
		if st.Mode != tc.want || strings.Join(st.Unrestricted, ", ") != tc.unrestricted || (st.Mode == Unsupported) != (st.Reason != "") {
			t.Errorf("ABI %d (%v): %+v, want %s, unrestricted %q", tc.abi, tc.err, st, tc.want, tc.unrestricted)
		}
		if off := statusOf(false, tc.abi, tc.err); off.Mode != Off {
			t.Errorf("ABI %d (%v), not enabled: %+v, want off", tc.abi, tc.err, off)
		}
		if !strings.HasPrefix(st.String(), string(st.Mode)) {
			t.Errorf("ABI %d: String() = %q, want it to start with the mode", tc.abi, st)
		}
	}
}
