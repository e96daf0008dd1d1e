package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/rrdcached"
)

// `spoold rrdcached [rrdcached's options] [-- spoold's flags]` takes the
// command line of rrdcached 1.7 (rrdcached(1)) and runs the daemon with
// the spoold flags each option means: the journal directory (-j) is the
// spool, the base directory (-b) the RRD directory, and no targets file is
// read. An option spoold cannot honour is refused, naming what to use.
// Without -g it detaches as rrdcached does (detach.go).

// rrdcachedDefaults are rrdcached's defaults for the knobs spoold shares
// with it, given before the options so that the options override them.
var rrdcachedDefaults = []string{
	"--targets", "",
	"--write-delay", "300s", // -w 300
	"--write-jitter", "0s", // -z 0
	"--writers", "4", // -t 4
	"--rrd-dir", "/tmp", // -b /tmp
}

// rrdcachedDefaultListen is where rrdcached listens without -l.
const rrdcachedDefaultListen = "unix:/tmp/rrdcached.sock"

// rrdcachedValued are the options that take a value.
const rrdcachedValued = "lsmPwzfptjbaGUVo"

// rrdcachedRefused are the options spoold cannot honour and what to use
// instead.
var rrdcachedRefused = map[byte]string{
	'G': "spoold does not change its group; start it as that group (systemd Group=, or the package's unit)",
	'U': "spoold does not change its user; start it as that user (systemd User=, or the package's unit)",
	'O': "spoold's CREATE overwrites only files without pending updates; clients that must never overwrite pass -O to CREATE",
}

func runRRDcached(args []string, stdout, stderr io.Writer) int {
	line, err := rrdcachedFlags(args)
	if err != nil {
		fmt.Fprintln(stderr, "spoold rrdcached:", err)
		return exitUsage
	}
	if !daemonServes(line.flags) { // --help, --version, --test or a bad flag: runDaemon says which
		return runDaemon(line.flags, stdout, stderr)
	}
	if !line.foreground && !detachedDaemon() {
		return detach(args, line.logFile, stderr)
	}
	log, closeLog := stderr, func() {}
	switch {
	case detachedDaemon():
		becomeDetached()
		log, closeLog, err = detachedLog(line.logFile, stderr)
	case line.logFile != "":
		var f *os.File
		f, err = openLogFile(line.logFile)
		log, closeLog = f, func() { f.Close() }
	}
	if err != nil {
		fmt.Fprintln(stderr, "spoold rrdcached:", err)
		return exitError
	}
	defer closeLog()
	return runDaemon(line.flags, stdout, log)
}

// daemonServes reports whether the daemon's flags start it serving: they
// parse and check as runDaemon parses and checks them, and ask for no
// --help, --version or --test.
func daemonServes(flags []string) bool {
	cfg := defaultConfig()
	fs, _ := daemonFlags(&cfg)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if fs.Parse(flags) != nil || cfg.showVersion || cfg.checkOnly || fs.NArg() > 0 {
		return false
	}
	cfg.protocolOnly(fs.Changed("targets"))
	return cfg.check() == nil
}

// rrdcachedLine is an rrdcached command line translated: the daemon's
// flags, and the two options `spoold rrdcached` honours itself.
type rrdcachedLine struct {
	flags []string
	// foreground is -g: run in the foreground, logging to stderr, instead
	// of detaching (detach.go).
	foreground bool
	// logFile is -o: log to this file (appended) instead of syslog, or
	// of stderr with -g.
	logFile string
}

// rrdcachedFlags translates rrdcached's options into spoold's flags.
// Everything after "--" is spoold's own flags, passed on unchanged.
func rrdcachedFlags(args []string) (rrdcachedLine, error) {
	var line rrdcachedLine
	// rrdcached accepts every command on every socket without -P; spoold's
	// TCP sockets accept only the read commands unless told.
	all := rrdcached.AllPermissions()
	out := append(append([]string(nil), rrdcachedDefaults...), "--listen-permissions", (&permValue{&all}).String())
	listens := 0
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = args[i+1:]
			break
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			return line, fmt.Errorf("unexpected argument %q (spoold's own flags go after --)", a)
		}
		// Options without a value may be grouped (-gFB), as getopt allows.
		for j := 1; j < len(a); j++ {
			opt := a[j]
			if why, ok := rrdcachedRefused[opt]; ok {
				return line, fmt.Errorf("option -%c is not supported: %s", opt, why)
			}
			if opt == 'g' {
				line.foreground = true
				continue
			}
			if !strings.ContainsRune(rrdcachedValued, rune(opt)) {
				f, err := rrdcachedSwitch(opt)
				if err != nil {
					return line, err
				}
				out = append(out, f...)
				if opt == 'L' {
					listens++
				}
				continue
			}
			val := a[j+1:]
			if val == "" {
				if i+1 >= len(args) {
					return line, fmt.Errorf("option -%c needs a value", opt)
				}
				i++
				val = args[i]
			}
			f, err := rrdcachedValue(opt, val)
			if err != nil {
				return line, fmt.Errorf("option -%c %q: %w", opt, val, err)
			}
			if opt == 'o' {
				line.logFile = val
			}
			out = append(out, f...)
			if opt == 'l' {
				listens++
			}
			break
		}
	}
	if listens == 0 {
		out = append(out, "--listen", rrdcachedDefaultListen)
	}
	line.flags = append(out, rest...)
	return line, nil
}

// rrdcachedSwitch is the meaning of an option without a value.
func rrdcachedSwitch(opt byte) ([]string, error) {
	switch opt {
	case 'L': // the default TCP port on every interface
		return []string{"--listen", "tcp::" + rrdcached.DefaultPort}, nil
	case 'F': // spoold flushes at stop for --shutdown-timeout; the rest is in the spool
		return nil, nil
	case 'B': // spoold never writes outside --rrd-dir, with or without -B
		return nil, nil
	case 'R': // spoold creates the subdirectories of --rrd-dir a file needs
		return nil, nil
	}
	return nil, fmt.Errorf("unknown option -%c (rrdcached(1) lists the options)", opt)
}

// rrdcachedValue is the meaning of an option with its value.
func rrdcachedValue(opt byte, val string) ([]string, error) {
	switch opt {
	case 'l':
		spec, err := rrdcachedListenSpec(val)
		if err != nil {
			return nil, err
		}
		return []string{"--listen", spec}, nil
	case 's':
		return []string{"--listen-group", val}, nil
	case 'm':
		return []string{"--listen-mode", val}, nil
	case 'P':
		return []string{"--listen-permissions", val}, nil
	case 'w', 'z':
		d, err := rrdcachedDuration(val)
		if err != nil {
			return nil, err
		}
		flag := map[byte]string{'w': "--write-delay", 'z': "--write-jitter"}[opt]
		return []string{flag, d.String()}, nil
	case 'f':
		// rrdcached writes the values of files whose updates stopped
		// every -f; spoold writes every file within --write-delay of its
		// oldest pending value, updates or not, which is sooner.
		if _, err := rrdcachedDuration(val); err != nil {
			return nil, err
		}
		return nil, nil
	case 'p': // written by the daemon, detached or not, once it serves
		return []string{"--pid-file", val}, nil
	case 'o': // runRRDcached opens it
		return nil, nil
	case 't':
		if n, err := strconv.Atoi(val); err != nil || n < 1 {
			return nil, fmt.Errorf("want a number of threads, at least 1")
		}
		return []string{"--writers", val}, nil
	case 'j':
		return []string{"--spool-dir", val}, nil
	case 'b':
		return []string{"--rrd-dir", val}, nil
	case 'a': // allocation chunks of rrdcached's cache; spoold's spool has none
		if n, err := strconv.Atoi(val); err != nil || n < 1 {
			return nil, fmt.Errorf("want a number, at least 1")
		}
		return nil, nil
	case 'V':
		lvl, ok := map[string]string{
			"LOG_EMERG": "error", "LOG_ALERT": "error", "LOG_CRIT": "error", "LOG_ERR": "error",
			"LOG_WARNING": "warn", "LOG_NOTICE": "info", "LOG_INFO": "info", "LOG_DEBUG": "debug",
		}[val]
		if !ok {
			return nil, fmt.Errorf("want LOG_EMERG, LOG_ALERT, LOG_CRIT, LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO or LOG_DEBUG")
		}
		return []string{"--log-level", lvl}, nil
	}
	return nil, fmt.Errorf("unknown option -%c (rrdcached(1) lists the options)", opt)
}

// rrdcachedListenSpec turns an rrdcached -l address into a --listen spec:
// unix:PATH or /PATH is a unix socket; HOST, HOST:PORT, [HOST]:PORT and
// :PORT are TCP, on port 42217 when none is given.
func rrdcachedListenSpec(addr string) (string, error) {
	switch {
	case strings.HasPrefix(addr, "unix:"):
		return addr, nil
	case strings.HasPrefix(addr, "/"):
		return "unix:" + addr, nil
	case addr == "":
		return "tcp::" + rrdcached.DefaultPort, nil
	}
	spec := "tcp:" + addr
	if _, _, err := rrdcached.ParseSpec(spec); err != nil {
		return "", err
	}
	return spec, nil
}

// rrdcachedDuration parses rrdcached's timeouts: seconds, or a number with
// the suffix s, m, h or d.
func rrdcachedDuration(s string) (time.Duration, error) {
	unit := time.Second
	num := s
	if n := len(s); n > 0 {
		if u, ok := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[s[n-1]]; ok {
			unit, num = u, s[:n-1]
		}
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("want seconds, or a number with s, m, h or d")
	}
	return time.Duration(n) * unit, nil
}
