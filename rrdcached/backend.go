package rrdcached

import (
	"context"
	"time"
)

// Backend carries out what the commands ask. The server parses lines,
// checks permissions and limits, resolves file names (see Resolve) and
// formats replies; a Backend never sees a name that escapes the RRD
// directory. File names passed to a Backend are clean and relative to the
// RRD directory ("host/load.rrd").
//
// spoold's backend (rrdwriter) spools each update before Update returns,
// so an acknowledged update survives a crash; where rrdcached would drop
// data (FORGET, a failed write) it keeps it, and the error or the Forget
// result says so.
type Backend interface {
	// Update spools the updates of one file, each as the client sent it
	// ("N:1:2", "1700000000:U:3", "1700000000.5@..." are the backend's to
	// parse). It returns how many were accepted; err names the first one
	// refused. Updates before it are spooled even when err is not nil.
	Update(ctx context.Context, file string, updates []string) (accepted int, err error)
	// Flush returns after every update of file spooled before the call is
	// in the RRD file (or has failed, err says why).
	Flush(ctx context.Context, file string) error
	// FlushAll starts writing every pending update; it does not wait.
	FlushAll(ctx context.Context) error
	// Pending returns the updates of file not yet in the RRD file, in the
	// form the client sent them (times resolved: "1700000000:1:2").
	Pending(ctx context.Context, file string) ([]string, error)
	// Forget is rrdcached's FORGET. spoold keeps the spooled updates (they
	// are acknowledged); kept reports how many stay pending.
	Forget(ctx context.Context, file string) (kept int, err error)
	// Queue lists the files with pending updates and how many each has.
	Queue(ctx context.Context) ([]Queued, error)
	// Stats returns the backend's part of STATS ("UpdatesReceived", ...).
	Stats() []Stat

	First(ctx context.Context, file string, rra int) (time.Time, error)
	Last(ctx context.Context, file string) (time.Time, error)
	// Info returns rrdinfo's key/value lines of the file in rrdinfo's
	// order, after flushing its pending updates.
	Info(ctx context.Context, file string) ([]InfoValue, error)
	// Create creates file (rrdcached's CREATE: -s step, -b begin, -O no
	// overwrite, -r source files are the server's to parse into args).
	Create(ctx context.Context, file string, args CreateArgs) error
	// Fetch flushes the file's pending updates and fetches.
	Fetch(ctx context.Context, file string, args FetchArgs) (FetchResult, error)
	// List lists RRD files (relative names) under dir ("" is the RRD
	// directory itself), recursively if asked.
	List(ctx context.Context, dir string, recursive bool) ([]string, error)
	// Suspend and Resume hold and release the writing of one file
	// (updates are still spooled meanwhile).
	Suspend(file string) error
	Resume(file string) error
	SuspendAll() (n int)
	ResumeAll() (n int)
}

// Queued is one line of QUEUE.
type Queued struct {
	File    string
	Pending int
}

// Stat is one line of STATS: "Name: Value".
type Stat struct {
	Name  string
	Value uint64
}

// InfoValue is one line of INFO: rrdinfo's key, its type (0 float, 1 count,
// 2 string, 3 blob, 4 int as rrdcached prints them) and the value.
type InfoValue struct {
	Key   string
	Type  int
	Value string
}

// CreateArgs are the parsed arguments of CREATE.
type CreateArgs struct {
	Step        time.Duration // -s; 0: librrd's default (300 s)
	Begin       time.Time     // -b; zero: now - 10 s
	NoOverwrite bool          // -O
	Sources     []string      // -r (relative names, resolved like file names)
	Defs        []string      // "DS:..." and "RRA:..." as given
}

// FetchArgs are the parsed arguments of FETCH.
type FetchArgs struct {
	CF         string // AVERAGE, MIN, MAX, LAST
	Start, End time.Time
	Step       time.Duration // 0: the best resolution
	DS         []string      // columns asked for; empty: all
}

// FetchResult is FETCH's answer. Rows[i][j] is the value of DS[j] at
// Start + (i+1)·Step; NaN is printed as rrdcached prints it ("nan").
type FetchResult struct {
	Start, End time.Time
	Step       time.Duration
	DS         []string
	Rows       [][]float64
}
