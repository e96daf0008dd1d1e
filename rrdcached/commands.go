package rrdcached

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// run carries out one command allowed here; false ends the connection.
// Each handler answers as rrdcached's handle_request_<name> does.
func (c *conn) run(spec *commandSpec, args []string) (Reply, bool) {
	switch spec.name {
	case "QUIT":
		return Reply{}, false
	case "BATCH":
		return c.startBatch(), true
	case ".":
		return c.endBatch(), true
	case "HELP":
		return help(args), true
	case "PING":
		return Reply{Message: "PONG"}, true
	}
	h := handlers[spec.name]
	if h == nil { // WROTE: journal only, refused by its context already
		return syntaxError(spec), true
	}
	return h(c, spec, args), true
}

type handler func(c *conn, spec *commandSpec, args []string) Reply

// handlers are the commands that ask the Backend, by name.
var handlers = map[string]handler{
	"UPDATE": (*conn).doUpdate, "FLUSH": (*conn).doFlush, "FLUSHALL": (*conn).doFlushAll,
	"PENDING": (*conn).doPending, "FORGET": (*conn).doForget, "QUEUE": (*conn).doQueue,
	"STATS": (*conn).doStats, "FETCH": (*conn).doFetch, "FETCHBIN": (*conn).doFetchBin,
	"INFO": (*conn).doInfo, "FIRST": (*conn).doFirst, "LAST": (*conn).doLast,
	"CREATE": (*conn).doCreate, "LIST": (*conn).doList,
	"SUSPEND": (*conn).doSuspend, "RESUME": (*conn).doResume,
	"SUSPENDALL": (*conn).doSuspendAll, "RESUMEALL": (*conn).doResumeAll,
}

func syntaxError(spec *commandSpec) Reply {
	if spec.syntax == "" {
		return errorf("Usage: Syntax error.")
	}
	return errorf("Usage: %s", strings.TrimSuffix(spec.syntax, "\n"))
}

// ok is a success reply with data lines: rrdcached's status is their count.
func ok(msg string, lines []string) Reply {
	return Reply{Status: len(lines), Message: msg, Lines: lines}
}

// file resolves the first argument; the Reply is the error to send when
// ok is false.
func (c *conn) file(spec *commandSpec, args []string) (rel, abs string, rep Reply, good bool) {
	if len(args) == 0 {
		return "", "", syntaxError(spec), false
	}
	abs = c.s.res.Abs(args[0])
	rel, err := c.s.res.Resolve(args[0])
	if err != nil {
		c.refusedName(err)
		return "", abs, errorf("%s: Permission denied", abs), false
	}
	return rel, abs, Reply{}, true
}

func (c *conn) refusedName(err error) {
	c.s.refused(RefusePath, c.l.spec, c.peer, err.Error())
}

// message is the text of a Backend error: a ReplyError's as is, others as
// rrdcached words librrd's ("RRD Error: ..."); prefix replaces "RRD Error: ".
// Line ends in other errors become spaces: an error reply is one line.
func message(err error, abs, prefix string) string {
	var re *ReplyError
	switch {
	case errors.As(err, &re):
		return re.Msg
	case errors.Is(err, ErrNoSuchFile):
		return prefix + "opening '" + abs + "': No such file or directory"
	}
	return prefix + strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(err.Error())
}

// rrdError is the reply for a Backend error, as rrdcached words librrd's.
func rrdError(err error, abs string) Reply {
	return errorf("%s", message(err, abs, "RRD Error: "))
}

func (c *conn) doUpdate(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	n, err := c.s.backend.Update(c.s.ctx, rel, args[1:])
	return updateReply(n, err, abs)
}

// updateReply is UPDATE's reply for n values accepted and err.
func updateReply(n int, err error, abs string) Reply {
	switch {
	case errors.Is(err, ErrNoSuchFile):
		return errorf("No such file: %s", abs)
	case err != nil:
		return rrdError(err, abs)
	case n < 1:
		return errorf("No values updated.")
	}
	return Reply{Message: fmt.Sprintf("errors, enqueued %d value(s).", n)}
}

func (c *conn) doFlush(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	flushed, err := c.s.backend.Flush(c.s.ctx, rel)
	switch {
	case errors.Is(err, ErrNoSuchFile):
		return errorf("No such file: %s.", abs)
	case err != nil:
		return errorf("%s", message(err, abs, "Flush failed: "))
	case !flushed:
		return Reply{Message: fmt.Sprintf("Nothing to flush: %s.", abs)}
	}
	return Reply{Message: fmt.Sprintf("Successfully flushed %s.", abs)}
}

func (c *conn) doFlushAll(_ *commandSpec, _ []string) Reply {
	if err := c.s.backend.FlushAll(c.s.ctx); err != nil {
		return errorf("%s", message(err, "", "Flush failed: "))
	}
	return Reply{Message: "Started flush."}
}

func (c *conn) doPending(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	lines, err := c.s.backend.Pending(c.s.ctx, rel)
	if err != nil && !errors.Is(err, ErrNoSuchFile) {
		return rrdError(err, abs)
	}
	return ok("updates pending", lines)
}

// doForget is FORGET: spoold keeps what is spooled and says so.
func (c *conn) doForget(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	kept, err := c.s.backend.Forget(c.s.ctx, rel)
	switch {
	case errors.Is(err, ErrNotCached), errors.Is(err, ErrNoSuchFile):
		return errorf("No such file or directory")
	case err != nil:
		return rrdError(err, abs)
	case kept > 0:
		return Reply{Message: fmt.Sprintf("Gone! (%d acknowledged update(s) kept: spoold still writes them)", kept)}
	}
	return Reply{Message: "Gone!"}
}

func (c *conn) doQueue(_ *commandSpec, _ []string) Reply {
	q, err := c.s.backend.Queue(c.s.ctx)
	if err != nil {
		return rrdError(err, "")
	}
	lines := make([]string, len(q))
	for i, e := range q {
		lines[i] = strconv.Itoa(e.Pending) + " " + c.s.res.Abs(e.File)
	}
	return ok("in queue.", lines)
}

func (c *conn) doStats(_ *commandSpec, _ []string) Reply {
	st := c.s.backend.Stats()
	lines := make([]string, len(st))
	for i, e := range st {
		lines[i] = e.Name + ": " + strconv.FormatUint(e.Value, 10)
	}
	return ok("Statistics follow", lines)
}

func (c *conn) doInfo(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	vals, err := c.s.backend.Info(c.s.ctx, rel)
	if err != nil {
		return rrdError(err, abs)
	}
	lines := make([]string, len(vals))
	for i, v := range vals {
		lines[i] = v.Key + " " + strconv.Itoa(v.Type) + " " + v.Value
	}
	return ok("Info for "+abs+" follows", lines)
}

func (c *conn) doFirst(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	if len(args) < 2 {
		return syntaxError(spec)
	}
	idx := cAtoi(args[1])
	if idx < 0 {
		return errorf("Invalid index specified (%d)", idx)
	}
	t, err := c.s.backend.First(c.s.ctx, rel, idx)
	if err != nil {
		return rrdError(err, abs)
	}
	if t.Unix() < 1 {
		return errorf("RRD Error: no first time in %s", abs)
	}
	return Reply{Message: strconv.FormatInt(t.Unix(), 10)}
}

func (c *conn) doLast(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	t, err := c.s.backend.Last(c.s.ctx, rel)
	if err != nil {
		return rrdError(err, abs)
	}
	if t.Unix() < 1 {
		return errorf("Error: rrdcached: Invalid timestamp returned")
	}
	return Reply{Message: strconv.FormatInt(t.Unix(), 10)}
}

// minCreateBegin is rrdcached's floor for CREATE -b ("after 1980": ten
// years of 365 days).
const minCreateBegin = 3600 * 24 * 365 * 10

func (c *conn) doCreate(spec *commandSpec, args []string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	var ca CreateArgs
	begin := int64(-1)
	// rrdcached matches options by prefix ("-bx" is -b) and takes the
	// next field as the value.
	for i := 1; i < len(args); i++ {
		tok := args[i]
		switch {
		case strings.HasPrefix(tok, "-b"), strings.HasPrefix(tok, "-s"), strings.HasPrefix(tok, "-r"), strings.HasPrefix(tok, "-t"):
			if i+1 >= len(args) {
				return syntaxError(spec)
			}
			i++
			val := args[i]
			switch tok[:2] {
			case "-b":
				begin = cAtol(val)
			case "-s":
				ca.Step = time.Duration(cAtol(val)) * time.Second
			default:
				src, err := c.s.res.Resolve(val)
				if err != nil {
					c.refusedName(err)
					return errorf("%s: Permission denied", c.s.res.Abs(val))
				}
				if tok[:2] == "-r" {
					ca.Sources = append(ca.Sources, src)
				} else {
					ca.Template = src
				}
			}
		case strings.HasPrefix(tok, "-O"):
			ca.NoOverwrite = true
		case strings.HasPrefix(tok, "DS:"), strings.HasPrefix(tok, "RRA:"):
			ca.Defs = append(ca.Defs, tok)
		default:
			return syntaxError(spec)
		}
	}
	if begin != -1 {
		if begin < minCreateBegin {
			return errorf("The first entry must be after 1980.")
		}
		ca.Begin = time.Unix(begin, 0)
	}
	if err := c.s.backend.Create(c.s.ctx, rel, ca); err != nil {
		return rrdError(err, abs)
	}
	return Reply{Message: "RRD created OK"}
}

func (c *conn) doList(spec *commandSpec, args []string) Reply {
	// LIST [RECURSIVE] /[<path>]: the first field is the path when it
	// starts with "/", else it must be RECURSIVE (case matters there).
	recursive := false
	if len(args) > 0 && !strings.HasPrefix(args[0], "/") {
		if args[0] != "RECURSIVE" {
			return syntaxError(spec)
		}
		recursive, args = true, args[1:]
	}
	if len(args) == 0 {
		return syntaxError(spec)
	}
	name := args[0]
	full := c.s.res.Dir() + "/" + strings.TrimPrefix(name, "/")
	if strings.ContainsAny(name, "*?") {
		return errorf("List %s: Operation not supported", full)
	}
	rel, err := c.s.res.ResolveDir(strings.TrimLeft(name, "/"))
	if err != nil {
		c.refusedName(err)
		return errorf("Cannot read: %s", full)
	}
	names, err := c.s.backend.List(c.s.ctx, rel, recursive)
	if err != nil {
		return errorf("List %s: %s", full, errnoText(err))
	}
	return ok("RRDs", names)
}

func (c *conn) doSuspend(spec *commandSpec, args []string) Reply {
	return c.suspendResume(spec, args, c.s.backend.Suspend, "suspended", "already suspended")
}

func (c *conn) doResume(spec *commandSpec, args []string) Reply {
	return c.suspendResume(spec, args, c.s.backend.Resume, "resumed", "not suspended")
}

// suspendResume is SUSPEND and RESUME. For a file not in the cache
// rrdcached also closes the connection (its handler returns -1); spoold
// answers the same error and keeps the connection.
func (c *conn) suspendResume(spec *commandSpec, args []string, do func(string) (bool, error), changed, same string) Reply {
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return rep
	}
	ch, err := do(rel)
	switch {
	case errors.Is(err, ErrNotCached), errors.Is(err, ErrNoSuchFile):
		return errorf("%s - No such file or directory", abs)
	case err != nil:
		return rrdError(err, abs)
	case ch:
		return Reply{Message: abs + " " + changed}
	}
	return Reply{Message: abs + " " + same}
}

func (c *conn) doSuspendAll(_ *commandSpec, _ []string) Reply {
	return Reply{Message: fmt.Sprintf("%d rrds suspend", c.s.backend.SuspendAll())}
}

func (c *conn) doResumeAll(_ *commandSpec, _ []string) Reply {
	return Reply{Message: fmt.Sprintf("%d rrds resumed", c.s.backend.ResumeAll())}
}

// help is HELP [<command>].
func help(args []string) Reply {
	if len(args) > 0 {
		if spec := lookupCommand(args[0]); spec != nil && (spec.syntax != "" || spec.help != "") {
			var text string
			if spec.syntax != "" {
				text += "Usage: " + spec.syntax + "\n"
			}
			if spec.help != "" {
				text += spec.help + "\n"
			}
			return ok("Help for "+spec.name, strings.Split(strings.TrimSuffix(text, "\n"), "\n"))
		}
	}
	var lines []string
	for _, spec := range commands {
		if spec.syntax != "" {
			lines = append(lines, strings.TrimSuffix(spec.syntax, "\n"))
		}
	}
	return ok("Command overview", lines)
}

// errnoText is the C library's text of the errno err wraps (Go's own texts
// are lower case), or err's text.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		t := errno.Error()
		if t != "" && 'a' <= t[0] && t[0] <= 'z' {
			t = string(t[0]-'a'+'A') + t[1:]
		}
		return t
	}
	return err.Error()
}
