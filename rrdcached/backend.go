package rrdcached

import (
	"context"
	"errors"
	"fmt"
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
	// ErrNoSuchFile when file does not exist; BadTimestamp and
	// TimeNotAfter give rrdcached's words for a refused value.
	Update(ctx context.Context, file string, updates []string) (accepted int, err error)
	// Flush returns after every update of file spooled before the call is
	// in the RRD file (or has failed, err says why). flushed is false when
	// the backend holds nothing for file: no update since it started or
	// since FORGET (rrdcached: the file is not in its cache tree, "Nothing
	// to flush"); a file with updates all written already is flushed
	// (rrdcached: "Successfully flushed"). ErrNoSuchFile when the backend
	// holds nothing and the file does not exist.
	Flush(ctx context.Context, file string) (flushed bool, err error)
	// FlushAll starts writing every pending update; it does not wait.
	FlushAll(ctx context.Context) error
	// Pending returns the updates of file not yet in the RRD file, in the
	// form the client sent them (times resolved: "1700000000:1:2").
	Pending(ctx context.Context, file string) ([]string, error)
	// Forget is rrdcached's FORGET. spoold keeps the spooled updates (they
	// are acknowledged); kept reports how many stay pending. ErrNotCached
	// when the backend has never seen the file (rrdcached: not in its tree).
	Forget(ctx context.Context, file string) (kept int, err error)
	// Queue lists the files with pending updates and how many each has.
	Queue(ctx context.Context) ([]Queued, error)
	// Stats returns the backend's part of STATS ("UpdatesReceived", ...).
	Stats() []StatsValue

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
	// List lists dir ("" is the RRD directory itself) as rrdcached's LIST
	// does: its subdirectories and ".rrd" files, or recursively only the
	// ".rrd" files below it, named relative to dir; a dir ending in ".rrd"
	// that is a regular file lists its own base name. Errors wrap the
	// syscall.Errno (the reply prints its text, as rrdcached does).
	List(ctx context.Context, dir string, recursive bool) ([]string, error)
	// Suspend and Resume hold and release the writing of one file
	// (updates are still spooled meanwhile). changed is false when the
	// file was already suspended (Suspend) or not suspended (Resume);
	// ErrNotCached when the backend holds nothing for the file.
	Suspend(file string) (changed bool, err error)
	Resume(file string) (changed bool, err error)
	SuspendAll() (n int)
	ResumeAll() (n int)
}

// Queued is one line of QUEUE.
type Queued struct {
	File    string
	Pending int
}

// StatsValue is one line of STATS: "Name: Value".
type StatsValue struct {
	Name  string
	Value uint64
}

// InfoValue is one line of INFO: rrdinfo's key, its type (0 float, 1 count,
// 2 string, 3 blob, 4 int as rrdcached prints them) and the value, formatted
// as rrdcached formats it: floats "%0.10e" or "NaN", counts and ints in
// decimal, a blob's size.
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
	Template    string        // -t (a relative name, resolved like file names); "": none
	Defs        []string      // "DS:..." and "RRA:..." as given
}

// FetchArgs are the parsed arguments of FETCH. FETCH has no step: rrdcached
// asks rrd_fetch_r for step (unsigned long)-1, and a librrd backend should
// do the same. The columns a client names after <end> are selected by the
// server from the result (it answers rrdcached's errors for unknown or
// repeated names), so a Backend always returns every data source.
type FetchArgs struct {
	CF         string // AVERAGE, MIN, MAX, LAST, as the client sent it
	Start, End time.Time
	// MaxBytes bounds the values the fetch returns, 8 bytes each: rows ×
	// every data source of the file (librrd returns them all, whatever
	// columns the client names). A Backend estimates them from the file's
	// header before it fetches and, over MaxBytes, returns a
	// *FetchTooLargeError; 0: no bound.
	MaxBytes int64
}

// FetchTooLargeError is Fetch's error for a fetch over FetchArgs.MaxBytes:
// the rows and data sources the file's header says it would return.
type FetchTooLargeError struct {
	Rows, DS int64
}

// Bytes is what the fetch would return, 8 bytes a value.
func (e *FetchTooLargeError) Bytes() int64 { return e.Rows * e.DS * 8 }

func (e *FetchTooLargeError) Error() string {
	return fmt.Sprintf("%d rows of %d data sources (%s of values)", e.Rows, e.DS, byteSize(e.Bytes()))
}

// byteSize shows b in MiB, or in bytes under one.
func byteSize(b int64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%d bytes", b)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// FetchResult is FETCH's answer. Rows[i][j] is the value of DS[j] at
// Start + (i+1)·Step; NaN is printed as rrdcached prints it ("nan").
type FetchResult struct {
	Start, End time.Time
	Step       time.Duration
	DS         []string
	Rows       [][]float64
}

// ErrNoSuchFile is returned (wrapped or not) by a Backend for an RRD file
// that does not exist; the server replies as rrdcached does ("No such
// file: <path>").
var ErrNoSuchFile = errors.New("no such file")

// ErrNotCached is returned by Forget, Suspend and Resume for a file the
// backend holds nothing for (rrdcached: not in its cache tree).
var ErrNotCached = errors.New("not in the cache")

// ReplyError is an error whose text is the message rrdcached sends for it
// (after "-1 "); a Backend returns one where rrdcached's wording is known
// and the server sends Msg as is. Any other error is sent as rrdcached
// sends librrd's errors ("RRD Error: <err>").
type ReplyError struct {
	Msg string
}

func (e *ReplyError) Error() string { return e.Msg }

// BadTimestamp is UPDATE's error for a value without a leading
// "<time>:" (rrdcached: "Cannot find timestamp in '<value>'!").
func BadTimestamp(value string) error {
	return &ReplyError{Msg: fmt.Sprintf("Cannot find timestamp in '%s'!", value)}
}

// TimeNotAfter is UPDATE's error for a value at or before the file's last
// update, in rrdcached's words and number format.
func TimeNotAfter(t, last float64) error {
	return &ReplyError{Msg: fmt.Sprintf("illegal attempt to update using time %f when last update time is %f (minimum one second step)", t, last)}
}
