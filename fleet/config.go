package fleet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spoold/spoold/internal/fileutil"
	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/rrd"
)

// ConfigError is a problem in a targets or profiles file: where it is and
// what is wrong. It never contains a secret.
type ConfigError struct {
	File string
	Line int
	Msg  string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// maxLineLen bounds a line of a targets or profiles file.
const maxLineLen = 64 << 10

// configLine is one significant line: its number and its fields.
type configLine struct {
	n      int
	fields []string
	text   string // the line without its leading and trailing blanks
}

// readConfigLines splits r into lines of whitespace-separated fields,
// skipping blank lines and comments (lines whose first non-blank character
// is '#').
func readConfigLines(r io.Reader, file string) ([]configLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLineLen)
	var lines []configLine
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		lines = append(lines, configLine{n: n, fields: strings.Fields(text), text: text})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ConfigError{file, n + 1, fmt.Sprintf("line longer than %d bytes", maxLineLen)}
		}
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return lines, nil
}

// parseDS parses a ds line's fields (and a column line's, its OID
// alternatives taken apart); resolve turns the OID as written into a
// numeric one.
func parseDS(f []string, resolve func(string) (string, error)) (DS, error) {
	if len(f) < 3 || len(f) > 5 {
		return DS{}, errors.New("want \"ds <ds-name> <oid> <TYPE> [min [max]]\"")
	}
	d := DS{DataSource: rrd.DataSource{Name: f[0], Min: nan(), Max: nan()}}
	if !rrd.ValidDSName(d.Name) {
		return DS{}, fmt.Errorf("data source name %q: want 1 to 19 of [A-Za-z0-9_]", d.Name)
	}
	var err error
	if d.OID, err = resolve(f[1]); err != nil {
		return DS{}, err
	}
	if d.Type, err = rrd.ParseDSType(f[2]); err != nil {
		return DS{}, fmt.Errorf("data source %s: type %q: want GAUGE, COUNTER, DERIVE or ABSOLUTE", d.Name, f[2])
	}
	if len(f) > 3 {
		if d.Min, err = parseBound(f[3]); err != nil {
			return DS{}, fmt.Errorf("data source %s: min %w", d.Name, err)
		}
	}
	if len(f) > 4 {
		if d.Max, err = parseBound(f[4]); err != nil {
			return DS{}, fmt.Errorf("data source %s: max %w", d.Name, err)
		}
	}
	if d.Min == d.Min && d.Max == d.Max && d.Min >= d.Max {
		return DS{}, fmt.Errorf("data source %s: min %g not below max %g", d.Name, d.Min, d.Max)
	}
	return d, nil
}

// LoadProfiles parses the profiles file at path: a regular file (or a
// symlink to one) of at most 64 MiB.
func LoadProfiles(path string) (Profiles, error) { return LoadProfilesMIB(path, mib.Builtin()) }

// LoadProfilesMIB is LoadProfiles with the MIB names of res.
func LoadProfilesMIB(path string, res *mib.Resolver) (Profiles, error) {
	b, err := fileutil.ReadRegular(path, maxConfigFile)
	if err != nil {
		return nil, fmt.Errorf("read profiles file: %w", err)
	}
	return ParseProfilesMIB(bytes.NewReader(b), path, res)
}

// LoadTargets parses the targets file at path, resolving profile names in
// profiles (nil: built-ins only) and reading "file:" secrets. Like every
// file this package reads, it must be a regular file (or a symlink to one),
// of at most 64 MiB.
func LoadTargets(path string, profiles Profiles) ([]*Target, error) {
	return loadTargets(path, profiles, readSecretFile)
}

// loadTargets is LoadTargets reading secret files with readFile.
func loadTargets(path string, profiles Profiles, readFile func(string) ([]byte, error)) ([]*Target, error) {
	b, err := fileutil.ReadRegular(path, maxConfigFile)
	if err != nil {
		return nil, fmt.Errorf("read targets file: %w", err)
	}
	return parseTargets(bytes.NewReader(b), path, profiles, readFile)
}

// validName reports whether s is a valid target or profile name.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}
