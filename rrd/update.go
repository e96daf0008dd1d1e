package rrd

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Sample is one update: a time and one formatted value per template name
// ("U" for unknown).
type Sample struct {
	Time   int64  // Unix seconds
	Milli  uint16 // and milliseconds: librrd takes "<seconds>.<ms>"
	Values []string
}

// update applies rows in order to the file librrd opens by the name open
// (path names it in errors), template naming the data source of each
// value. It formats each row as rrd_update takes it,
// "<seconds>[.<ms>]:v:v...", and hands them to librrd in one call. Like
// librrd it may apply a prefix of rows and fail on the first one it
// rejects; the error then carries librrd's message.
func update(path, open string, template []string, rows []Sample) error {
	bp := updateBufs.Get().(*[]byte)
	defer updateBufs.Put(bp)
	*bp = updateArgs((*bp)[:0], open, template, rows)
	args := 1 + len(rows)
	if len(template) > 0 {
		args++
	}
	// A NUL inside an argument would shift every row after it.
	if bytes.Count(*bp, []byte{0}) != args {
		return fmt.Errorf("update rrd %s: %w", path, errors.New("a path, template or value holds a NUL byte"))
	}
	if err := librrdUpdate(*bp, len(rows), len(template) > 0); err != nil {
		// librrd's message names the file by the name it opened.
		return fmt.Errorf("update rrd %s: %w", path, errors.New(strings.ReplaceAll(err.Error(), open, path)))
	}
	return nil
}

// updateBufs holds the buffers of updateArgs: one update's arguments are
// garbage as soon as librrd returns.
var updateBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8192); return &b }}

// updateArgs appends the arguments of one update to b as the update shim
// takes them: the path, the template's names joined by ":" if there is a
// template, and each row, every one NUL-terminated.
func updateArgs(b []byte, path string, template []string, rows []Sample) []byte {
	b = append(append(b, path...), 0)
	if len(template) > 0 {
		for i, name := range template {
			if i > 0 {
				b = append(b, ':')
			}
			b = append(b, name...)
		}
		b = append(b, 0)
	}
	for _, r := range rows {
		b = append(AppendRow(b, r), 0)
	}
	return b
}

// AppendRow appends r as rrd_update and rrdcached's UPDATE take it:
// "<seconds>[.<ms>]:v:v...".
func AppendRow(b []byte, r Sample) []byte {
	b = strconv.AppendInt(b, r.Time, 10)
	if r.Milli > 0 {
		b = append(b, '.', byte('0'+r.Milli/100), byte('0'+r.Milli/10%10), byte('0'+r.Milli%10))
	}
	for _, v := range r.Values {
		b = append(b, ':')
		b = append(b, v...)
	}
	return b
}
