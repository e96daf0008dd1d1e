package rrd

import (
	"fmt"
	"os"
)

// The C heap. librrd (a file's create, info, fetch) and the libraries of a
// graph (cairo, pango, pixman) allocate with glibc's malloc, on whichever
// of the daemon's threads the call runs, and a Go daemon has dozens of
// threads (one for each system call that waits on the disk). glibc gives
// threads up to 8 arenas a CPU, each keeping what its calls freed up to
// twice the largest buffer freed so far (a create's or a graph's: hundreds
// of KB). On a 2-CPU host polling 48,000 interfaces with the default
// archives the 16 arenas held 37 MiB of RSS beside the Go heap.

// CMallocArenas is the arenas BoundCMalloc allows: the C calls are few
// and short next to the Go code around them. (A fixed mmap threshold, the
// other way to keep freed buffers out of the arenas, made librrd's create
// of a 790 KB file 8 times slower: it maps and unmaps its buffers anew.)
const CMallocArenas = 2

// cMallocEnv are the environment variables that set glibc's malloc
// parameters: where the operator set one, glibc's are left as set.
var cMallocEnv = []string{"GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"}

// BoundCMalloc bounds the C heap to CMallocArenas arenas, unless one of
// glibc's malloc environment variables is set, which then decide. It
// returns what is in force, for the daemon's start line ("2 arenas", or
// "MALLOC_ARENA_MAX set"). Call it once, before librrd runs.
func BoundCMalloc() (string, error) {
	for _, v := range cMallocEnv {
		if _, set := os.LookupEnv(v); set {
			return v + " set", nil
		}
	}
	if err := mallocArenas(CMallocArenas); err != nil {
		return "", fmt.Errorf("bound the C heap: %w", err)
	}
	return fmt.Sprintf("%d arenas", CMallocArenas), nil
}
