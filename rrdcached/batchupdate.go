package rrdcached

// BATCH's UPDATEs of one file. Inside a BATCH, consecutive UPDATEs of the
// same file (as rrdtool and collectd send them: a file's values one
// UPDATE each) are handed to the Backend in one Update call, so that it
// can check the file once and append them together; each command's
// outcome is still its own, as if it ran alone: its error line carries its
// own number, and a refused value ends only its own command (the next
// command's values are tried again). The commands are carried out, in
// order, before any other command runs, before the server waits for the
// client's next line, when the file changes, at maxUpdateRun values, and
// when the connection ends: what the server received it always carries
// out, and a BATCH's answer only comes at ".", after them all.

// maxUpdateRun bounds the values of one run handed to the Backend.
const maxUpdateRun = 1024

// updateRun is the UPDATEs of one file waiting to be carried out.
type updateRun struct {
	name     string // the file's name as the client sent it
	rel, abs string
	values   []string // every command's values, in order
	cmds     []runCmd
}

// runCmd is one UPDATE of a run: its number in the BATCH and where its
// values end in updateRun.values.
type runCmd struct {
	n, end int
}

// queueUpdate adds a BATCH's UPDATE to the run, carrying out the run
// first when the command is of another file or the run is full. It
// returns false when the connection is to end.
func (c *conn) queueUpdate(spec *commandSpec, args []string) bool {
	r := &c.updates
	// A command of the run's file is not resolved again: the name is
	// checked once per run, and the Backend checks the file it writes at
	// each Update (a file swapped under the name is caught there).
	if len(r.cmds) == 0 || len(args) == 0 || args[0] != r.name || len(r.values)+len(args)-1 > maxUpdateRun {
		rel, abs, rep, good := c.file(spec, args)
		if !good {
			if !c.runUpdates() {
				return false
			}
			c.s.m.command(spec.name, false)
			return c.collect(rep, c.batchN)
		}
		if len(r.cmds) > 0 && (r.rel != rel || len(r.values)+len(args)-1 > maxUpdateRun) {
			if !c.runUpdates() {
				return false
			}
		}
		if len(r.cmds) == 0 {
			r.name, r.rel, r.abs = args[0], rel, abs
		}
	}
	r.values = append(r.values, args[1:]...)
	r.cmds = append(r.cmds, runCmd{n: c.batchN, end: len(r.values)})
	return true
}

// runUpdates carries out the queued UPDATEs and keeps their errors for
// the BATCH's answer; false ends the connection.
func (c *conn) runUpdates() bool {
	r := &c.updates
	ok := true
	for i := 0; i < len(r.cmds) && ok; {
		from := 0
		if i > 0 {
			from = r.cmds[i-1].end
		}
		if from == r.cmds[i].end { // no values: as UPDATE alone answers it
			ok = c.updateDone(updateReply(0, nil, r.abs), r.cmds[i].n)
			i++
			continue
		}
		n, err := c.s.backend.Update(c.s.ctx, r.rel, r.values[from:r.cmds[len(r.cmds)-1].end])
		// The commands whose values were all accepted succeeded; the
		// one holding the refused value gets the refusal.
		for ; i < len(r.cmds) && r.cmds[i].end <= from+n && ok; i++ {
			rep := Reply{}
			if i > 0 && r.cmds[i].end == r.cmds[i-1].end {
				rep = updateReply(0, nil, r.abs) // a command of no values
			}
			ok = c.updateDone(rep, r.cmds[i].n)
		}
		if err == nil || i == len(r.cmds) || !ok {
			continue
		}
		start := from
		if i > 0 {
			start = r.cmds[i-1].end
		}
		ok = c.updateDone(updateReply(from+n-start, err, r.abs), r.cmds[i].n)
		i++
	}
	clear(r.values)
	r.values, r.cmds = r.values[:0], r.cmds[:0]
	return ok
}

// updateDone counts one UPDATE of a run and keeps its error.
func (c *conn) updateDone(rep Reply, n int) bool {
	c.s.m.command("UPDATE", rep.OK())
	return c.collect(rep, n)
}
