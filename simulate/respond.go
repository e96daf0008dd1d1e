package simulate

import (
	"time"

	"github.com/gosnmp/gosnmp"
)

// answer decodes a request and encodes the response of its device; ok is
// false when nothing is to be sent.
func (s *Simulator) answer(dec *gosnmp.GoSNMP, req []byte) (out []byte, delay time.Duration, ok bool) {
	pkt, err := dec.SnmpDecodePacket(req)
	if err != nil || (pkt.Version != gosnmp.Version1 && pkt.Version != gosnmp.Version2c) {
		s.c.decodeErrors.Add(1)
		return nil, 0, false
	}
	f := s.fleet
	i, found := f.Index(pkt.Community)
	if !found {
		s.c.badCommunity.Add(1) // as an agent does: no answer to a wrong community
		return nil, 0, false
	}
	b := f.Behavior(i)
	if b.Dead {
		s.c.dropped.Add(1)
		return nil, 0, false
	}
	resp := f.respond(i, b, pkt, f.Now())
	out, cut, err := f.encode(resp, pkt)
	if err != nil {
		s.log.Error("encode simulated response", "device", f.Name(i), "err", err)
		return nil, 0, false
	}
	s.count(pkt.PDUType, cut)
	s.c.varbinds.Add(uint64(len(resp.Variables)))
	return out, b.Delay, true
}

func (s *Simulator) count(t gosnmp.PDUType, cut bool) {
	switch t {
	case gosnmp.GetRequest:
		s.c.gets.Add(1)
	case gosnmp.GetNextRequest:
		s.c.getNexts.Add(1)
	case gosnmp.GetBulkRequest:
		s.c.getBulks.Add(1)
	}
	if cut {
		s.c.tooBig.Add(1)
	}
}

// respond builds device i's response to pkt at time t: Get, GetNext and
// (v2c) GetBulk are answered; other requests get genErr.
func (f *Fleet) respond(i int, b Behavior, pkt *gosnmp.SnmpPacket, t time.Time) *gosnmp.SnmpPacket {
	resp := &gosnmp.SnmpPacket{
		Version: pkt.Version, Community: pkt.Community, PDUType: gosnmp.GetResponse,
		RequestID: pkt.RequestID,
	}
	r := f.reading(i, b, t)
	v1 := pkt.Version == gosnmp.Version1
	var oid []uint32
	switch {
	case pkt.PDUType == gosnmp.GetRequest:
		resp.Variables = make([]gosnmp.SnmpPDU, len(pkt.Variables))
		for k, v := range pkt.Variables {
			oid = appendOID(oid[:0], v.Name)
			resp.Variables[k] = r.get(oid, v.Name)
		}
	case pkt.PDUType == gosnmp.GetNextRequest:
		resp.Variables = make([]gosnmp.SnmpPDU, len(pkt.Variables))
		for k, v := range pkt.Variables {
			oid = appendOID(oid[:0], v.Name)
			resp.Variables[k] = r.at(r.sh.next(oid, v1), v.Name)
		}
	case pkt.PDUType == gosnmp.GetBulkRequest && !v1:
		resp.Variables = r.bulk(pkt, f.opts.MaxBulkVarbinds)
	default:
		resp.Error = gosnmp.GenErr
		resp.Variables = asSent(pkt.Variables)
		return resp
	}
	if v1 {
		for k, v := range resp.Variables {
			switch v.Type {
			case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView:
				// v1 has no exceptions: the whole request fails with
				// noSuchName, its varbinds coming back as sent.
				resp.Error, resp.ErrorIndex = gosnmp.NoSuchName, uint8(min(k+1, 255))
				resp.Variables = asSent(pkt.Variables)
				return resp
			}
		}
	}
	return resp
}

func asSent(vs []gosnmp.SnmpPDU) []gosnmp.SnmpPDU {
	out := make([]gosnmp.SnmpPDU, len(vs))
	for k, v := range vs {
		out[k] = gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.Null}
	}
	return out
}

// bulk answers a GetBulk (RFC 3416 4.2.3): the successors of the first
// non-repeaters varbinds, then up to max-repetitions rounds of the
// successors of the others, at most limit varbinds. The rounds end early
// once every repeater is at the end of the view.
func (r *reading) bulk(pkt *gosnmp.SnmpPacket, limit int) []gosnmp.SnmpPDU {
	vs := pkt.Variables
	n := min(int(pkt.NonRepeaters), len(vs))
	reps, rounds := len(vs)-n, int(pkt.MaxRepetitions)
	out := make([]gosnmp.SnmpPDU, 0, min(n+reps*min(rounds, limit), limit))
	var oid []uint32
	for _, v := range vs[:min(n, limit)] {
		oid = appendOID(oid[:0], v.Name)
		out = append(out, r.at(r.sh.next(oid, false), v.Name))
	}
	if reps == 0 || rounds == 0 {
		return out
	}
	pos := make([]int, reps) // each repeater's last entry, or -1 before the first round
	for k, v := range vs[n:] {
		pos[k] = r.sh.next(appendOID(oid[:0], v.Name), false)
	}
	for round := 0; round < rounds; round++ {
		ended := true
		for k := range pos {
			if len(out) == limit {
				return out
			}
			if round > 0 && pos[k] < len(r.sh.entries) {
				pos[k]++
			}
			name := vs[n+k].Name
			if pos[k] < len(r.sh.entries) {
				name = r.sh.entries[pos[k]].name
				ended = false
			} else if round > 0 {
				name = out[len(out)-reps].Name // endOfMibView keeps the name it ended at
			}
			out = append(out, r.at(pos[k], name))
		}
		if ended {
			break
		}
	}
	return out
}

// encode marshals resp within MaxMessageSize: a GetBulk response loses
// varbinds from its end until it fits; another that does not fit becomes
// tooBig (v2c: no varbinds, v1: the request's as sent). cut reports
// either.
func (f *Fleet) encode(resp, req *gosnmp.SnmpPacket) (out []byte, cut bool, err error) {
	limit := f.opts.MaxMessageSize
	for {
		out, err = resp.MarshalMsg()
		if err != nil || len(out) <= limit {
			return out, cut, err
		}
		cut = true
		n := len(resp.Variables)
		if req.PDUType != gosnmp.GetBulkRequest || n == 0 || resp.Error != gosnmp.NoError {
			resp.Error, resp.ErrorIndex = gosnmp.TooBig, 0
			resp.Variables = nil
			if req.Version == gosnmp.Version1 {
				resp.Variables = asSent(req.Variables)
			}
			if out, err = resp.MarshalMsg(); err == nil && len(out) > limit {
				resp.Variables = nil // the request itself is too large to echo
				out, err = resp.MarshalMsg()
			}
			return out, cut, err
		}
		resp.Variables = resp.Variables[:min(n-1, n*limit/len(out))]
	}
}
