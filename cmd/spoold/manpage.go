package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
)

// runManpage is the hidden `spoold manpage`: the spoold(8) manual page in
// roff (man(7)) on stdout, for `make man` and `make install`. Its OPTIONS
// are the flag sets `spoold --help` prints (daemonFlags), each flag's
// line as pflag renders it for --help; its COMMANDS are the table
// 'spoold help' prints; its FILES the defaults. So the page cannot drift
// from the program.
func runManpage(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("spoold manpage", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	if code, ok := parseCommandFlags(fs, args, stderr); !ok {
		return code
	}
	if _, err := io.WriteString(stdout, manpage()); err != nil {
		fmt.Fprintln(stderr, "spoold manpage:", fmt.Errorf("write the page: %w", err))
		return exitError
	}
	return exitOK
}

// manpage renders spoold(8). Prose that is not derived from the program
// says where the rest is documented rather than repeating it.
func manpage() string {
	cfg := defaultConfig()
	_, groups := daemonFlags(&cfg)
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line(`.TH SPOOLD 8 "" "spoold %s" "System Manager's Manual"`, roff(versionString()))
	line(".nh\n.ad l") // no hyphenation, no justification: options stay whole
	line(".SH NAME")
	line(`spoold \- SNMP poller with a durable spool and batched RRD writes`)
	line(".SH SYNOPSIS")
	line(".B spoold\n.RI [ flags ]\n.br\n.B spoold\n.I command\n.RI [ flags ]")
	line(".SH DESCRIPTION")
	line(roff("spoold polls network devices over SNMP, keeps every poll result durably in a hashed spool directory, " +
		"indexes the spool in memory with an nginx-style throttled loader, and writes the values into RRD files in batches, " +
		"one update per file with all its pending values. It draws graphs from the RRD files on demand and serves " +
		"its status, Prometheus metrics and a web page on an admin HTTP address."))
	line(".PP")
	line(roff("Every setting is a flag. The targets file is described in configuration.md, profiles in profiles.md, " +
		"operations in operations.md, the rrdcached drop-in in rrdcached.md and many machines in many-machines.md " +
		"(all in the package's documentation directory)."))
	line(".SH OPTIONS")
	for _, g := range groups {
		line(".SS %s", roff(g.title))
		g.fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			term, text := flagHelp(f)
			line(".TP\n%s\n%s", term, roff(text))
		})
	}
	line(".SH COMMANDS")
	for _, c := range commands {
		line(".TP\n.B %s\n%s", roff(c.name), roff(c.help))
	}
	line(".PP\n%s", roff("'spoold <command> --help' prints the flags of a command."))
	manpageSignals(line)
	line(".SH FILES")
	for _, f := range []struct{ path, what string }{
		{cfg.targetsFile, "the targets file (--targets)"},
		{"/etc/spoold/profiles.conf", "the profiles file the systemd unit passes (--profiles; empty by default: built-in profiles only)"},
		{cfg.spool.Dir, "the spool (--spool-dir): poll results waiting for their RRD files"},
		{cfg.writer.Dir, "the RRD files (--rrd-dir)"},
	} {
		line(".TP\n.I %s\n%s", roff(f.path), roff(f.what))
	}
	line(".SH EXIT STATUS")
	line("%d on success, %d on an error, %d on a bad flag or argument.", exitOK, exitError, exitUsage)
	line(".SH SEE ALSO")
	line(".BR rrdtool (1),\n.BR rrdcached (1),\n.BR systemd.service (5)")
	return b.String()
}

func manpageSignals(line func(string, ...any)) {
	line(".SH SIGNALS")
	for _, s := range []struct{ sig, what string }{
		{"SIGTERM, SIGINT", "stop polling, stop the loader, flush pending values within --shutdown-timeout, exit 0; the rest stays in the spool"},
		{"SIGHUP", "reload targets and profiles; a bad file keeps the running ones; nothing pending is lost"},
		{"SIGUSR1", "flush everything pending now"},
	} {
		line(".TP\n.B %s\n%s", s.sig, roff(s.what))
	}
	line(".PP\n%s", roff("Under systemd (Type=notify) spoold sends READY=1 once it runs, STOPPING=1 when it stops, "+
		"and WATCHDOG=1 while its loops are alive."))
}

// flagHelp returns a flag's term and text in roff, from the very line
// pflag writes for --help ("  -t, --test   check ... (default x)").
func flagHelp(f *pflag.Flag) (term, text string) {
	one := pflag.NewFlagSet("", pflag.ContinueOnError)
	one.AddFlag(f)
	help := strings.TrimSpace(one.FlagUsagesWrapped(0))
	_, usage := pflag.UnquoteUsage(f)
	head, suffix, _ := strings.Cut(help, usage)
	var parts []string
	head = strings.ReplaceAll(strings.ReplaceAll(head, ",", ""), "[=true|false]", "")
	for _, w := range strings.Fields(head) {
		if strings.HasPrefix(w, "-") {
			parts = append(parts, `\fB`+strings.ReplaceAll(w, "-", `\-`)+`\fR`)
		} else {
			parts = append(parts, `\fI`+roff(w)+`\fR`)
		}
	}
	return strings.Replace(strings.Join(parts, " "), `\fR \fB`, `\fR, \fB`, 1), usage + suffix
}

// option is an option in text ("-t", "--poll-interval"), after the
// start or a space, quote, parenthesis or slash.
var option = regexp.MustCompile(`(^|[\s"'(\x60/])-{1,2}[A-Za-z0-9][A-Za-z0-9-]*`)

// roff escapes text for one line of man(7): backslashes; every dash of an
// option, which must be \- (the ASCII minus an operator types; a plain '-'
// is a hyphen, rendered as U+2010 and not what a shell takes); and a
// leading dot or quote (a control line).
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "\n", " ")
	s = option.ReplaceAllStringFunc(s, func(m string) string { return strings.ReplaceAll(m, "-", `\-`) })
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
