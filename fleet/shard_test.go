package fleet_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/spoold/spoold/fleet"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want fleet.Shard
		err  bool
	}{
		{"1/1", fleet.Shard{K: 1, N: 1}, false},
		{"2/3", fleet.Shard{K: 2, N: 3}, false},
		{"4096/4096", fleet.Shard{K: 4096, N: 4096}, false},
		{"0/3", fleet.Shard{}, true},
		{"0/0", fleet.Shard{}, true},
		{"4/3", fleet.Shard{}, true},
		{"1/0", fleet.Shard{}, true},
		{"1/4097", fleet.Shard{}, true},
		{"1", fleet.Shard{}, true},
		{"a/b", fleet.Shard{}, true},
		{"-1/3", fleet.Shard{}, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := fleet.ParseShard(tc.in)
			if tc.err {
				if err == nil {
					t.Fatalf("ParseShard(%q) = %v, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want || got.String() != tc.in {
				t.Fatalf("ParseShard(%q) = %v (%q), %v", tc.in, got, got.String(), err)
			}
		})
	}
}

// fleetNames are target names as operators write them.
func fleetNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("site%02d/router-%04d", i%37, i)
	}
	return names
}

// TestShardsCoverTheFleetOnce: every target is owned by exactly one of N
// shards, for several N, and every shard owns some.
func TestShardsCoverTheFleetOnce(t *testing.T) {
	names := fleetNames(5000)
	for _, n := range []int{1, 2, 3, 7, 16} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			perShard := make([]int, n+1)
			for _, name := range names {
				owners := 0
				for k := 1; k <= n; k++ {
					if (fleet.Shard{K: k, N: n}).Owns(name) {
						owners++
						perShard[k]++
					}
				}
				if owners != 1 {
					t.Fatalf("%s is owned by %d of %d shards", name, owners, n)
				}
			}
			for k := 1; k <= n; k++ {
				if perShard[k] == 0 {
					t.Fatalf("shard %d/%d owns no target of %d", k, n, len(names))
				}
			}
		})
	}
}

// TestGrowingMovesOnlyToTheNewShard: from N to N+1 shards, a target either
// stays where it was or moves to shard N+1; the targets that move are
// exactly those shard N+1 owns.
func TestGrowingMovesOnlyToTheNewShard(t *testing.T) {
	names := fleetNames(5000)
	for n := 1; n <= 8; n++ {
		moved, owned := 0, 0
		for _, name := range names {
			before, after := fleet.ShardOf(name, n), fleet.ShardOf(name, n+1)
			if after == n+1 {
				owned++
			}
			if before == after {
				continue
			}
			moved++
			if after != n+1 {
				t.Fatalf("%d→%d shards: %s moved from shard %d to %d, not to the new one", n, n+1, name, before, after)
			}
		}
		if moved != owned || owned == 0 {
			t.Fatalf("%d→%d shards: %d targets moved, the new shard owns %d", n, n+1, moved, owned)
		}
	}
}

// FuzzParseShard: a shard that parses renders as itself, lies in range, and
// ShardOf gives every name a shard of its N.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"1/1", "2/3", "0/3", "4/3", "1/4096", "+1/2", "01/02", "1/", "/"} {
		f.Add(s, "router-1")
	}
	f.Fuzz(func(t *testing.T, s, name string) {
		sh, err := fleet.ParseShard(s)
		if err != nil {
			return
		}
		if sh.K < 1 || sh.K > sh.N || sh.N > fleet.MaxShards {
			t.Fatalf("%q parsed as %+v", s, sh)
		}
		if again, err := fleet.ParseShard(sh.String()); err != nil || again != sh {
			t.Fatalf("%q → %v renders %q → %v, %v", s, sh, sh.String(), again, err)
		}
		if k := fleet.ShardOf(name, sh.N); k < 1 || k > sh.N || sh.Owns(name) != (k == sh.K) {
			t.Fatalf("ShardOf(%q, %d) = %d; %v owns it: %v", name, sh.N, k, sh, sh.Owns(name))
		}
	})
}
