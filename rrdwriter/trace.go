package rrdwriter

import (
	"context"
	"log/slog"
	"strconv"
	"strings"

	"github.com/spoold/spoold/spool"
)

// trace logs at debug level what a pass read and did, one line a batch:
// each segment read (name, bytes, good entries, first and last poll time,
// bad ranges), the batch times whose segment was gone, the entries
// applied and those skipped as applied, and the segments queued for
// removal. It is how a lost or doubled entry is traced to the pass that
// read its segment (the crash trials print these lines).
func (p *pass) trace(key string, err error) {
	if !p.w.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	var b strings.Builder
	for i := range p.segs {
		g := &p.segs[i]
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.Ref.String())
		b.WriteByte('@')
		b.WriteString(strconv.FormatInt(g.Size, 10))
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(len(g.Entries)))
		if n := len(g.Entries); n > 0 {
			b.WriteByte('[')
			b.WriteString(strconv.FormatInt(g.Entries[0].Time, 10))
			b.WriteString("..")
			b.WriteString(strconv.FormatInt(g.Entries[n-1].Time, 10))
			b.WriteByte(']')
		}
		if len(g.Bad) > 0 {
			b.WriteString("+bad")
			b.WriteString(strconv.Itoa(len(g.Bad)))
		}
	}
	attrs := []any{"key", key, "segments", b.String(), "applied", p.applied, "skipped", p.skipped,
		"removing", refNames(p.unlink)}
	if len(p.vanished) > 0 {
		attrs = append(attrs, "vanished", p.vanished)
	}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	p.w.log.Debug("spool batch", attrs...)
}

func refNames(refs []spool.Ref) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.String()
	}
	return strings.Join(names, " ")
}
