// Command spoold is the spoold daemon and its operator sub-commands.
//
//	spoold [flags]          the daemon (spoold --help lists every flag)
//	spoold load [flags]     walk a spool as the loader would (a dry run for tuning)
//	spoold doctor [flags]   check the machine: read-ahead, mount options, space, a cold RRD update
//	spoold demo [flags]     a simulated fleet on 127.0.0.1, polled by a daemon, with its admin page
//	spoold rrdcached [opts] the daemon from rrdcached's command line, serving its protocol only
//	spoold simulate [flags] serve a simulated SNMP fleet on 127.0.0.1
//	spoold walk [flags] T   what discovery finds in target T's tables (writes nothing)
//	spoold version          print the version
//
// main owns flag parsing (pflag) and turns flags into each package's
// Options; no package below reads flags or globals.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// version is set with -ldflags "-X main.version=..."; otherwise the module
// version from the build info is used.
var version = ""

func main() {
	os.Exit(run(commandLine(os.Args), os.Stdout, os.Stderr))
}

// commandLine is the command line run takes from a process's argv: its
// arguments, after "rrdcached" when the program was started by that name
// (a link named rrdcached, for scripts that start rrdcached by its path
// and find it by its process name, as Debian's init script does).
func commandLine(argv []string) []string {
	if len(argv) > 0 && filepath.Base(argv[0]) == "rrdcached" {
		return append([]string{"rrdcached"}, argv[1:]...)
	}
	return argv[1:]
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || len(args[0]) > 0 && args[0][0] == '-' && args[0] != "-h" && args[0] != "--help" && args[0] != "-v" && args[0] != "--version" {
		return runDaemon(args, stdout, stderr)
	}
	switch args[0] {
	case "load":
		return runLoad(args[1:], stdout, stderr)
	case "doctor":
		return runDoctor(args[1:], stdout, stderr)
	case "demo":
		return runDemo(args[1:], stdout, stderr)
	case "rrdcached":
		return runRRDcached(args[1:], stdout, stderr)
	case "simulate":
		return runSimulate(args[1:], stdout, stderr)
	case "walk":
		return runWalk(args[1:], stdout, stderr)
	case "manpage": // hidden: spoold(8) for make man and make install
		return runManpage(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "spoold", versionString())
		return exitOK
	case "help", "-h", "--help":
		usage(stdout)
		cfg := defaultConfig()
		_, groups := daemonFlags(&cfg)
		printDaemonUsage(stdout, groups)
		return exitOK
	}
	fmt.Fprintf(stderr, "spoold: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

// commands are the sub-commands, for 'spoold help' and spoold(8).
var commands = []struct{ name, help string }{
	{"doctor", "check read-ahead, mount options, space, limits, loader time and the cost of one RRD update"},
	{"demo", "run spoold against a simulated fleet on 127.0.0.1 with its admin page"},
	{"load", "walk a spool directory as the start-up loader does and print a JSON summary; changes nothing on disk (a dry run for tuning --loader-files, --loader-sleep, --loader-threshold, --loader-cpu)"},
	{"rrdcached", "run the daemon from rrdcached's command line (rrdcached(1) options; spoold's own flags after --): -j is the spool, -b the RRD directory, no targets file; without -g it detaches, as rrdcached does, once it serves"},
	{"simulate", "serve a simulated SNMP fleet on 127.0.0.1 (for demos, tests, benchmarks)"},
	{"version", "print the version"},
	{"walk", "discover the tables of one target of the targets file with the daemon's files and flags, and print how many rows answered each column walked, the rows, instance names, keys, RRD files, chosen column alternatives and filtered-out rows; writes nothing"},
}

func usage(w io.Writer) {
	fmt.Fprint(w, "usage: spoold <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, wrap(c.help, 68, "            "))
	}
	fmt.Fprint(w, "\nRun 'spoold <command> --help' for the flags of a command.\n")
}

// wrap breaks s into lines of at most width bytes (a longer word stays
// whole), joined by a newline and indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(word) > width:
			b.WriteString("\n" + indent)
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
