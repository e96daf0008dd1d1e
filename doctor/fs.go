package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/diskstat"
)

// volume is one file system holding one or more of the examined directories.
type volume struct {
	dirs    []string // as given, with a note when examined through a parent
	path    string   // an existing directory on it (resolved)
	dev     uint64
	mount   Mount
	mounted bool
}

// existingDir returns dir or its nearest existing parent, resolved.
func existingDir(dir string) (string, error) {
	p, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(p); err == nil {
			return filepath.EvalSymlinks(p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("stat %s: %w", p, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", fmt.Errorf("no existing parent of %s", dir)
		}
		p = parent
	}
}

// volumes groups dirs by the mount they are on.
func volumes(dirs []string, mounts []Mount) ([]*volume, error) {
	var out []*volume
	for _, d := range dirs {
		p, err := existingDir(d)
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			return nil, fmt.Errorf("stat %s: %w", p, err)
		}
		m, ok := mountOf(mounts, p, unix.Major(st.Dev), unix.Minor(st.Dev))
		label := d
		if _, err := os.Stat(d); err != nil {
			label = d + " (missing; examined at " + p + ")"
		}
		if v := findVolume(out, st.Dev); v != nil {
			v.dirs = append(v.dirs, label)
			continue
		}
		out = append(out, &volume{dirs: []string{label}, path: p, dev: st.Dev, mount: m, mounted: ok})
	}
	return out, nil
}

func findVolume(vs []*volume, dev uint64) *volume {
	for _, v := range vs {
		if v.dev == dev {
			return v
		}
	}
	return nil
}

// readAheadLimitKB is the read-ahead above which RRD updates read more than
// they use: the field report's regression came from going to 64 blocks.
const readAheadLimitKB = 128

func checkReadAhead(r *Report, v *volume) {
	d, err := diskstat.DeviceOf(v.path)
	if err != nil {
		r.add(Finding{Check: "read-ahead", Severity: OK, Dirs: v.dirs,
			Found: fmt.Sprintf("no block device behind %s (%s): read-ahead does not apply", v.path, v.mount.FSType)})
		return
	}
	f := Finding{Check: "read-ahead", Severity: OK, Dirs: v.dirs,
		Why: "an RRD update touches a header and one row per archive, a few pages apart; read-ahead reads pages it never uses (raising it from 8 to 64 blocks made the field report's RRD stage 6 times slower)",
		Fix: fmt.Sprintf("blockdev --setra 16 %s   # or: echo 8 > %s (persist with a udev rule)", d.DiskPath(), d.ReadAheadPath())}
	switch {
	case d.ReadAheadKB < 0:
		f.Found = fmt.Sprintf("device %s (disk %s): read-ahead unknown (%s unreadable)", d.Name, d.Disk, d.ReadAheadPath())
	case d.ReadAheadKB > readAheadLimitKB:
		f.Severity = Warn
		f.Found = fmt.Sprintf("device %s (disk %s): read-ahead %d KiB, above %d KiB", d.Name, d.Disk, d.ReadAheadKB, readAheadLimitKB)
	default:
		f.Found = fmt.Sprintf("device %s (disk %s): read-ahead %d KiB", d.Name, d.Disk, d.ReadAheadKB)
	}
	r.add(f)
}

func checkMount(r *Report, v *volume, sysDir string) {
	if !v.mounted {
		r.add(Finding{Check: "atime", Severity: OK, Dirs: v.dirs, Found: "mount not found in mountinfo"})
		return
	}
	m, mp := v.mount, v.mount.MountPoint
	at := Finding{Check: "atime", Severity: OK, Dirs: v.dirs,
		Why: "with strictatime every read of a spool entry writes its inode back; relatime still writes it once a day or after a change; noatime never (noatime cut 1-2 points of %util in the field report)",
		Fix: fmt.Sprintf("mount -o remount,noatime %s   # and add noatime to its line in /etc/fstab", mp)}
	_, noatime := m.Option("noatime")
	_, relatime := m.Option("relatime")
	switch {
	case noatime:
		at.Found, at.Fix = fmt.Sprintf("%s (%s) is mounted noatime", mp, m.FSType), ""
	case relatime:
		at.Found = fmt.Sprintf("%s (%s) is mounted relatime: atime written at most once a day per file", mp, m.FSType)
	default:
		at.Severity = Warn
		at.Found = fmt.Sprintf("%s (%s) is mounted strictatime: every read updates atime", mp, m.FSType)
	}
	r.add(at)
	checkDiscard(r, v)
	if m.FSType == "ext4" && checkJournal(r, v, sysDir) {
		checkExt4(r, v)
	}
}

// checkDiscard warns of online discard: the file system sends a discard
// (TRIM) for the blocks of every deleted file. Measured on a virtio disk
// with ext4 -o discard: removing a 1 KB spool entry took 78 µs of wall
// time (the kernel waited in submit_bio_wait) against 8-12 µs with
// nodiscard, and the writer, which removes every entry it applied, ran 2
// to 3 times slower. btrfs's discard=async queues them and is fine.
func checkDiscard(r *Report, v *volume) {
	m, mp := v.mount, v.mount.MountPoint
	val, on := m.Option("discard")
	f := Finding{Check: "discard", Severity: OK, Dirs: v.dirs,
		Found: fmt.Sprintf("%s (%s) is mounted without online discard", mp, m.FSType),
		Why:   "with online discard every removed spool entry waits for a TRIM of its block: 78 µs a removal against 8-12 µs without on a virtio disk, the writer 2-3 times slower; a weekly fstrim frees the same blocks in one pass"}
	if on && val != "async" {
		f.Severity = Warn
		f.Found = fmt.Sprintf("%s (%s) is mounted with online discard", mp, m.FSType)
		f.Fix = fmt.Sprintf("mount -o remount,nodiscard %s; systemctl enable --now fstrim.timer   # and drop discard from its line in /etc/fstab", mp)
	}
	r.add(f)
}

// checkJournal reports whether an ext4 volume has a journal, and warns
// when it has none: ext4 without a journal looks for each new inode past
// every inode freed in the last 30 seconds (it cannot tell whether their
// deletion is on disk yet), and the spool creates and removes a segment
// per target at every write of it. Measured with bench/rrdcached.sh on
// ext4 without a journal: creating segments took 55% of spoold's CPU
// samples, against 4% on ext4 with its journal. It returns false when the
// volume has no journal (the journal's own settings do not apply then).
func checkJournal(r *Report, v *volume, sysDir string) bool {
	m, mp := v.mount, v.mount.MountPoint
	dev := m.Source
	if p, err := filepath.EvalSymlinks(dev); err == nil {
		dev = p // /dev/mapper/... is dm-N in sysfs
	}
	path := filepath.Join(sysDir, "fs", "ext4", filepath.Base(dev), "journal_task")
	f := Finding{Check: "journal", Severity: OK, Dirs: v.dirs}
	b, err := os.ReadFile(path)
	task := strings.TrimSpace(string(b))
	switch {
	case err != nil:
		f.Found = fmt.Sprintf("%s: ext4 journal unknown (%v)", mp, err)
	case task == "<none>":
		f.Severity = Warn
		f.Found = fmt.Sprintf("%s (%s) is ext4 without a journal", mp, m.Source)
		f.Why = "without a journal ext4 looks for each new inode past every inode freed in the last 30 s, and the spool creates and removes a segment per target at each write of it: creating segments took 55% of spoold's CPU in bench/rrdcached.sh on such a file system, 4% with the journal"
		f.Fix = fmt.Sprintf("tune2fs -O has_journal %s   # on the file system unmounted; or put --spool-dir on a file system with a journal", m.Source)
	default:
		f.Found = fmt.Sprintf("%s: ext4 with a journal (jbd2 thread %s)", mp, task)
	}
	r.add(f)
	return task != "<none>"
}

func checkExt4(r *Report, v *volume) {
	m, mp := v.mount, v.mount.MountPoint
	commit, ok := m.Option("commit")
	if !ok {
		commit = "5 (default)"
	}
	r.add(Finding{Check: "commit", Severity: OK, Dirs: v.dirs,
		Found: fmt.Sprintf("%s: ext4 journal commit every %s s", mp, commit),
		Why:   "a longer commit interval batches the journal writes of many small files (commit=120 took about 25 points of %util off a small-file server) but a crash loses up to that many seconds of writes not fsynced (see --fsync)",
		Fix:   fmt.Sprintf("mount -o remount,commit=60 %s   # and commit=60 in /etc/fstab", mp)})
	data, ok := m.Option("data")
	if !ok {
		data = "ordered (default)"
	}
	r.add(Finding{Check: "data", Severity: OK, Dirs: v.dirs,
		Found: fmt.Sprintf("%s: ext4 data=%s", mp, data),
		Why:   "data=writeback stops ordering data before metadata (another 25 points of %util in the field report) but after a crash a file can hold stale data; spool entries carry a checksum and are quarantined, RRD files are not protected",
		Fix:   fmt.Sprintf("tune2fs -o journal_data_writeback %s   # data= cannot change on remount: set data=writeback in /etc/fstab for %s and remount at boot", m.Source, mp)})
}

// freeLimit is the free share of blocks or inodes below which space warns.
const freeLimit = 0.10

func checkSpace(r *Report, v *volume) {
	var st unix.Statfs_t
	if err := unix.Statfs(v.path, &st); err != nil {
		r.add(Finding{Check: "space", Severity: Warn, Dirs: v.dirs, Found: fmt.Sprintf("statfs %s: %v", v.path, err)})
		return
	}
	mp := v.mount.MountPoint
	if mp == "" {
		mp = v.path
	}
	bs := uint64(st.Bsize)
	free, total := st.Bavail*bs, st.Blocks*bs
	sp := Finding{Check: "space", Severity: OK, Dirs: v.dirs,
		Found: fmt.Sprintf("%s: %s free of %s (%.1f%%)", mp, bytesIEC(free), bytesIEC(total), pct(st.Bavail, st.Blocks)),
		Why:   "a full disk stops the poller writing entries and librrd updating files",
		Fix:   fmt.Sprintf("du -xh --max-depth=2 %s | sort -h | tail   # free space, or move --spool-dir/--rrd-dir", mp)}
	if total > 0 && float64(st.Bavail) < freeLimit*float64(st.Blocks) {
		sp.Severity = Warn
	}
	r.add(sp)
	in := Finding{Check: "inodes", Severity: OK, Dirs: v.dirs,
		Why: "each spool segment (one open per target, more until the writer takes them), each quarantined file and each RRD file takes an inode; when inodes run out, creating them fails with free space left",
		Fix: fmt.Sprintf("df -i %s   # inodes are fixed at mkfs on ext4: mkfs.ext4 -i 8192 gives one per 8 KiB", mp)}
	if st.Files == 0 {
		in.Found = fmt.Sprintf("%s: no fixed inode count (%s)", mp, v.mount.FSType)
	} else {
		in.Found = fmt.Sprintf("%s: %d inodes free of %d (%.1f%%)", mp, st.Ffree, st.Files, pct(st.Ffree, st.Files))
		if float64(st.Ffree) < freeLimit*float64(st.Files) {
			in.Severity = Warn
		}
	}
	r.add(in)
}

func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func bytesIEC(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// checkRRDDir reports whether spoold can create files in the RRD
// directory (check is Options.CheckRRDDir: a probe file created and
// removed). A directory that cannot be written makes every RRD create fail.
// A nil check skips it.
func checkRRDDir(r *Report, dir string, check func(string) error) {
	if check == nil {
		return
	}
	dirs := []string{dir}
	if err := check(dir); err != nil {
		r.add(Finding{Check: "rrd-dir", Severity: Warn, Dirs: dirs, Found: fmt.Sprintf("spoold cannot create files here: %v", err),
			Why: "every RRD file is created through a temp file in this directory; the entries of a target whose file cannot be created stay in the spool",
			Fix: fmt.Sprintf("ls -ld %s; chown <spoold's user> %s   # or run spoold as the directory's owner", dir, dir)})
		return
	}
	r.add(Finding{Check: "rrd-dir", Severity: OK, Dirs: dirs, Found: "spoold can create files here (a probe file created and removed)"})
}
