package admin

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// metricsContentType is the Prometheus text exposition format, version
// 0.0.4; promhttp may add parameters after it (escaping=).
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

// key is the sample's series, labels sorted: name{a="x",b="y"} (unescaped).
func (s promSample) key() string {
	var ks []string
	for k := range s.labels {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	b.WriteString(s.name)
	if len(ks) > 0 {
		b.WriteByte('{')
		for i, k := range ks {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=%q", k, s.labels[k])
		}
		b.WriteByte('}')
	}
	return b.String()
}

var (
	metricNameRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelNameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// parseExposition is a strict reader of the Prometheus text format 0.0.4 as
// spoold writes it: every family has HELP then TYPE before its samples and
// appears once, samples of a family are contiguous and carry its name,
// counters end in _total and are not negative, series are unique, label
// values use only the \\, \" and \n escapes, and the text ends in a newline.
func parseExposition(text string) (map[string]promSample, map[string]string, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, nil, fmt.Errorf("text does not end in a newline")
	}
	if !utf8.ValidString(text) {
		return nil, nil, fmt.Errorf("text is not UTF-8")
	}
	series := map[string]promSample{}
	types := map[string]string{}
	helps := map[string]bool{}
	current := ""
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fail := func(format string, a ...any) error {
			return fmt.Errorf("line %d %q: %s", i+1, line, fmt.Sprintf(format, a...))
		}
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name, help, ok := strings.Cut(line[len("# HELP "):], " ")
			if !ok || !metricNameRE.MatchString(name) || help == "" {
				return nil, nil, fail("bad HELP")
			}
			if helps[name] {
				return nil, nil, fail("second HELP of %s", name)
			}
			if _, err := unescape(help, false); err != nil {
				return nil, nil, fail("HELP: %v", err)
			}
			helps[name], current = true, name
		case strings.HasPrefix(line, "# TYPE "):
			name, typ, ok := strings.Cut(line[len("# TYPE "):], " ")
			if !ok || name != current || types[name] != "" {
				return nil, nil, fail("TYPE not right after its HELP")
			}
			switch typ {
			case "counter":
				if !strings.HasSuffix(name, "_total") {
					return nil, nil, fail("counter name without _total")
				}
			case "gauge":
				if strings.HasSuffix(name, "_total") {
					return nil, nil, fail("gauge name ending in _total")
				}
			default:
				return nil, nil, fail("type %q", typ)
			}
			types[name] = typ
		case strings.HasPrefix(line, "#") || line == "":
			return nil, nil, fail("unexpected comment or empty line")
		default:
			s, err := parseSample(line)
			if err != nil {
				return nil, nil, fail("%v", err)
			}
			if s.name != current || types[current] == "" {
				return nil, nil, fail("sample outside its family %q", current)
			}
			if types[current] == "counter" && (s.value < 0 || math.IsNaN(s.value)) {
				return nil, nil, fail("counter value %v", s.value)
			}
			if _, dup := series[s.key()]; dup {
				return nil, nil, fail("duplicate series")
			}
			series[s.key()] = s
		}
	}
	return series, types, nil
}

func parseSample(line string) (promSample, error) {
	s := promSample{labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return s, fmt.Errorf("no value")
	}
	s.name, line = line[:end], line[end:]
	if !metricNameRE.MatchString(s.name) {
		return s, fmt.Errorf("metric name %q", s.name)
	}
	if strings.HasPrefix(line, "{") {
		line = line[1:]
		for !strings.HasPrefix(line, "}") {
			name, rest, ok := strings.Cut(line, `="`)
			if !ok || !labelNameRE.MatchString(name) || strings.HasPrefix(name, "__") {
				return s, fmt.Errorf("label name in %q", line)
			}
			val, n, err := readLabelValue(rest)
			if err != nil {
				return s, err
			}
			if _, dup := s.labels[name]; dup {
				return s, fmt.Errorf("label %s twice", name)
			}
			s.labels[name] = val
			line = rest[n:]
			if strings.HasPrefix(line, ",") {
				line = line[1:]
			} else if !strings.HasPrefix(line, "}") {
				return s, fmt.Errorf("want , or } at %q", line)
			}
		}
		line = line[1:]
	}
	if !strings.HasPrefix(line, " ") {
		return s, fmt.Errorf("no space before the value")
	}
	fields := strings.Split(line[1:], " ")
	if len(fields) > 2 {
		return s, fmt.Errorf("trailing text %q", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil && fields[0] != "+Inf" && fields[0] != "-Inf" && fields[0] != "NaN" {
		return s, fmt.Errorf("value %q", fields[0])
	}
	s.value = v
	if len(fields) == 2 {
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			return s, fmt.Errorf("timestamp %q", fields[1])
		}
	}
	return s, nil
}

// readLabelValue reads an escaped label value up to its closing quote and
// returns it and the bytes consumed (quote included).
func readLabelValue(s string) (string, int, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\n':
			return "", 0, fmt.Errorf("raw newline in label value")
		case '\\':
			if i+1 == len(s) {
				return "", 0, fmt.Errorf("dangling backslash")
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			default:
				return "", 0, fmt.Errorf("bad escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated label value")
}

// unescape checks a HELP text's escapes (\\ and \n only).
func unescape(s string, quotes bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("dangling backslash")
		}
		i++
		switch {
		case s[i] == '\\':
			b.WriteByte('\\')
		case s[i] == 'n':
			b.WriteByte('\n')
		case s[i] == '"' && quotes:
			b.WriteByte('"')
		default:
			return "", fmt.Errorf("bad escape \\%c", s[i])
		}
	}
	return b.String(), nil
}

func TestMetricsParseAndValues(t *testing.T) {
	tricky := "we\"ird\\name\nx"
	fb := newFakeDaemon(okTarget("core-1"), okTarget(tricky),
		NewTargetStatus(pollerFailing("edge-2", 1, 0), nil))
	h := NewHandler(fb, testOptions())
	resp := do(t, h, "GET", "/metrics", "")
	body := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), metricsContentType) {
		t.Fatalf("GET /metrics: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	series, types, err := parseExposition(body)
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, body)
	}
	want := map[string]float64{
		`spoold_build_info{version="1.2.3-test"}`:                               1,
		`spoold_uptime_seconds`:                                                 26 * 3600,
		`spoold_loader_running`:                                                 1,
		`spoold_loader_progress_ratio`:                                          0.5,
		`spoold_loader_eta_seconds`:                                             300,
		`spoold_loader_rate_files_per_second`:                                   1000,
		`spoold_loader_walk_files{result="indexed"}`:                            299000,
		`spoold_loader_param_sleep_seconds`:                                     0.05,
		`spoold_index_entries`:                                                  19,
		`spoold_index_keys`:                                                     7,
		`spoold_index_bytes`:                                                    3 << 20,
		`spoold_index_capacity_bytes`:                                           10 << 20,
		`spoold_index_full`:                                                     0,
		`spoold_writer_queue_targets`:                                           7,
		`spoold_writer_pending_entries`:                                         19,
		`spoold_writer_oldest_pending_age_seconds`:                              540,
		`spoold_writer_update_calls_total`:                                      1234,
		`spoold_writer_values_written_total`:                                    64000,
		`spoold_writer_errors_total{kind="permission"}`:                         3,
		`spoold_writer_errors_total{kind="value"}`:                              1,
		`spoold_writer_errors_total{kind="nospace"}`:                            0,
		`spoold_poller_last_cycle_devices{result="ok"}`:                         2,
		`spoold_poller_last_cycle_devices{result="failed"}`:                     1,
		`spoold_poller_last_cycle_failures{kind="timeout"}`:                     1,
		`spoold_poller_last_cycle_failures{kind="malformed"}`:                   0,
		`spoold_poller_last_cycle_wrong_types`:                                  1,
		`spoold_poller_last_cycle_duration_seconds`:                             12,
		`spoold_target_health{state="ok",target="core-1"}`:                      1,
		`spoold_target_health{state="failing",target="core-1"}`:                 0,
		`spoold_target_health{state="failing",target="edge-2"}`:                 1,
		`spoold_target_health{state="ok",target=` + strconv.Quote(tricky) + `}`: 1,
		`spoold_target_rtt_seconds{target="core-1"}`:                            0.035,
		`spoold_spool_written_entries_total`:                                    5000,
	}
	for k, v := range want {
		s, ok := series[k]
		if !ok {
			t.Errorf("series %s missing", k)
			continue
		}
		if math.Abs(s.value-v) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, s.value, v)
		}
	}
	for name, typ := range types {
		if typ == "counter" && !strings.HasPrefix(name, "spoold_") {
			t.Errorf("metric %s without the spoold_ prefix", name)
		}
	}
	if !strings.Contains(body, `target="we\"ird\\name\nx"`) {
		t.Errorf("label value not escaped as the format wants")
	}
}

func TestMetricsBeforeFirstCycle(t *testing.T) {
	fb := newFakeDaemon()
	fb.status.LastCycle = nil
	fb.status.Started = testNow
	resp := do(t, NewHandler(fb, testOptions()), "GET", "/metrics", "")
	series, _, err := parseExposition(readBody(t, resp))
	if err != nil {
		t.Fatal(err)
	}
	if series["spoold_poller_cycles_seen"].value != 0 {
		t.Errorf("cycles_seen != 0 before the first cycle")
	}
	if _, ok := series["spoold_poller_last_cycle_seq"]; ok {
		t.Errorf("last cycle reported before the first cycle")
	}
}

func TestParseExpositionRejects(t *testing.T) {
	for _, text := range []string{
		"a 1\n",                               // no HELP/TYPE
		"# HELP a x\n# TYPE a counter\na 1\n", // counter without _total
		"# HELP a x\n# TYPE a gauge\na{b=\"\\t\"} 1\n", // bad escape
		"# HELP a x\n# TYPE a gauge\na 1\na 2\n",       // duplicate series
		"# HELP a x\n# TYPE a gauge\na 1",              // no final newline
		"# HELP a x\n# TYPE a gauge\nb 1\n",            // sample outside its family
	} {
		if _, _, err := parseExposition(text); err == nil {
			t.Errorf("parser accepted %q", text)
		}
	}
}
