package rrdwriter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
)

// Forwarding. With Options.Forward set, the writer's RRD is a forwarder:
// each file's batch goes as UPDATEs to a remote rrdcached or spoold
// instead of librrd, under the file's name relative to Options.Dir (the
// key's RRDPath), which the remote resolves in its own directory. The
// writer's exactly-once logic (apply.go) is the same for both: a batch's
// segments are removed only once Info, read from the remote, shows the
// file's last update at one of its entries (not merely after them: another
// client's update ahead of the clock hides nothing).
//
// An rrdcached acknowledgement is not durable (its journal is a buffered
// write, and without -j there is none), so Update does not trust it: it
// sends the rows and a FLUSH of the file in one BATCH, then reads INFO's
// last_update, and succeeds only when that is at or after its last row.
// INFO, not LAST: rrdcached's LAST answers the newest update it has queued,
// written or not, rounded down to the file's step, and so can show a row
// the file does not hold. A row the remote refused as not after its last
// update (an update that landed before a crash, replayed from rrdcached's
// journal) is no failure when INFO shows it. LAST's seconds are all the
// remote gives: an entry with milliseconds in the second of the remote's
// last update counts as applied (FileInfo.LastMilli 999).
//
// While the remote is down every target fails with KindRemote and backs
// off as on a local failure; nothing is removed, the spool holds it all.
// Graphs are drawn where the files are: Graph fails.

// errUnconfirmed is wrapped by an Update the remote acknowledged but whose
// rows INFO does not show (classified KindRemote: kept, backed off).
var errUnconfirmed = errors.New("the remote file does not show the rows sent")

// ForwardStats are the forward peer's state, in Stats.Forward.
type ForwardStats struct {
	Peer string `json:"peer"`
	// Up is whether the last exchange with the peer succeeded (false
	// until one did).
	Up          bool      `json:"up"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at"`
	LastOK      time.Time `json:"last_ok"`
	// Pending are the entries waiting in the local spool (Stats'
	// EntriesPending): what the peer has not confirmed yet.
	Pending   int    `json:"pending"`
	Sent      uint64 `json:"sent"`      // rows sent in UPDATEs
	Confirmed uint64 `json:"confirmed"` // rows the remote file's last update showed
	Failed    uint64 `json:"failed"`    // exchanges that failed (peer down, refused, unconfirmed)
}

// forwarder is the RRD of a forwarding writer.
type forwarder struct {
	c       *rrdcached.Client
	dir     string
	timeout time.Duration
	now     func() time.Time

	sent, confirmed, failed atomic.Uint64
	mu                      sync.Mutex
	up                      bool
	lastErr                 string
	lastErrAt, lastOK       time.Time
}

func newForwarder(o *Options) (*forwarder, error) {
	co := rrdcached.DefaultClientOptions()
	co.Timeout = o.ForwardTimeout
	c, err := rrdcached.NewClient(o.Forward, co)
	if err != nil {
		return nil, fmt.Errorf("forward: %w", err)
	}
	return &forwarder{c: c, dir: o.Dir, timeout: o.ForwardTimeout, now: o.Now}, nil
}

// remote returns the name of the local path's file on the remote.
func (f *forwarder) remote(path string) string {
	if rel, err := filepath.Rel(f.dir, path); err == nil {
		return rel
	}
	return path
}

func (f *forwarder) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), f.timeout)
}

// note records the outcome of an exchange with the peer and returns err.
func (f *forwarder) note(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if err == nil {
		f.up, f.lastOK = true, now
		return nil
	}
	f.failed.Add(1)
	f.lastErr, f.lastErrAt = err.Error(), now
	// A refusal or an unconfirmed update came from a peer that answers.
	var pe *rrdcached.PeerError
	f.up = !errors.As(err, &pe)
	return err
}

// Create sends CREATE -O with the layout's data sources and archives as
// the local create writes them.
// Root is nil: the files are the remote's, the writer opens none.
func (f *forwarder) Root() *rrd.Root { return nil }

func (f *forwarder) Create(path string, p rrd.Layout, start int64) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	ctx, cancel := f.ctx()
	defer cancel()
	args := rrdcached.CreateArgs{Step: p.Step, Begin: time.Unix(start, 0), NoOverwrite: true}
	for _, d := range p.DS {
		args.Defs = append(args.Defs, d.Def())
	}
	args.Defs = append(args.Defs, p.RRAs...)
	err := f.c.Create(ctx, f.remote(path), args)
	var re *rrdcached.RefusedError
	if errors.As(err, &re) && strings.Contains(re.Message, "exists") {
		return f.note(fmt.Errorf("create rrd %s: %w (%w)", path, fs.ErrExist, err))
	}
	return f.note(err)
}

// Info flushes the file on the remote and reads its INFO. A file the
// remote does not have gives an error wrapping fs.ErrNotExist.
func (f *forwarder) Info(path string) (rrd.FileInfo, error) {
	ctx, cancel := f.ctx()
	defer cancel()
	name := f.remote(path)
	err := notExist(f.c.Flush(ctx, name))
	var fi rrd.FileInfo
	if err == nil {
		fi, err = f.info(ctx, name)
	}
	if errors.Is(err, fs.ErrNotExist) {
		f.note(nil) // the peer answered: the writer creates the file
		return rrd.FileInfo{}, err
	}
	return fi, f.note(err)
}

func (f *forwarder) info(ctx context.Context, name string) (rrd.FileInfo, error) {
	vals, err := f.c.Info(ctx, name)
	if err != nil {
		return rrd.FileInfo{}, notExist(err)
	}
	return parseRemoteInfo(f.c.Peer(), name, vals)
}

// notExist wraps fs.ErrNotExist into a refusal that says the file is
// missing (rrdcached: "No such file", librrd's "No such file or
// directory").
func notExist(err error) error {
	if err == nil {
		return nil
	}
	var re *rrdcached.RefusedError
	if errors.As(err, &re) && strings.Contains(strings.ToLower(re.Message), "no such file") {
		return fmt.Errorf("%w (%w)", err, fs.ErrNotExist)
	}
	return err
}

// parseRemoteInfo takes INFO's last_update, step and data sources (their
// types, ordered by their index).
func parseRemoteInfo(peer, name string, vals []rrdcached.InfoValue) (rrd.FileInfo, error) {
	fi := rrd.FileInfo{LastMilli: 999}
	index := map[string]int{}
	var haveLast, haveStep bool
	for _, v := range vals {
		switch {
		case v.Key == "last_update":
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil {
				return rrd.FileInfo{}, fmt.Errorf("read info of %s from %s: last_update %q: %w", name, peer, v.Value, err)
			}
			fi.Last, haveLast = n, true
		case v.Key == "step":
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil {
				return rrd.FileInfo{}, fmt.Errorf("read info of %s from %s: step %q: %w", name, peer, v.Value, err)
			}
			fi.Step, haveStep = time.Duration(n)*time.Second, true
		case strings.HasPrefix(v.Key, "ds[") && strings.HasSuffix(v.Key, "].type"):
			ds := rrd.DSInfo{Name: v.Key[3 : len(v.Key)-len("].type")], Type: rrd.DSType(v.Value)}
			if !rrd.ValidDSName(ds.Name) || slices.ContainsFunc(fi.DS, func(d rrd.DSInfo) bool { return d.Name == ds.Name }) {
				return rrd.FileInfo{}, fmt.Errorf("read info of %s from %s: data source name %q is invalid or given twice", name, peer, ds.Name)
			}
			fi.DS = append(fi.DS, ds)
		case strings.HasPrefix(v.Key, "ds[") && strings.HasSuffix(v.Key, "].index"):
			n, err := strconv.Atoi(v.Value)
			if err != nil {
				return rrd.FileInfo{}, fmt.Errorf("read info of %s from %s: %s %q: %w", name, peer, v.Key, v.Value, err)
			}
			index[v.Key[3:len(v.Key)-len("].index")]] = n
		}
	}
	complete := haveLast && haveStep && len(fi.DS) > 0 && len(index) == len(fi.DS)
	for _, ds := range fi.DS {
		_, ok := index[ds.Name]
		complete = complete && ok
	}
	if !complete {
		return rrd.FileInfo{}, fmt.Errorf("read info of %s from %s: incomplete header (last_update, step, ds[].type and ds[].index)", name, peer)
	}
	sort.SliceStable(fi.DS, func(i, j int) bool { return index[fi.DS[i].Name] < index[fi.DS[j].Name] })
	return fi, nil
}

// Update sends one UPDATE per row and a FLUSH of the file in one BATCH,
// then reads the file's last update from INFO: it succeeds when that is the
// last row's (heldRows). Otherwise its error carries the remote's first
// refusal (a value or permission error, classified as librrd's) or wraps
// errUnconfirmed; the writer reads Info again and keeps what the file does
// not show, or quarantines what it can no longer take. The file is not
// local: opened is never given (the forwarder has no Root).
func (f *forwarder) Update(path string, template []string, rows []rrd.Sample, _ func(fd int)) error {
	if len(rows) == 0 {
		return nil
	}
	if len(template) > 0 {
		return fmt.Errorf("update rrd %s: forwarding sends rows in the file's order, without a template", path)
	}
	ctx, cancel := f.ctx()
	defer cancel()
	name := f.remote(path)
	cmds := make([]string, 0, len(rows)+1)
	var b []byte
	for _, r := range rows {
		b = rrd.AppendRow(b[:0], r)
		cmds = append(cmds, rrdcached.UpdateLine(name, string(b)))
	}
	cmds = append(cmds, rrdcached.Command{Name: "FLUSH", Args: []string{name}}.Line())
	berrs, err := f.c.Batch(ctx, cmds)
	if err != nil {
		return f.note(fmt.Errorf("update rrd %s: %w", path, err))
	}
	f.sent.Add(uint64(len(rows)))
	fi, err := f.info(ctx, name)
	if err != nil {
		return f.note(fmt.Errorf("update rrd %s: %w", path, err))
	}
	last := rows[len(rows)-1]
	n := heldRows(rows, fi.Last)
	f.confirmed.Add(uint64(n))
	if n == len(rows) {
		return f.note(nil)
	}
	if fi.Last >= last.Time {
		return f.note(fmt.Errorf("update rrd %s: %s's file has its last update at %d, after every row sent (up to %d) and none of them: %w%s",
			path, f.c.Peer(), fi.Last, last.Time, errUnconfirmed, batchErrors(berrs)))
	}
	// The first row the file lacks was refused: its error is librrd's
	// (or spoold's) reason, classified as a local one would be.
	for _, e := range berrs {
		if e.Command == n+1 && !strings.Contains(e.Message, illegalTime) {
			return f.note(fmt.Errorf("update rrd %s: %s refused row %d: %s", path, f.c.Peer(), rows[n].Time, e.Message))
		}
	}
	return f.note(fmt.Errorf("update rrd %s: %s acknowledged rows up to %d, its file's last update is %d: %w%s",
		path, f.c.Peer(), last.Time, fi.Last, errUnconfirmed, batchErrors(berrs)))
}

// heldRows returns how many of rows the remote file holds, by its last
// update (seconds: INFO has no milliseconds): the rows up to the last one
// of that second, or none when it is no row's. A last update after the rows
// that is none of them is no confirmation: another client wrote it, and
// the rows were refused (rrdcached: not after its last update) or dropped
// at its write, so the writer keeps or quarantines them.
func heldRows(rows []rrd.Sample, last int64) int {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Time == last {
			return i + 1
		}
	}
	return 0
}

// batchErrors renders the remote's refusals for an error message.
func batchErrors(berrs []rrdcached.BatchError) string {
	if len(berrs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; refused:")
	for i, e := range berrs {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(berrs)-i)
			break
		}
		fmt.Fprintf(&b, " command %d: %s", e.Command, e.Message)
	}
	return b.String()
}

// graphRefused is Writer.Graph's error: the files are on the remote.
func (f *forwarder) graphRefused(path string) error {
	return fmt.Errorf("graph rrd %s: its file is forwarded to %s; draw graphs there", path, f.c.Peer())
}

// stats returns the peer's state; pending is the writer's.
func (f *forwarder) stats(pending int) *ForwardStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &ForwardStats{
		Peer: f.c.Peer(), Up: f.up, LastError: f.lastErr, LastErrorAt: f.lastErrAt, LastOK: f.lastOK,
		Pending: pending, Sent: f.sent.Load(), Confirmed: f.confirmed.Load(), Failed: f.failed.Load(),
	}
}

func (f *forwarder) close() error { return f.c.Close() }
