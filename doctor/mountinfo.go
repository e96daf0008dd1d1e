package doctor

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mount is one line of /proc/self/mountinfo (proc(5)).
type Mount struct {
	ID           int
	Major, Minor uint32
	Root         string // the root of the mount within its file system
	MountPoint   string
	Options      []string // per-mount options: rw, noatime, relatime, ...
	FSType       string
	Source       string
	SuperOptions []string // per-superblock options: commit=, data=, ...
}

// Option returns the value of a "key=value" option in the per-mount or
// superblock options, or for a bare option "key" an empty value; ok says
// whether it is present.
func (m Mount) Option(key string) (value string, ok bool) {
	for _, list := range [][]string{m.Options, m.SuperOptions} {
		for _, o := range list {
			if o == key {
				return "", true
			}
			if k, v, found := strings.Cut(o, "="); found && k == key {
				return v, true
			}
		}
	}
	return "", false
}

// ParseMountinfo parses the text of /proc/<pid>/mountinfo.
func ParseMountinfo(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		m, err := parseMountLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return out, nil
}

func parseMountLine(s string) (Mount, error) {
	f := strings.Fields(s)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 10 || sep < 0 || len(f) < sep+4 {
		return Mount{}, fmt.Errorf("malformed: %q", s)
	}
	id, err := strconv.Atoi(f[0])
	if err != nil {
		return Mount{}, fmt.Errorf("mount id: %w", err)
	}
	maj, min, ok := strings.Cut(f[2], ":")
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return Mount{}, fmt.Errorf("device %q is not major:minor", f[2])
	}
	return Mount{
		ID: id, Major: uint32(ma), Minor: uint32(mi),
		Root: unescapeOctal(f[3]), MountPoint: unescapeOctal(f[4]),
		Options: strings.Split(f[5], ","), FSType: f[sep+1], Source: unescapeOctal(f[sep+2]),
		SuperOptions: strings.Split(f[sep+3], ","),
	}, nil
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

func readMountinfo(path string) ([]Mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseMountinfo(f)
}
