//go:build cgo

package rrd

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCreateLongestTargetName creates, with the real librrd, the file of
// target names of every length the targets file allows up to 255: names of
// 201 characters and more failed forever with "Cannot create temporary
// file" (librrd appends "XXXXXX" to the temp name, which then passed
// NAME_MAX).
func TestCreateLongestTargetName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{1, 200, 201, 220, 254, 255} {
		t.Run(strconv.Itoa(n)+" characters", func(t *testing.T) {
			name := strings.Repeat("a", n-1) + "z"
			path := filepath.Join(dir, RRDPath(name))
			if err := pathCreate(path, testLayout(), 1700000000); err != nil {
				t.Fatal(err)
			}
			fi, err := pathInfo(path)
			if err != nil || fi.Last != 1700000000 {
				t.Fatalf("info %+v, %v", fi, err)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".*"))
			if len(left) != 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}
