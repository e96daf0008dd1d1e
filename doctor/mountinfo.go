package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// Mount is one line of /proc/self/mountinfo (proc(5)), as procfs parses
// it, with the device as numbers and the kernel's escapes in paths undone.
type Mount struct {
	ID           int
	Major, Minor uint32
	Root         string // the root of the mount within its file system
	MountPoint   string
	Options      map[string]string // per-mount options: rw, noatime, relatime, ...; "" for a bare one
	FSType       string
	Source       string
	SuperOptions map[string]string // per-superblock options: commit=, data=, ...
}

// Option returns the value of a "key=value" option in the per-mount or
// superblock options, or for a bare option "key" an empty value; ok says
// whether it is present.
func (m Mount) Option(key string) (value string, ok bool) {
	for _, opts := range []map[string]string{m.Options, m.SuperOptions} {
		if v, found := opts[key]; found {
			return v, true
		}
	}
	return "", false
}

// readMounts reads <proc>/self/mountinfo through procfs.
func readMounts(proc string) ([]Mount, error) {
	fs, err := procfs.NewFS(proc)
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	infos, err := fs.GetMounts()
	if err != nil {
		return nil, fmt.Errorf("read %s/self/mountinfo: %w", proc, err)
	}
	return mountsOf(infos)
}

// mountsOf converts procfs's mounts: procfs keeps the device as the text
// "major:minor" and paths with the kernel's octal escapes.
func mountsOf(infos []*procfs.MountInfo) ([]Mount, error) {
	out := make([]Mount, 0, len(infos))
	for _, mi := range infos {
		maj, min, ok := strings.Cut(mi.MajorMinorVer, ":")
		ma, err1 := strconv.ParseUint(maj, 10, 32)
		mn, err2 := strconv.ParseUint(min, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("mountinfo: mount %d: device %q is not major:minor", mi.MountID, mi.MajorMinorVer)
		}
		out = append(out, Mount{
			ID: mi.MountID, Major: uint32(ma), Minor: uint32(mn),
			Root: unescapeOctal(mi.Root), MountPoint: unescapeOctal(mi.MountPoint),
			Options: mi.Options, FSType: mi.FSType, Source: unescapeOctal(mi.Source),
			SuperOptions: mi.SuperOptions,
		})
	}
	return out, nil
}

// unescapeOctal undoes the kernel's \ooo escapes of space, tab, newline and
// backslash in mountinfo paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// mountOf returns the mount that holds path (absolute, symlinks resolved)
// on device maj:min: the one with the longest mount point that is a prefix
// of path, the later one of stacked mounts. Without a match on the device it
// falls back to the longest prefix alone.
func mountOf(mounts []Mount, path string, maj, min uint32) (Mount, bool) {
	best, found, bestDev := Mount{}, false, false
	for _, m := range mounts {
		if !underMount(path, m.MountPoint) {
			continue
		}
		dev := m.Major == maj && m.Minor == min
		switch {
		case !found, dev && !bestDev,
			dev == bestDev && len(m.MountPoint) >= len(best.MountPoint):
			best, found, bestDev = m, true, dev
		}
	}
	return best, found
}

func underMount(path, mp string) bool {
	if mp == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == mp || strings.HasPrefix(path, mp+"/")
}
