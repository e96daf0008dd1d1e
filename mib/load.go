package mib

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/alecthomas/participle"
	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sleepinggenius2/gosmi/parser"

	"github.com/spoold/spoold/internal/fileutil"
)

// Options says where an operator's MIB files are.
type Options struct {
	// Dirs are the directories of MIB files (--mib-dir), searched in
	// order: the first file that defines a module is the module. Every
	// file in them that holds a module definition is loaded.
	Dirs []string
}

// maxMIBFile is the largest MIB file Load reads (with
// fileutil.ReadRegular: a regular file, or a symlink to one, read without
// blocking): the largest vendor modules are a few MB.
const maxMIBFile = 16 << 20

// DefaultOptions returns the options of a daemon with no MIB directory:
// the built-in objects alone.
func DefaultOptions() Options { return Options{} }

// ErrMissingModule is the reason of a FileError for an import from a
// module that is neither in a MIB directory nor one this package carries
// or generates, or of a name the built-in module's generated text lacks.
var ErrMissingModule = errors.New("no MIB directory holds that module")

// FileError is a problem with one MIB file: it does not parse, or it
// imports from a module that no directory holds. Line is 0 when the
// parser gave no position.
type FileError struct {
	File string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("load MIB file %s line %d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("load MIB file %s: %v", e.File, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// LoadCache is what one process keeps across its loads of MIB directories
// (start, each SIGHUP): the metrics, and the last load, which a Load of
// the same directories with every file unchanged (byte for byte) returns
// again without parsing. It is a prometheus.Collector, for a registry made
// after the first Load. Its methods are safe for concurrent use.
type LoadCache struct {
	errors  prometheus.Counter
	modules prometheus.Gauge

	mu   sync.Mutex
	last *lastLoad
}

// lastLoad is a Load's result and the fingerprint of what it read.
type lastLoad struct {
	fingerprint uint64
	r           *Resolver
	errs        []error
	modules     int
}

// NewLoadCache returns a LoadCache with its metrics registered with reg (nil:
// not yet, the caller registers the LoadCache itself).
func NewLoadCache(reg prometheus.Registerer) *LoadCache {
	l := &LoadCache{
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "spoold_mib_file_errors_total",
			Help: "Problems with MIB files, at each load: a file that does not parse, an import from a module no MIB directory holds, objects whose syntax does not resolve.",
		}),
		modules: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "spoold_mib_modules_loaded",
			Help: "MIB modules loaded from MIB directories by the last load.",
		}),
	}
	if reg != nil {
		reg.MustRegister(l)
	}
	return l
}

// Describe and Collect make a LoadCache a prometheus.Collector.
func (l *LoadCache) Describe(ch chan<- *prometheus.Desc) {
	l.errors.Describe(ch)
	l.modules.Describe(ch)
}

func (l *LoadCache) Collect(ch chan<- prometheus.Metric) {
	l.errors.Collect(ch)
	l.modules.Collect(ch)
}

// reuse returns the last load if it read what fingerprint says.
func (l *LoadCache) reuse(fingerprint uint64) *lastLoad {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != nil && l.last.fingerprint == fingerprint {
		return l.last
	}
	return nil
}

// done counts a load's result and keeps it for reuse.
func (l *LoadCache) done(ld *lastLoad) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = ld
	l.errors.Add(float64(len(ld.errs)))
	l.modules.Set(float64(ld.modules))
}

//go:embed base/*.txt
var baseFiles embed.FS

// smiV1Modules are the modules of SMIv1's macros and base types, whose
// imports the parser resolves without their files.
var smiV1Modules = map[string]bool{"RFC-1212": true, "RFC-1215": true, "RFC1155-SMI": true, "RFC1065-SMI": true, "RFC1213-MIB": true}

// source is one module's text and where it came from.
type source struct {
	file string // path, or "base/NAME.txt" for a carried base module
	text []byte
}

// Load returns a Resolver of the built-in objects and every module of the
// MIB files in opts.Dirs (modules of the same name as a built-in one take
// its place). It never fails whole: a file that is not a regular file (a
// FIFO, a device) or is larger than maxMIBFile, a file that does not
// parse, or that imports from a module no directory holds, is one
// *FileError in the returned error (errors.Join), counted in l and logged,
// and every other module is loaded. The daemon reports them and carries on; -t fails on
// them. With l, a Load of files unchanged since l's last returns that
// load's Resolver and errors again (counting them again). l and logger
// may be nil.
func Load(opts Options, logger *slog.Logger, l *LoadCache) (*Resolver, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srcs, errs, fingerprint := readDirs(opts.Dirs, logger)
	var ld *lastLoad
	if l != nil {
		ld = l.reuse(fingerprint)
	}
	if ld == nil {
		ld = &lastLoad{fingerprint: fingerprint}
		ld.r, ld.modules, ld.errs = build(srcs)
		ld.errs = append(errs, ld.errs...)
	}
	if l != nil {
		l.done(ld)
	}
	for _, e := range ld.errs {
		logger.Error("MIB file not loaded whole", "err", e)
	}
	return ld.r, errors.Join(ld.errs...)
}

// build returns the Resolver of the built-in objects and the modules of
// srcs, how many of those loaded, and what did not.
func build(srcs map[string]*source) (*Resolver, int, []error) {
	found := sortedNames(srcs) // the modules of the directories
	partial, err := addBase(srcs)
	if err != nil {
		return Builtin(), 0, []error{err}
	}
	if len(found) == 0 {
		return Builtin(), 0, nil
	}
	objs, n, errs := buildModules(srcs, found, partial)
	r := Builtin().clone()
	for _, o := range objs {
		r.add(o.Object, o.file)
	}
	return r, n, errs
}

// readDirs reads every file of dirs that defines a module, the first file
// of a module's name winning, and returns with them the fingerprint of
// all it read (every path and its bytes, and what it could not read).
func readDirs(dirs []string, logger *slog.Logger) (map[string]*source, []error, uint64) {
	srcs := map[string]*source{}
	var errs []error
	h := xxhash.New()
	note := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s", len(p), p)
		}
	}
	for _, dir := range dirs {
		note("dir", dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, &FileError{File: dir, Err: fmt.Errorf("read MIB directory: %w", err)})
			note("error", err.Error())
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			text, err := fileutil.ReadRegular(path, maxMIBFile)
			if err != nil {
				errs = append(errs, &FileError{File: path, Err: err})
				note("error", path, err.Error())
				continue
			}
			note("file", path, string(text))
			name, err := moduleName(path, text)
			switch {
			case err != nil:
				errs = append(errs, err)
			case name == "":
				logger.Debug("not a MIB module, skipped", "file", path)
			case srcs[name] != nil:
				logger.Warn("MIB module defined again, the first file kept", "module", name, "file", path, "kept", srcs[name].file)
			default:
				srcs[name] = &source{file: path, text: text}
			}
		}
	}
	return srcs, errs, h.Sum64()
}

// definitions finds a module's first line: "IF-MIB DEFINITIONS ::= BEGIN".
var definitions = regexp.MustCompile(`(?m)^[ \t]*([A-Za-z][A-Za-z0-9-]*)\s+DEFINITIONS\s*::=\s*BEGIN`)

// moduleName returns the name of the module text defines, found without
// parsing it (gosmi parses it when it loads it); "" for a file that
// defines none. A file that says DEFINITIONS where no module starts is
// parsed for the error.
func moduleName(path string, text []byte) (string, error) {
	if m := definitions.FindSubmatch(text); m != nil {
		return string(m[1]), nil
	}
	if !bytes.Contains(text, []byte("DEFINITIONS")) {
		return "", nil
	}
	mod, err := parse(text)
	if err != nil {
		return "", parseError(path, err)
	}
	return string(mod.Name), nil
}

// parse runs gosmi's parser, turning a panic of it into an error.
func parse(text []byte) (mod *parser.Module, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the MIB parser failed: %v", p)
		}
	}()
	return parser.Parse(bytes.NewReader(text))
}

// parseError is a parser's error as a FileError with its line.
func parseError(path string, err error) *FileError {
	var perr participle.Error
	if errors.As(err, &perr) {
		pos := perr.Position()
		prefix := fmt.Sprintf("%d:%d: ", pos.Line, pos.Column)
		msg := strings.TrimPrefix(perr.Error(), pos.Filename+":")
		return &FileError{File: path, Line: pos.Line, Err: errors.New("parse: " + strings.TrimPrefix(msg, prefix))}
	}
	return &FileError{File: path, Err: fmt.Errorf("parse: %w", err)}
}

// loadError is why gosmi did not load a module: the parser's error, with
// its line, or else that it could not build it.
func loadError(s *source) *FileError {
	if _, err := parse(s.text); err != nil {
		return parseError(s.file, err)
	}
	return &FileError{File: s.file, Err: errors.New("the MIB library could not build the module")}
}

// missingImport is the error of an import from a module that is not
// there (or, partial, not whole), at the line of its FROM clause when the
// text has one.
func missingImport(s *source, module, name, from string, partial bool) *FileError {
	line := 0
	if loc := regexp.MustCompile(`FROM\s+` + regexp.QuoteMeta(from) + `\b`).FindIndex(s.text); loc != nil {
		line = bytes.Count(s.text[:loc[0]], []byte("\n")) + 1
	}
	err := fmt.Errorf("module %s imports %s from %s: %w (objects that need it are missing or have no syntax)", module, name, from, ErrMissingModule)
	if partial {
		err = fmt.Errorf("module %s imports %s from %s, which is built in only in part: %w (objects that need it are missing or have no syntax)", module, name, from, ErrMissingModule)
	}
	return &FileError{File: s.file, Line: line, Err: err}
}

// addBase adds, where no directory has them, the base modules this
// package carries (SNMPv2-SMI, SNMPv2-TC, SNMPv2-CONF, HCNUM-TC) and the
// built-in modules' generated text; it returns the names each generated
// module defines, by module.
func addBase(srcs map[string]*source) (map[string]map[string]bool, error) {
	names, err := fs.Glob(baseFiles, "base/*.txt")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		name := strings.TrimSuffix(filepath.Base(n), ".txt")
		if srcs[name] != nil {
			continue
		}
		text, err := baseFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		srcs[name] = &source{file: n, text: text}
	}
	gen, err := generated()
	if err != nil {
		return nil, err
	}
	partial := map[string]map[string]bool{}
	for name, text := range gen.texts {
		if srcs[name] == nil {
			srcs[name] = &source{file: "built-in " + name, text: text}
			partial[name] = gen.names[name]
		}
	}
	return partial, nil
}

// generated is generatedModules' result, made once.
var generated = sync.OnceValues(func() (generatedText, error) {
	texts, names, err := generatedModules()
	return generatedText{texts, names}, err
})

type generatedText struct {
	texts map[string][]byte
	names map[string]map[string]bool
}

func sortedNames(srcs map[string]*source) []string {
	names := make([]string, 0, len(srcs))
	for n := range srcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
