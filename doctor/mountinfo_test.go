package doctor

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name, line string
		want       Mount
	}{
		{"ext4 root with super options",
			"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,commit=120,data=writeback",
			Mount{ID: 27, Major: 254, Minor: 0, Root: "/", MountPoint: "/", Options: map[string]string{"rw": "", "relatime": ""},
				FSType: "ext4", Source: "/dev/vda", SuperOptions: map[string]string{"rw": "", "discard": "", "commit": "120", "data": "writeback"}}},
		{"optional fields and escaped space",
			`36 35 98:0 /mnt1 /var/spool/my\040spool rw,noatime master:1 shared:7 - xfs /dev/sdb1 rw,attr2`,
			Mount{ID: 36, Major: 98, Minor: 0, Root: "/mnt1", MountPoint: "/var/spool/my spool", Options: map[string]string{"rw": "", "noatime": ""},
				FSType: "xfs", Source: "/dev/sdb1", SuperOptions: map[string]string{"rw": "", "attr2": ""}}},
		{"tmpfs",
			"25 24 0:23 / /dev/shm rw - tmpfs tmpfs rw,size=24683656k",
			Mount{ID: 25, Major: 0, Minor: 23, Root: "/", MountPoint: "/dev/shm", Options: map[string]string{"rw": ""},
				FSType: "tmpfs", Source: "tmpfs", SuperOptions: map[string]string{"rw": "", "size": "24683656k"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := readMounts(procWithMountinfo(t, tc.line+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != 1 || !mountEqual(ms[0], tc.want) {
				t.Errorf("got %+v\nwant %+v", ms, tc.want)
			}
		})
	}
}

// procWithMountinfo returns a fake proc file system whose self/mountinfo
// is text.
func procWithMountinfo(t testing.TB, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "self", "mountinfo"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mountEqual(a, b Mount) bool {
	return a.ID == b.ID && a.Major == b.Major && a.Minor == b.Minor && a.Root == b.Root &&
		a.MountPoint == b.MountPoint && a.FSType == b.FSType && a.Source == b.Source &&
		maps.Equal(a.Options, b.Options) && maps.Equal(a.SuperOptions, b.SuperOptions)
}

func TestParseMountinfoErrors(t *testing.T) {
	for _, line := range []string{
		"27 1 254:0 / / rw,relatime ext4 /dev/vda rw",  // no separator
		"x 1 254:0 / / rw,relatime - ext4 /dev/vda rw", // bad id
		"27 1 254 / / rw,relatime - ext4 /dev/vda rw",  // bad device
		"27 1 254:0 / / rw,relatime - ext4",            // short after separator
	} {
		t.Run(line, func(t *testing.T) {
			if _, err := readMounts(procWithMountinfo(t, line)); err == nil {
				t.Errorf("no error for %q", line)
			}
		})
	}
}

func TestMountOption(t *testing.T) {
	m := Mount{Options: map[string]string{"rw": "", "relatime": ""}, SuperOptions: map[string]string{"commit": "120", "data": "ordered"}}
	for _, tc := range []struct {
		key, val string
		ok       bool
	}{{"relatime", "", true}, {"commit", "120", true}, {"data", "ordered", true}, {"noatime", "", false}} {
		if v, ok := m.Option(tc.key); v != tc.val || ok != tc.ok {
			t.Errorf("Option(%q) = %q, %v; want %q, %v", tc.key, v, ok, tc.val, tc.ok)
		}
	}
}

func TestMountOf(t *testing.T) {
	ms := []Mount{
		{ID: 1, Major: 254, MountPoint: "/"},
		{ID: 2, Major: 8, Minor: 1, MountPoint: "/var"},
		{ID: 3, Major: 8, Minor: 2, MountPoint: "/var/spool"},
		{ID: 4, Major: 8, Minor: 3, MountPoint: "/var/spool"}, // stacked over 3
		{ID: 5, Major: 0, Minor: 40, MountPoint: "/var/spoolx"},
	}
	for _, tc := range []struct {
		path     string
		maj, min uint32
		want     int
	}{
		{"/var/spool/spoold", 8, 3, 4},
		{"/var/spool/spoold", 8, 2, 3}, // device decides between stacked mounts
		{"/var/spoolx/a", 0, 40, 5},
		{"/var/lib", 8, 1, 2},
		{"/home", 254, 0, 1},
		{"/var/lib", 9, 9, 2}, // unknown device: longest prefix
	} {
		m, ok := mountOf(ms, tc.path, tc.maj, tc.min)
		if !ok || m.ID != tc.want {
			t.Errorf("mountOf(%s, %d:%d) = %d, %v; want %d", tc.path, tc.maj, tc.min, m.ID, ok, tc.want)
		}
	}
}
