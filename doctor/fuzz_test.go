package doctor

import (
	"strings"
	"testing"
)

// kernelEscape escapes a path as the kernel writes it in mountinfo.
var kernelEscape = strings.NewReplacer(`\`, `\134`, " ", `\040`, "\t", `\011`, "\n", `\012`)

// FuzzMounts fuzzes what remains of spoold's own mountinfo code now that
// procfs parses the file: the device numbers, the undoing of the kernel's
// escapes and the choice of a path's mount. Any text that reads: each
// mount's own mount point, on its device, is found as that mount point
// and device. Any path, escaped as the kernel does in a mount line, reads
// back as itself.
func FuzzMounts(f *testing.F) {
	f.Add("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,commit=120\n", "/var/spool/my spool")
	f.Add(`36 35 98:0 /a /b\040c rw master:1 - xfs /dev/sdb1 rw`+"\n", `/back\slash`+"\ttab")
	f.Fuzz(func(t *testing.T, text, path string) {
		if ms, err := readMounts(procWithMountinfo(t, text)); err == nil {
			for _, m := range ms {
				got, ok := mountOf(ms, m.MountPoint, m.Major, m.Minor)
				if !ok || got.MountPoint != m.MountPoint || got.Major != m.Major || got.Minor != m.Minor {
					t.Fatalf("mount %+v of its own mount point: %+v, %v", m, got, ok)
				}
				m.Option("commit")
			}
		}
		if path == "" || strings.ContainsAny(path, "\r") {
			return // no mount point is empty; a line's \r is not kept
		}
		line := "1 0 8:1 / " + kernelEscape.Replace(path) + " rw - ext4 /dev/sda1 rw\n"
		ms, err := readMounts(procWithMountinfo(t, line))
		if err != nil || len(ms) != 1 || ms[0].MountPoint != path {
			t.Fatalf("escaped path %q read back as %+v, %v", path, ms, err)
		}
	})
}
