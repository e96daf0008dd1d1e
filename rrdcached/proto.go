package rrdcached

import (
	"bytes"
	"errors"
	"strings"
)

// A Command is one request line split into fields as rrdcached splits it
// (buffer_get_field in rrd_daemon.c): fields are separated by one space or
// one NUL byte each (so two spaces make an empty field, and a trailing space
// an empty last field), and a backslash takes the next byte literally.
type Command struct {
	// Name is the command word as sent (rrdcached matches it without
	// regard to case, and echoes it as sent in "Can't use" errors).
	Name string
	// Args are the fields after Name.
	Args []string
	// Broken says the line ended in a lone backslash: rrdcached cannot
	// read that last field and stops at it, so it is not in Args.
	Broken bool
}

// ErrBrokenCommand is ParseCommand's error for a line whose command word
// ends in a lone backslash; rrdcached closes such a connection without a
// reply.
var ErrBrokenCommand = errors.New("parse command: the command word ends in a lone backslash")

// ParseCommand splits one line (without its "\n" or "\r\n") into a
// Command. The only error is ErrBrokenCommand.
func ParseCommand(line []byte) (Command, error) {
	fields := make([]string, 0, 1+bytes.Count(line, []byte{' '}))
	str := string(line) // one copy: the fields without escapes are parts of it
	if bytes.IndexByte(line, '\\') < 0 && bytes.IndexByte(line, 0) < 0 {
		// No escapes, no NULs (every client's UPDATE): the fields are
		// what lies between the spaces.
		for {
			i := strings.IndexByte(str, ' ')
			if i < 0 {
				break
			}
			fields, str = append(fields, str[:i]), str[i+1:]
		}
		fields = append(fields, str)
		return Command{Name: fields[0], Args: fields[1:]}, nil
	}
	var field []byte // a field with escapes, built byte by byte
	start, escaped, broken := 0, false, false
	for i := 0; i < len(line); i++ {
		switch b := line[i]; b {
		case ' ', 0:
			if escaped {
				fields = append(fields, string(field))
			} else {
				fields = append(fields, str[start:i])
			}
			start, escaped = i+1, false
		case '\\':
			if i == len(line)-1 {
				broken = true
				continue
			}
			if !escaped {
				field, escaped = append(field[:0], line[start:i]...), true
			}
			i++
			field = append(field, line[i])
		default:
			if escaped {
				field = append(field, b)
			}
		}
	}
	switch {
	case broken:
	case escaped:
		fields = append(fields, string(field))
	default:
		fields = append(fields, str[start:])
	}
	if len(fields) == 0 {
		return Command{}, ErrBrokenCommand
	}
	return Command{Name: fields[0], Args: fields[1:], Broken: broken}, nil
}

// Line serialises c so that ParseCommand gives c back: separators and
// backslashes inside a field are escaped, a Broken command ends in a lone
// backslash field. It has no line end.
func (c Command) Line() string {
	var b strings.Builder
	writeField(&b, c.Name)
	for _, a := range c.Args {
		b.WriteByte(' ')
		writeField(&b, a)
	}
	if c.Broken {
		b.WriteString(` \`)
	}
	return b.String()
}

func writeField(b *strings.Builder, f string) {
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case ' ', 0, '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(f[i])
	}
}

// where says where rrdcached accepts a command (CMD_CONTEXT_*).
type where uint8

const (
	inClient  where = 1 << iota // on a connection, outside BATCH
	inBatch                     // inside BATCH
	inJournal                   // only while replaying a journal
	anywhere  = inClient | inBatch | inJournal
)

// commandSpec is one entry of rrdcached's command table: its name, where it
// is accepted, and its HELP texts ("" for a command HELP does not show).
type commandSpec struct {
	name   string
	where  where
	syntax string
	help   string
}

// commands is rrdcached's command table in its order (HELP lists the
// syntax lines in this order). The texts are what rrdcached 1.7 sends.
var commands = []commandSpec{
	{"UPDATE", anywhere, "UPDATE <filename> <values> [<values> ...]\n",
		"Adds the given file to the internal cache if it is not yet known and\n" +
			"appends the given value(s) to the entry. See the rrdcached(1) manpage\n" +
			"for details.\n\n" +
			"Each <values> has the following form:\n" +
			"  <values> = <time>:<value>[:<value>[...]]\n" +
			"See the rrdupdate(1) manpage for details.\n"},
	{"WROTE", inJournal, "", ""},
	{"FLUSH", inClient | inBatch, "FLUSH <filename>\n",
		"Adds the given filename to the head of the update queue and returns\n" +
			"after it has been dequeued.\n"},
	{"FLUSHALL", inClient, "FLUSHALL\n",
		"Triggers writing of all pending updates.  Returns immediately.\n"},
	{"PENDING", inClient, "PENDING <filename>\n",
		"Shows any 'pending' updates for a file, in order.\n" +
			"The updates shown have not yet been written to the underlying RRD file.\n"},
	{"FORGET", anywhere, "FORGET <filename>\n",
		"Removes the file completely from the cache.\n" +
			"Any pending updates for the file will be lost.\n"},
	{"QUEUE", inClient, "QUEUE\n",
		"Shows all files in the output queue.\n" +
			"The output is zero or more lines in the following format:\n" +
			"(where <num_vals> is the number of values to be written)\n\n" +
			"<num_vals> <filename>\n"},
	{"STATS", inClient, "STATS\n",
		"Returns some performance counters, see the rrdcached(1) manpage for\n" +
			"a description of the values.\n"},
	{"HELP", inClient, "HELP [<command>]\n", ""},
	{"PING", inClient, "PING\n", "PING given, PONG returned\n"},
	{"BATCH", inClient, "BATCH\n",
		"The 'BATCH' command permits the client to initiate a bulk load\n" +
			"   of commands to rrdcached.\n\n" +
			"Usage:\n\n" +
			"    client: BATCH\n" +
			"    server: 0 Go ahead.  End with dot '.' on its own line.\n" +
			"    client: command #1\n" +
			"    client: command #2\n" +
			"    client: ... and so on\n" +
			"    client: .\n" +
			"    server: 2 errors\n" +
			"    server: 7 message for command #7\n" +
			"    server: 9 message for command #9\n\n" +
			"For more information, consult the rrdcached(1) documentation.\n"},
	{".", inBatch, "", ""},
	{"FETCH", inClient, "FETCH <file> <CF> [<start> [<end>] [<column>...]]\n",
		"The 'FETCH' can be used by the client to retrieve values from an RRD file.\n"},
	{"FETCHBIN", inClient, "FETCHBIN <file> <CF> [<start> [<end>] [<column>...]]\n",
		"The 'FETCHBIN' can be used by the client to retrieve values from an RRD file.\n"},
	{"INFO", inClient, "INFO <filename>\n",
		"The INFO command retrieves information about a specified RRD file.\n" +
			"This is returned in standard rrdinfo format, a sequence of lines\n" +
			"with the format <keyname> = <value>\n" +
			"Note that this is the data as of the last update of the RRD file itself,\n" +
			"not the last time data was received via rrdcached, so there may be pending\n" +
			"updates in the queue.  If this bothers you, then first run a FLUSH.\n"},
	{"FIRST", inClient, "FIRST <filename> <rra index>\n",
		"The FIRST command retrieves the first data time for a specified RRA in\n" +
			"an RRD file.\n"},
	{"LAST", inClient, "LAST <filename>\n",
		"The LAST command retrieves the last update time for a specified RRD file.\n" +
			"Note that this is the time of the last update of the RRD file itself, not\n" +
			"the last time data was received via rrdcached, so there may be pending\n" +
			"updates in the queue.  If this bothers you, then first run a FLUSH.\n"},
	{"CREATE", inClient | inBatch, "CREATE <filename> [-b start] [-s step] [-O] <DS definitions> <RRA definitions>\n",
		"The CREATE command will create an RRD file, overwriting any existing file\n" +
			"unless the -O option is given or rrdcached was started with the -O option.\n" +
			"The start parameter needs to be in seconds since 1/1/70 (AT-style syntax is\n" +
			"not acceptable) and the step is in seconds (default is 300).\n" +
			"The DS and RRA definitions are as for the 'rrdtool create' command.\n"},
	{"LIST", inClient, "LIST [RECURSIVE] /[<path>]\n",
		"This command lists the RRD files in the storage base directory (/).\n" +
			"Note that this is the list of RRD files on storage as of the last update.\n" +
			"There may be pending updates in the queue, so a FLUSH may have to be run\n" +
			"beforehand.\n" +
			"When invoked with 'LIST RECURSIVE /<path>' it will behave similarly to\n" +
			"'ls -R' but limited to rrd files (listing all the rrd bases in the subtree\n" +
			" of <path>, skipping empty directories).\n"},
	{"SUSPEND", inClient | inBatch, "SUSPEND <filename>\n",
		"The SUSPEND command will suspend writing to an RRD file. While a file is\n" +
			"suspended, all metrics for it are cached in memory until RESUME is called\n" +
			"for that file or RESUMEALL is called.\n"},
	{"RESUME", inClient | inBatch, "RESUME <filename>\n",
		"The RESUME command will resume writing to an RRD file previously suspended\n" +
			"by SUSPEND or SUSPENDALL.\n"},
	{"SUSPENDALL", inClient | inBatch, "SUSPENDALL\n",
		"The SUSPENDALL command will suspend writing to all RRD files. While a file\n" +
			"is suspended, all metrics for it are cached in memory until RESUME is called\n" +
			"for that file or RESUMEALL is called.\n"},
	{"RESUMEALL", inClient | inBatch, "RESUMEALL\n",
		"The RESUMEALL command will resume writing to all RRD files previously suspended.\n"},
	{"QUIT", inClient | inBatch, "QUIT\n", "Disconnect from rrdcached.\n"},
}

// lookupCommand finds a command word as rrdcached does (strcasecmp: ASCII
// letters only, unlike strings.EqualFold).
func lookupCommand(word string) *commandSpec {
	for i := range commands {
		if asciiEqualFold(commands[i].name, word) {
			return &commands[i]
		}
	}
	return nil
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if asciiLower(a[i]) != asciiLower(b[i]) {
			return false
		}
	}
	return true
}

func asciiLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// CommandNames returns rrdcached's command words, in its table's order.
func CommandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}
