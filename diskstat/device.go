package diskstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNoBlockDevice is wrapped by DeviceOf when a directory's file system has
// no block device (tmpfs, overlay, proc, a network file system).
var ErrNoBlockDevice = errors.New("no block device")

// Device is the block device behind a directory.
type Device struct {
	// Major and Minor are the device numbers of the file system (st_dev).
	Major, Minor uint32
	// Name is the kernel name of the device, e.g. "vda1" or "dm-0", as in
	// /proc/diskstats.
	Name string
	// Disk is the whole disk that owns the queue: Name itself, or the parent
	// of a partition ("vda" for "vda1").
	Disk string
	// ReadAheadKB is the disk's /sys/block/<Disk>/queue/read_ahead_kb, or -1
	// when it could not be read.
	ReadAheadKB int
}

// DevPath is the device node, e.g. "/dev/vda1".
func (d Device) DevPath() string { return "/dev/" + d.Name }

// DiskPath is the device node of the whole disk, e.g. "/dev/vda".
func (d Device) DiskPath() string { return "/dev/" + d.Disk }

// ReadAheadPath is the sysfs file that holds the disk's read-ahead in KiB.
func (d Device) ReadAheadPath() string {
	return "/sys/block/" + d.Disk + "/queue/read_ahead_kb"
}

// DeviceOf returns the block device of the file system holding path, using
// sysfs under /sys. A path on a file system without one gives an error
// wrapping ErrNoBlockDevice.
func DeviceOf(path string) (Device, error) { return deviceOf("/sys", path) }

func deviceOf(sys, path string) (Device, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Device{}, fmt.Errorf("stat %s: %w", path, err)
	}
	d := Device{Major: unix.Major(st.Dev), Minor: unix.Minor(st.Dev), ReadAheadKB: -1}
	link := filepath.Join(sys, "dev/block", fmt.Sprintf("%d:%d", d.Major, d.Minor))
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		return d, fmt.Errorf("device %d:%d of %s: %w", d.Major, d.Minor, path, ErrNoBlockDevice)
	}
	d.Name, d.Disk = filepath.Base(real), filepath.Base(real)
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		d.Disk = filepath.Base(filepath.Dir(real))
	}
	d.ReadAheadKB = readAheadKB(sys, d.Disk)
	return d, nil
}

// ReadAheadKB reads a disk's /sys/block/<disk>/queue/read_ahead_kb now;
// -1 when it cannot be read.
func ReadAheadKB(disk string) int { return readAheadKB("/sys", disk) }

func readAheadKB(sys, disk string) int {
	b, err := os.ReadFile(filepath.Join(sys, "block", disk, "queue/read_ahead_kb"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}
