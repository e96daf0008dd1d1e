package spool

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
)

func sampleEntry() Entry {
	return Entry{
		Key: "core-router-1/ifTable", Time: 1700000000, Flags: FlagDiscontinuity,
		Values: []Value{
			{Name: "ifHCInOctets1", Type: Counter, Counter: math.MaxUint64 - 5},
			{Name: "cpu", Type: Gauge, Gauge: 42.5},
			{Name: "ifHCOutOctets1", Type: Unknown},
		},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, e := range []Entry{sampleEntry(), {Key: "k", Time: 0}} {
		t.Run(e.Key, func(t *testing.T) {
			buf, err := e.AppendEncode(nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(buf) != e.EncodedLen() {
				t.Fatalf("encoded %d bytes, EncodedLen says %d", len(buf), e.EncodedLen())
			}
			got, err := Decode(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, e) {
				t.Fatalf("Decode = %+v, want %+v", got, e)
			}
		})
	}
}

func TestEncodeRejectsInvalid(t *testing.T) {
	long := string(make([]byte, MaxKeyLen+1))
	for name, e := range map[string]Entry{
		"empty key":      {Time: 1},
		"long key":       {Key: long, Time: 1},
		"negative time":  {Key: "k", Time: -1},
		"empty ds name":  {Key: "k", Values: []Value{{Type: Gauge}}},
		"bad value type": {Key: "k", Values: []Value{{Name: "x", Type: 9}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := e.AppendEncode(nil); err == nil {
				t.Fatal("AppendEncode accepted an invalid entry")
			}
		})
	}
}

// TestDecodeCorruption flips, truncates and extends an encoding and checks
// that each is a *CorruptionError at the right place.
func TestDecodeCorruption(t *testing.T) {
	e := sampleEntry()
	good, _ := e.AppendEncode(nil)
	body := len(good) - trailerLen
	mutate := func(f func([]byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tc := range []struct {
		name   string
		data   []byte
		offset int64
	}{
		{"empty", nil, 0},
		{"truncated header", good[:10], 10},
		{"truncated body", good[:len(good)-7], int64(len(good) - 7 - trailerLen)},
		{"bad magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), 0},
		{"future version", mutate(func(b []byte) []byte { b[4] = 3; return b }), 4},
		{"milliseconds past 999", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[18:], 1000); return resum(b) }), 18},
		{"flipped value bit", mutate(func(b []byte) []byte { b[body-3] ^= 1; return b }), int64(body)},
		{"flipped checksum", mutate(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), int64(body)},
		{"key length past end", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[6:], 1000); return resum(b) }), headerLen},
		{"zero key length", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[6:], 0); return resum(b) }), 6},
		{"more values than bytes", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint16(b[16:], 4); return resum(b) }), int64(body)},
		{"trailing garbage", mutate(func(b []byte) []byte { return resum(append(b[:body], 0, 0, 0, 0, 0)) }), int64(body)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.data)
			var ce *CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode error = %v, want *CorruptionError", err)
			}
			if ce.Offset != tc.offset {
				t.Errorf("offset = %d, want %d (%s)", ce.Offset, tc.offset, ce.Reason)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	e := sampleEntry()
	good, _ := e.AppendEncode(nil)
	f.Add(good)
	f.Add(good[:20])
	f.Add([]byte("SPLD"))
	// Entries as the poller writes them: an if-mib:2 poll, a host poll
	// with gauges and unknowns, an empty poll.
	for _, e := range []Entry{
		{Key: "core-sw1", Time: 1700000300, Values: []Value{
			{Name: "in1", Type: Counter, Counter: 123456789012}, {Name: "out1", Type: Counter, Counter: 98765},
			{Name: "in2", Type: Counter, Counter: 0}, {Name: "out2", Type: Unknown}}},
		{Key: "srv-db1", Time: 1700000600, Flags: FlagDiscontinuity, Values: []Value{
			{Name: "load1", Type: Gauge, Gauge: 0.15}, {Name: "memfree", Type: Gauge, Gauge: 1.5e9},
			{Name: "uptime", Type: Counter, Counter: 8640000}, {Name: "ssCpuRawUser", Type: Unknown}}},
		{Key: "edge-rtr1", Time: 0},
	} {
		b, err := e.AppendEncode(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			var ce *CorruptionError
			if !errors.As(err, &ce) {
				t.Fatalf("Decode error %v is not a *CorruptionError", err)
			}
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		again, err := e.AppendEncode(nil)
		if err != nil {
			t.Fatalf("decoded entry does not encode: %v", err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", again, data)
		}
	})
}

// TestDecodeInternsNames checks that decoding repeats no allocation per
// value name once the names are known, and that the names stay right.
func TestDecodeInternsNames(t *testing.T) {
	e := sampleEntry()
	data, err := e.AppendEncode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(data); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		got, err := Decode(data)
		if err != nil || got.Values[0].Name != e.Values[0].Name {
			t.Fatalf("Decode: %v", err)
		}
	})
	if max := 2.0; allocs > max { // the key and the values slice
		t.Fatalf("Decode allocates %.0f times per entry of %d values, want at most %.0f", allocs, len(e.Values), max)
	}
}

// TestDecodeVersion1 reads an entry written by a version 1 spoold: the
// bytes v2 uses for milliseconds were reserved (0), and the time is whole
// seconds. Version 2 keeps the milliseconds.
func TestDecodeVersion1(t *testing.T) {
	e := sampleEntry()
	e.Milli = 0
	v2, err := e.AppendEncode(nil)
	if err != nil {
		t.Fatal(err)
	}
	v1 := append([]byte(nil), v2...)
	v1[4] = Version1
	v1 = resum(v1)
	got, err := Decode(v1)
	if err != nil || !reflect.DeepEqual(got, e) {
		t.Fatalf("Decode(v1) = %+v, %v; want %+v", got, err, e)
	}
	e.Milli = 999
	v2, err = e.AppendEncode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Decode(v2); err != nil || got.Milli != 999 || v2[4] != Version2 {
		t.Fatalf("Decode(v2) = %+v, %v", got, err)
	}
	e.Milli = 1000
	if _, err := e.AppendEncode(nil); err == nil {
		t.Fatal("encoded 1000 milliseconds")
	}
}

// resum replaces an encoding's checksum with the right one.
func resum(b []byte) []byte {
	b = b[:len(b)-trailerLen]
	return binary.LittleEndian.AppendUint32(b, crc32c(b))
}

// TestValueAppendText: a counter is written exactly (past 2^53 too, where
// a float64 would round it), a gauge as librrd parses it back, an unknown
// value as "U".
func TestValueAppendText(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{Value{Type: Counter, Counter: 1<<64 - 1}, "18446744073709551615"},
		{Value{Type: Counter, Counter: 1<<53 + 1}, "9007199254740993"},
		{Value{Type: Gauge, Gauge: -2}, "-2"},
		{Value{Type: Gauge, Gauge: 0.25}, "0.25"},
		{Value{Type: Unknown, Counter: 7}, "U"},
	} {
		if got := string(tc.v.AppendText([]byte("t:"))); got != "t:"+tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, "t:"+tc.want)
		}
	}
}

// TestPollTimeOrder: seconds first, then milliseconds.
func TestPollTimeOrder(t *testing.T) {
	order := []PollTime{{Sec: -1}, {0, 0}, {0, 999}, {1, 0}, {1, 1}, {1_700_000_000, 500}}
	for i, a := range order {
		for j, b := range order {
			if got, want := a.Compare(b), cmp.Compare(i, j); got != want {
				t.Errorf("%+v.Compare(%+v) = %d, want %d", a, b, got, want)
			}
		}
	}
	e := Entry{Key: "k", Time: 1, Milli: 1}
	if e.PollTime() != order[4] {
		t.Errorf("PollTime of %+v = %+v, want %+v", e, e.PollTime(), order[4])
	}
}
