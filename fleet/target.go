package fleet

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/spool"
)

// Secret is a community or a USM passphrase. Its String and GoString (and
// so every fmt verb) print a placeholder: a Secret never reaches a log, an
// error or a status page. Reveal returns the value.
type Secret string

const redacted = "[secret]"

func (s Secret) String() string             { return redacted }
func (s Secret) GoString() string           { return redacted }
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }
func (s Secret) Reveal() string             { return string(s) }

// V3 is a target's SNMPv3 user-based security. The security level follows
// from what is set: no Auth is noAuthNoPriv, Auth without Priv is
// authNoPriv, both is authPriv.
type V3 struct {
	User     string
	Auth     gosnmp.SnmpV3AuthProtocol // gosnmp.NoAuth when unset
	AuthPass Secret
	Priv     gosnmp.SnmpV3PrivProtocol // gosnmp.NoPriv when unset
	PrivPass Secret
	Context  string
}

// Target is one device to poll. Name is its identity: the spool key and
// the RRD file's name.
type Target struct {
	Name      string
	Host      string // IP address or host name
	Port      uint16
	Profile   *Profile
	Version   gosnmp.SnmpVersion
	Community Secret        // v1 and v2c
	V3        *V3           // v3 only
	Timeout   time.Duration // 0: Options.Timeout
	Retries   int           // -1: Options.Retries
	File      string        // where the target was defined
	Line      int
}

// MaxRetries is the most resends after a timeout: a target's retries=,
// and the poller's Options.Retries.
const MaxRetries = 10

// Address returns host:port.
func (t *Target) Address() string { return net.JoinHostPort(t.Host, strconv.Itoa(int(t.Port))) }

var authProtocols = map[string]gosnmp.SnmpV3AuthProtocol{
	"MD5": gosnmp.MD5, "SHA": gosnmp.SHA, "SHA224": gosnmp.SHA224,
	"SHA256": gosnmp.SHA256, "SHA384": gosnmp.SHA384, "SHA512": gosnmp.SHA512,
}

var privProtocols = map[string]gosnmp.SnmpV3PrivProtocol{
	"DES": gosnmp.DES, "AES": gosnmp.AES, "AES192": gosnmp.AES192,
	"AES256": gosnmp.AES256, "AES192C": gosnmp.AES192C, "AES256C": gosnmp.AES256C,
}

// targetKeys are the keys of a target line, in the order of the docs.
var targetKeys = []string{"profile", "version", "community", "timeout", "retries",
	"user", "auth", "auth-pass", "priv", "priv-pass", "context"}

var secretKeys = map[string]bool{"community": true, "auth-pass": true, "priv-pass": true}

// ParseTargets parses a targets file (docs/configuration.md); file names it
// in errors, which are *ConfigError for problems in the text.
//
//	defaults key=value...          # applies to the target lines below it
//	<name> <host>[:port] key=value...
//
// Profile names resolve in profiles (nil: built-ins only). A secret written
// as file:<path> is read from the first line of that file, which must be a
// regular file (or a symlink to one) of at most 64 KiB.
func ParseTargets(r io.Reader, file string, profiles Profiles) ([]*Target, error) {
	return parseTargets(r, file, profiles, readSecretFile)
}

func parseTargets(r io.Reader, file string, profiles Profiles, readFile func(string) ([]byte, error)) ([]*Target, error) {
	lines, err := readConfigLines(r, file)
	if err != nil {
		return nil, err
	}
	defaults := map[string]string{}
	where := map[string]int{}
	cache := map[string]*Profile{}
	var targets []*Target
	for _, l := range lines {
		bad := func(format string, args ...any) error {
			return &ConfigError{file, l.n, fmt.Sprintf(format, args...)}
		}
		if l.fields[0] == "defaults" {
			kv, err := parseKeyValues(l.fields[1:])
			if err != nil {
				return nil, bad("%v", err)
			}
			for k, v := range kv {
				defaults[k] = v
			}
			continue
		}
		if len(l.fields) < 2 {
			return nil, bad("want \"<name> <host>[:port] key=value...\"")
		}
		name := l.fields[0]
		if strings.Contains(name, "=") {
			// Not printed: it may be a secret put before the name.
			return nil, bad("field 1 is key=value: want the target name first, then its address")
		}
		if !validName(name) || len(name) > spool.MaxKeyLen {
			return nil, bad("target name %q: want 1 to 255 of [A-Za-z0-9._-], starting with a letter or digit", name)
		}
		if prev, dup := where[name]; dup {
			return nil, bad("target %s already defined on line %d", name, prev)
		}
		kv, err := parseKeyValues(l.fields[2:])
		if err != nil {
			return nil, bad("target %s: %v", name, err)
		}
		inheritDefaults(kv, defaults)
		t, err := buildTarget(name, l.fields[1], kv, profiles, cache, readFile)
		if err != nil {
			return nil, bad("target %s: %v", name, err)
		}
		t.File, t.Line = file, l.n
		where[name] = l.n
		targets = append(targets, t)
	}
	return targets, nil
}

func parseKeyValues(fields []string) (map[string]string, error) {
	kv := make(map[string]string, len(fields))
	for i, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			// Not printed: it may be a secret that lost its key.
			return nil, fmt.Errorf("option %d is not key=value", i+1)
		}
		known := false
		for _, tk := range targetKeys {
			known = known || k == tk
		}
		if !known {
			return nil, fmt.Errorf("unknown key %q (want one of %s)", printable(k), strings.Join(targetKeys, ", "))
		}
		if _, dup := kv[k]; dup {
			return nil, fmt.Errorf("key %s given twice", k)
		}
		if v == "" {
			return nil, fmt.Errorf("key %s has an empty value", k)
		}
		kv[k] = v
	}
	return kv, nil
}

// v3Keys are the options of SNMPv3 only.
var v3Keys = []string{"user", "auth", "auth-pass", "priv", "priv-pass", "context"}

// inheritDefaults fills kv with the defaults it does not set itself, except
// those of the other SNMP version: a defaults line with community= and a
// version=3 target (or v3 defaults and a v2c target) is a normal mixed
// file, not an error. Options written on the target line itself are always
// checked.
func inheritDefaults(kv, defaults map[string]string) {
	version, set := kv["version"]
	if !set {
		version = defaults["version"]
	}
	skip := v3Keys
	if version == "3" {
		skip = []string{"community"}
	}
	for k, v := range defaults {
		if _, set := kv[k]; !set && !slices.Contains(skip, k) {
			kv[k] = v
		}
	}
}

// printable shortens s for an error message; it is never called on a
// secret's value.
func printable(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

func buildTarget(name, addr string, kv map[string]string, profiles Profiles, cache map[string]*Profile, readFile func(string) ([]byte, error)) (*Target, error) {
	t := &Target{Name: name, Retries: -1}
	var err error
	if t.Host, t.Port, err = parseAddress(addr); err != nil {
		return nil, err
	}
	pname, ok := kv["profile"]
	if !ok {
		return nil, errors.New("no profile (set profile= on the line or in a defaults line)")
	}
	if t.Profile = cache[pname]; t.Profile == nil {
		if t.Profile, err = profiles.Lookup(pname); err != nil {
			return nil, fmt.Errorf("profile %q: no such profile (built-in: host, if-mib, if-mib:<n>)", printable(pname))
		}
		cache[pname] = t.Profile
	}
	if v, ok := kv["timeout"]; ok {
		if t.Timeout, err = time.ParseDuration(v); err != nil || t.Timeout <= 0 || t.Timeout > time.Hour {
			return nil, fmt.Errorf("timeout %q: want a duration in (0, 1h], such as 2s", printable(v))
		}
	}
	if v, ok := kv["retries"]; ok {
		if t.Retries, err = strconv.Atoi(v); err != nil || t.Retries < 0 || t.Retries > MaxRetries {
			return nil, fmt.Errorf("retries %q: want 0 to %d", printable(v), MaxRetries)
		}
	}
	secret := func(k string) (Secret, error) {
		s, err := readSecret(kv[k], readFile)
		if err != nil {
			return "", fmt.Errorf("%s: %w", k, err)
		}
		return s, nil
	}
	switch v := kv["version"]; v {
	case "1", "2c", "":
		t.Version = gosnmp.Version2c
		if v == "1" {
			t.Version = gosnmp.Version1
		}
		for _, k := range v3Keys {
			if _, set := kv[k]; set {
				return nil, fmt.Errorf("%s is for version 3 only", k)
			}
		}
		if _, set := kv["community"]; !set {
			return nil, errors.New("no community")
		}
		if t.Community, err = secret("community"); err != nil {
			return nil, err
		}
	case "3":
		t.Version = gosnmp.Version3
		if t.V3, err = buildV3(kv, secret); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("version %q: want 1, 2c or 3", printable(v))
	}
	return t, nil
}

func buildV3(kv map[string]string, secret func(string) (Secret, error)) (*V3, error) {
	if _, set := kv["community"]; set {
		return nil, errors.New("community is for versions 1 and 2c; version 3 uses user=")
	}
	v := &V3{User: kv["user"], Context: kv["context"], Auth: gosnmp.NoAuth, Priv: gosnmp.NoPriv}
	if v.User == "" {
		return nil, errors.New("version 3 needs user=")
	}
	var err error
	if a, set := kv["auth"]; set {
		var ok bool
		if v.Auth, ok = authProtocols[strings.ToUpper(a)]; !ok {
			return nil, fmt.Errorf("auth %q: want MD5, SHA, SHA224, SHA256, SHA384 or SHA512", printable(a))
		}
		if _, set := kv["auth-pass"]; !set {
			return nil, errors.New("auth= needs auth-pass=")
		}
		if v.AuthPass, err = secret("auth-pass"); err != nil {
			return nil, err
		}
		if len(v.AuthPass) < 8 {
			return nil, errors.New("auth-pass: shorter than 8 characters (RFC 3414)")
		}
	} else if _, set := kv["auth-pass"]; set {
		return nil, errors.New("auth-pass= without auth=")
	}
	if p, set := kv["priv"]; set {
		var ok bool
		if v.Priv, ok = privProtocols[strings.ToUpper(p)]; !ok {
			return nil, fmt.Errorf("priv %q: want DES, AES, AES192, AES256, AES192C or AES256C", printable(p))
		}
		if v.Auth == gosnmp.NoAuth {
			return nil, errors.New("priv= needs auth= (there is no privacy without authentication)")
		}
		if _, set := kv["priv-pass"]; !set {
			return nil, errors.New("priv= needs priv-pass=")
		}
		if v.PrivPass, err = secret("priv-pass"); err != nil {
			return nil, err
		}
		if len(v.PrivPass) < 8 {
			return nil, errors.New("priv-pass: shorter than 8 characters (RFC 3414)")
		}
	} else if _, set := kv["priv-pass"]; set {
		return nil, errors.New("priv-pass= without priv=")
	}
	return v, nil
}

// readSecret returns v, or the first line of the file named by "file:<path>".
// Its errors never contain the secret.
func readSecret(v string, readFile func(string) ([]byte, error)) (Secret, error) {
	path, isFile := strings.CutPrefix(v, "file:")
	if !isFile {
		return Secret(v), nil
	}
	b, err := readFile(path)
	if err != nil {
		return "", fmt.Errorf("read secret file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("secret file %s: first line is empty", path)
	}
	return Secret(line), nil
}

func parseAddress(s string) (string, uint16, error) {
	if strings.Contains(s, "=") {
		// Not printed: it may be a secret put where the address belongs.
		return "", 0, errors.New("field 2 is key=value: want the address (host or host:port) after the name")
	}
	host, port := s, "161"
	if ip := net.ParseIP(s); ip == nil && strings.Contains(s, ":") {
		var err error
		if host, port, err = net.SplitHostPort(s); err != nil {
			return "", 0, fmt.Errorf("address %q: want host or host:port ([v6]:port)", printable(s))
		}
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return "", 0, fmt.Errorf("address %q: port must be 1 to 65535", printable(s))
	}
	if host == "" || strings.ContainsAny(host, "/@[]") {
		return "", 0, fmt.Errorf("address %q: bad host", printable(s))
	}
	return host, uint16(p), nil
}

func nan() float64 { return math.NaN() }

func parseBound(s string) (float64, error) {
	if s == "U" || s == "u" {
		return nan(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q: want a number or U", printable(s))
	}
	return v, nil
}

// String describes the target without its secrets.
func (t Target) String() string {
	p := "<none>"
	if t.Profile != nil {
		p = t.Profile.Name
	}
	s := fmt.Sprintf("target %s at %s profile %s version %s", t.Name, t.Address(), p, versionName(t.Version))
	if t.V3 != nil {
		s += " " + t.V3.String()
	}
	return s
}

// Format prints String for every verb, so no verb prints a secret.
func (t Target) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, t.String()) }

// String describes the USM settings without the passphrases.
func (v V3) String() string {
	return fmt.Sprintf("user %s auth %v priv %v context %q", v.User, v.Auth, v.Priv, v.Context)
}

// Format prints String for every verb, so no verb prints a passphrase.
func (v V3) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, v.String()) }

func versionName(v gosnmp.SnmpVersion) string {
	switch v {
	case gosnmp.Version1:
		return "1"
	case gosnmp.Version2c:
		return "2c"
	case gosnmp.Version3:
		return "3"
	}
	return "?"
}
