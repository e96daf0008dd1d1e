package spool

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// MarkerFile is the file at the top of a spool directory that says it is
// spoold's, in which format and with which levels:
//
//	spoold spool 1
//	levels 1:2
//
// Open writes it when it creates a spool (or adopts one made before the
// marker existed) and refuses a non-empty directory without it: spoold
// deletes stale temp files and moves misfits to quarantine/, which must
// never happen to a directory that is not a spool.
const MarkerFile = "SPOOLD"

// markerFormat is the spool format the marker names; a marker with another
// number is refused.
const markerFormat = 1

// maxMarkerLen bounds the marker read.
const maxMarkerLen = 256

// errNotMarker is wrapped when the marker's content is not a spoold marker.
var errNotMarker = errors.New("not a spoold marker")

// markerContent returns the marker of a spool with layout l.
func markerContent(l Levels) []byte {
	return fmt.Appendf(nil, "spoold spool %d\nlevels %s\n", markerFormat, l)
}

// parseMarker parses a marker: exactly the two lines markerContent writes.
func parseMarker(b []byte) (Levels, error) {
	lines := strings.Split(string(b), "\n")
	if len(lines) != 3 || lines[2] != "" {
		return Levels{}, fmt.Errorf("%w: want 2 lines, got %q", errNotMarker, b)
	}
	version, ok := strings.CutPrefix(lines[0], "spoold spool ")
	if !ok || !canonicalDecimal(version, 9, 1<<31-1) {
		return Levels{}, fmt.Errorf("%w: first line %q", errNotMarker, lines[0])
	}
	if version != strconv.Itoa(markerFormat) {
		return Levels{}, fmt.Errorf("spool format %s: this spoold knows format %d only", version, markerFormat)
	}
	levels, ok := strings.CutPrefix(lines[1], "levels ")
	if !ok {
		return Levels{}, fmt.Errorf("%w: second line %q", errNotMarker, lines[1])
	}
	return ParseLevels(levels)
}

// readMarker reads the spool's marker, a regular file reached without
// following a symlink.
func (s *Spool) readMarker() (Levels, error) {
	path := filepath.Join(s.dir, MarkerFile)
	fd, err := fileutil.Openat(s.rootfd, MarkerFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Levels{}, memberError(s.rootfd, MarkerFile, path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Levels{}, fmt.Errorf("stat spool marker %s: %w", path, err)
	}
	if err := wantType(s.rootfd, MarkerFile, path, st.Mode, unix.S_IFREG); err != nil {
		return Levels{}, err
	}
	buf := make([]byte, maxMarkerLen+1)
	n, err := fileutil.ReadFull(fd, buf)
	if err != nil {
		return Levels{}, fmt.Errorf("read spool marker %s: %w", path, err)
	}
	l, err := parseMarker(buf[:n])
	if err != nil {
		return Levels{}, fmt.Errorf("read spool marker %s: %w", path, err)
	}
	return l, nil
}

// writeMarker publishes the marker: a temp file in tmp/, fsynced, renamed
// to the top of the spool, and the spool directory fsynced.
func (s *Spool) writeMarker() error {
	path := filepath.Join(s.dir, MarkerFile)
	name := s.tempName()
	tmp := filepath.Join(s.dir, TmpDir, name)
	fd, err := fileutil.Openat(s.tmpfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return fmt.Errorf("create spool marker %s: %w", tmp, err)
	}
	err = fileutil.WriteAll(fd, markerContent(s.layout))
	if err == nil {
		err = fileutil.Fsync(fd, tmp)
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(s.tmpfd, name, s.rootfd, MarkerFile)
	}
	if err != nil {
		_ = fileutil.Unlinkat(s.tmpfd, name, 0) // never published
		return fmt.Errorf("write spool marker %s: %w", path, err)
	}
	return fileutil.Fsync(s.rootfd, s.dir)
}
