package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Options say what the process keeps access to. Each path is taken as
// the file system resolves it at Apply (symlinks followed); a directory
// covers everything beneath it, including files made there later.
type Options struct {
	// Enabled false restricts nothing: Apply reports Off.
	Enabled bool
	// ReadWrite are directory trees read and written in every way a
	// spool and RRD files need: files created, written, truncated,
	// linked, renamed (between the tree's directories too) and removed;
	// directories created and removed. Each must exist.
	ReadWrite []string
	// ReadOnly are files and directory trees read (a directory listed
	// too). One that does not exist is skipped, and stays out of reach if
	// made later (a --mib-dir not there yet). Name a file's directory
	// where the file may be replaced by another (an editor saves by
	// rename): a rule holds the file it found, not its name.
	ReadOnly []string
	// RemoveIn are directories in which files made before Apply are
	// removed, and nothing else is allowed (a pid file's, a unix
	// socket's). Each must exist.
	RemoveIn []string
	// System are files and trees read as ReadOnly: what the C libraries
	// and the Go runtime read (fonts and fontconfig for graphs, the
	// resolver's files, time zones, /proc, /sys). DefaultOptions lists
	// them.
	System []string
	// Devices are device files read and written, each skipped when it
	// does not exist. DefaultOptions: /dev/null and /dev/zero.
	Devices []string
}

// DefaultOptions are enabled, with the system files a daemon using librrd,
// the resolver and /proc reads; the caller adds its own paths.
func DefaultOptions() Options {
	return Options{
		Enabled: true,
		System: []string{
			// Libraries, fonts, fontconfig's and pango's data, zoneinfo,
			// gconv, locales (merged /usr; /lib and /lib64 where not).
			"/usr", "/lib", "/lib64", "/etc/ld.so.cache",
			"/etc/fonts", "/var/cache/fontconfig",
			"/etc/localtime", "/etc/timezone",
			// The resolver (Go's and glibc's), for targets named by host.
			"/etc/hosts", "/etc/resolv.conf", "/run/systemd/resolve", "/etc/nsswitch.conf",
			"/etc/host.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
			"/etc/passwd", "/etc/group",
			"/proc", "/sys",
			"/dev/urandom", "/dev/random",
		},
		Devices: []string{"/dev/null", "/dev/zero"},
	}
}

// The rights of each kind of path. fileRights are those a rule on a
// file (not a directory) may carry.
const (
	readRights   = ll.AccessFSReadFile | ll.AccessFSReadDir
	removeRights = ll.AccessFSRemoveFile
	writeRights  = ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSMakeReg | ll.AccessFSMakeDir | ll.AccessFSRemoveFile | ll.AccessFSRemoveDir | ll.AccessFSRefer
	deviceRights = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	fileRights   = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// handled are the rights restricted: every file-system right up to ABI 8
// (executing, making sockets, fifos, devices and symlinks included), and
// not ABI 9's connecting to unix sockets by path (the --forward peer, a
// systemd notify socket).
const handled landlock.AccessFSSet = (1 << 16) - 1

// minABI is the first ABI that can allow renames between directories
// (LANDLOCK_ACCESS_FS_REFER).
const minABI = 2

// Mode says whether the process is confined.
type Mode string

const (
	// Enforced: the kernel refuses file access outside the Options' paths.
	Enforced Mode = "enforced"
	// Off: Options.Enabled was false.
	Off Mode = "off"
	// Unsupported: the kernel has no Landlock, or one too old (Reason).
	Unsupported Mode = "unsupported"
)

// Status is what Apply did, or what it would do (Probe).
type Status struct {
	Mode Mode `json:"mode"`
	// ABI is the kernel's Landlock ABI version; 0 without Landlock.
	ABI int `json:"abi"`
	// Unrestricted names the accesses this ABI cannot restrict, when
	// Enforced ("truncate" below ABI 3, "ioctl on devices" below 5).
	Unrestricted []string `json:"unrestricted,omitempty"`
	// Reason says why the mode is Unsupported.
	Reason string `json:"reason,omitempty"`
}

// String is the status for a log line or a report: "enforced (Landlock
// ABI 7)", "off (Landlock ABI 7 available)", "unsupported: ...".
func (s Status) String() string {
	switch s.Mode {
	case Enforced:
		if len(s.Unrestricted) > 0 {
			return fmt.Sprintf("enforced (Landlock ABI %d; not restricted at this ABI: %s)", s.ABI, strings.Join(s.Unrestricted, ", "))
		}
		return fmt.Sprintf("enforced (Landlock ABI %d)", s.ABI)
	case Off:
		if s.ABI > 0 {
			return fmt.Sprintf("off (Landlock ABI %d available)", s.ABI)
		}
		return "off"
	}
	return "unsupported: " + s.Reason
}

// Probe returns the Status Apply would return with Enabled = enabled on
// this kernel, restricting nothing.
func Probe(enabled bool) Status {
	abi, err := kernelABI()
	return statusOf(enabled, abi, err)
}

// statusOf is Probe's status for a kernel whose Landlock ABI query gave
// abi and err.
func statusOf(enabled bool, abi int, err error) Status {
	st := Status{Mode: Enforced, ABI: abi}
	switch {
	case !enabled:
		st.Mode = Off
	case err != nil:
		st.Mode, st.Reason = Unsupported, fmt.Sprintf("the kernel has no Landlock (Linux 5.13 or later, with landlock in its lsm= list): %v", err)
	case abi < minABI:
		st.Mode, st.Reason = Unsupported, fmt.Sprintf("Landlock ABI %d cannot allow renames between directories, which the spool makes (ABI 2, Linux 5.19, can)", abi)
	default:
		if abi < 3 {
			st.Unrestricted = append(st.Unrestricted, "truncate")
		}
		if abi < 5 {
			st.Unrestricted = append(st.Unrestricted, "ioctl on devices")
		}
	}
	return st
}

// kernelABI asks the kernel for its Landlock ABI version.
func kernelABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	return int(v), nil
}

// Apply restricts the whole process, every thread, to o's paths, and
// returns what it did. It cannot be undone. Without usable Landlock it
// restricts nothing and says so (Unsupported, no error); an error means
// nothing was restricted: a path of o is missing, or the kernel refused.
func Apply(o Options) (Status, error) {
	st := Probe(o.Enabled)
	if st.Mode != Enforced {
		return st, nil
	}
	rules, err := o.rules()
	if err != nil {
		return Status{}, err
	}
	if err := (landlock.Config{HandledAccessFS: handled}).BestEffort().RestrictPaths(rules...); err != nil {
		return Status{}, fmt.Errorf("confine: restrict the process with Landlock: %w", err)
	}
	return st, nil
}

// rules are o's paths as Landlock rules, each path's rights cut to what
// a rule on a file may carry where the path is not a directory.
func (o Options) rules() ([]landlock.Rule, error) {
	var rules []landlock.Rule
	for _, set := range []struct {
		paths    []string
		rights   landlock.AccessFSSet
		optional bool
	}{
		{o.ReadWrite, writeRights, false},
		{o.ReadOnly, readRights, true},
		{o.RemoveIn, removeRights, false},
		{o.System, readRights, true},
		{o.Devices, deviceRights, true},
	} {
		for _, p := range set.paths {
			fi, err := os.Stat(p)
			if set.optional && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("confine: %w", err)
			}
			r := set.rights
			if !fi.IsDir() {
				r &= fileRights
			}
			if r == 0 {
				return nil, fmt.Errorf("confine: %s: want a directory, not a file", p)
			}
			rules = append(rules, landlock.PathAccess(r, p))
		}
	}
	return rules, nil
}
