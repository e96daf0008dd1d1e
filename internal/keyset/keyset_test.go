package keyset

import (
	"sync"
	"testing"
)

// TestSet: what Update adds, Get finds and Len counts; what it deletes is
// gone.
func TestSet(t *testing.T) {
	var s Set[string]
	if _, ok := s.Get(1); ok || s.Len() != 0 {
		t.Fatalf("zero set: Get(1) found, or Len %d", s.Len())
	}
	s.Update(func(m map[uint64]string) { m[1], m[2] = "a", "b" })
	if v, ok := s.Get(2); !ok || v != "b" || s.Len() != 2 {
		t.Errorf("after adding 1 and 2: Get(2) = %q, %v; Len %d", v, ok, s.Len())
	}
	if _, ok := s.Get(3); ok {
		t.Error("Get(3) found a key never added")
	}
	s.Update(func(m map[uint64]string) { delete(m, 1) })
	if _, ok := s.Get(1); ok || s.Len() != 1 {
		t.Errorf("after deleting 1: found %v, Len %d", ok, s.Len())
	}
}

// TestSetConcurrent: look-ups during updates see each key either absent
// or with its value (run with -race).
func TestSetConcurrent(t *testing.T) {
	var s Set[uint64]
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for k := range uint64(1000) {
			s.Update(func(m map[uint64]uint64) { m[k%16] = k % 16 })
			if k%3 == 0 {
				s.Update(func(m map[uint64]uint64) { delete(m, k%16) })
			}
		}
	}()
	go func() {
		defer wg.Done()
		for k := range uint64(1000) {
			if v, ok := s.Get(k % 16); ok && v != k%16 {
				t.Errorf("Get(%d) = %d", k%16, v)
			}
		}
	}()
	wg.Wait()
	if n := s.Len(); n > 16 {
		t.Errorf("Len %d of at most 16 keys", n)
	}
}
