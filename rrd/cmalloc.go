package rrd

import (
	"fmt"
	"os"
)

// The C heap. librrd (a file's create, info, fetch) and the libraries of a
// graph (cairo, pango, pixman) allocate with glibc's malloc, on whichever
// of the daemon's threads the call runs: and a Go daemon has hundreds of
// threads (one for each system call that waited on the disk). glibc gives
// threads up to 8 arenas a CPU, and each keeps what its calls freed, up to
// twice the largest buffer freed so far: after a create's or a graph's
// buffers of hundreds of KB its mmap threshold rises to their size, and
// every later one comes from and stays in an arena. On a 2-CPU host polling
// 48,000 interfaces with the default archives that was 37 MiB of RSS beside
// the Go heap, 16 arenas of 2–4 MiB.

// CMallocArenas and CMallocMmapThreshold are the bounds BoundCMalloc sets:
// two arenas, since the C calls are few and short next to the Go code
// around them; and buffers of 128 KiB (glibc's own first threshold) and
// more mapped for each call and unmapped when freed, whatever was freed
// before.
const (
	CMallocArenas        = 2
	CMallocMmapThreshold = 128 << 10
)

// cMallocEnv are the environment variables that set glibc's malloc
// parameters: where the operator set one, glibc's are left as set.
var cMallocEnv = []string{"GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"}

// BoundCMalloc bounds the C heap (see above): CMallocArenas arenas and a
// fixed CMallocMmapThreshold, unless one of glibc's malloc environment
// variables is set, which then decide. It returns what is in force, for
// the daemon's start line: "2 arenas, mmap from 128 KiB", or "MALLOC_ARENA_MAX
// set". Call it once, before librrd runs.
func BoundCMalloc() (string, error) {
	if v := cMallocEnvSet(); v != "" {
		return v + " set", nil
	}
	if err := boundCMalloc(CMallocArenas, CMallocMmapThreshold); err != nil {
		return "", fmt.Errorf("bound the C heap: %w", err)
	}
	return fmt.Sprintf("%d arenas, mmap from %d KiB", CMallocArenas, CMallocMmapThreshold>>10), nil
}

// cMallocEnvSet is the first of cMallocEnv set, or "".
func cMallocEnvSet() string {
	for _, v := range cMallocEnv {
		if _, set := os.LookupEnv(v); set {
			return v
		}
	}
	return ""
}
