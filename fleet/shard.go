package fleet

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Shard says which part of a fleet an instance polls when N instances
// read the same targets file (--shard K/N): the targets that rendezvous
// hashing gives shard K. Shards are numbered 1 to N. The zero Shard (and
// 1/1) polls every target.
//
// Rendezvous (highest-random-weight) hashing: a target belongs to the
// shard of the highest weight xxhash64(shard number, 8 bytes big-endian,
// then the target name); ties, which need equal 64-bit hashes, go to the
// lower number. A target's shard depends on its name and N alone, so every
// instance agrees without talking to the others, and going from N to N+1
// instances moves only the targets whose weight for the new shard beats
// all the others': each moves to the new shard, none between old ones.
type Shard struct {
	K, N int
}

// MaxShards is the largest N of a Shard.
const MaxShards = 4096

// ParseShard parses "K/N" with 1 ≤ K ≤ N ≤ MaxShards.
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("parse shard %q: want K/N, e.g. 2/3", s)
	}
	sh := Shard{K: k, N: n}
	if err := sh.Validate(); err != nil || sh == (Shard{}) {
		return Shard{}, fmt.Errorf("parse shard %q: want K/N with 1 ≤ K ≤ N ≤ %d", s, MaxShards)
	}
	return sh, nil
}

// Validate reports whether the shard is the zero Shard or 1 ≤ K ≤ N ≤
// MaxShards.
func (s Shard) Validate() error {
	if s == (Shard{}) || s.N >= 1 && s.N <= MaxShards && s.K >= 1 && s.K <= s.N {
		return nil
	}
	return fmt.Errorf("check shard %d/%d: want 1 ≤ K ≤ N ≤ %d", s.K, s.N, MaxShards)
}

// String is "K/N", or "" for the zero Shard (every target).
func (s Shard) String() string {
	if s == (Shard{}) {
		return ""
	}
	return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N)
}

// Owns reports whether the target named name belongs to this shard.
func (s Shard) Owns(name string) bool {
	return s.N <= 1 || ShardOf(name, s.N) == s.K
}

// ShardOf returns the shard, 1 to n, that rendezvous hashing gives the
// target named name among n shards.
func ShardOf(name string, n int) int {
	best, bestW := 1, uint64(0)
	buf := make([]byte, 8, 8+len(name))
	buf = append(buf, name...)
	for k := 1; k <= n; k++ {
		binary.BigEndian.PutUint64(buf, uint64(k))
		if w := xxhash.Sum64(buf); k == 1 || w > bestW {
			best, bestW = k, w
		}
	}
	return best
}

// Select returns the targets of ts this shard owns, in their order.
func (s Shard) Select(ts []*Target) []*Target {
	if s.N <= 1 {
		return ts
	}
	out := make([]*Target, 0, len(ts)/s.N+1)
	for _, t := range ts {
		if s.Owns(t.Name) {
			out = append(out, t)
		}
	}
	return out
}
