package main

import (
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/internal/testing/spoolgen"
)

// Distinctive secrets: none of them may appear in anything spoold outputs.
const (
	secretCommunity = "COMMUNITY-zq81Tv"
	secretAuthPass  = "AUTHPASS-Xw83kLp"
	secretPrivPass  = "PRIVPASS-Qm27jRd"
	secretToken     = "TOKEN-Hc55nWb"
)

// addSecretTargets appends a v2c and a v3 target with the distinctive
// secrets; the simulator answers neither (wrong community, no v3), so their
// polls time out and are logged as errors.
func addSecretTargets(t *testing.T, f *e2eFleet) {
	t.Helper()
	addr := f.sim.Addr().String()
	extra := fmt.Sprintf("\nsecret-v2 %s version=2c community=%s profile=host\n"+
		"secret-v3 %s version=3 community= user=spoold auth=SHA auth-pass=%s priv=AES priv-pass=%s profile=host\n",
		addr, secretCommunity, addr, secretAuthPass, secretPrivPass)
	extra = strings.Replace(extra, " community= ", " ", 1)
	fh, err := os.OpenFile(f.targets, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(extra); err != nil {
		t.Fatal(err)
	}
}

// TestDaemonSecurity runs the real daemon with distinctive secrets, an
// admin token and a umask of 0, sends hostile requests to every endpoint,
// and checks: 4xx for each, the token enforced, no file created or changed
// outside what polling writes, no secret in the logs, /status, /metrics or
// `spoold -t`, and spool and RRD files 0640, directories 0750.
func TestDaemonSecurity(t *testing.T) {
	requireRRDTool(t)
	f := startFleet(t, 2)
	addSecretTargets(t, f)
	dir := t.TempDir()
	args := daemonArgs(dir, f, "--write-delay", "1s", "--write-jitter", "0s", "--admin-token", secretToken, "--log-level", "debug")
	old := syscall.Umask(0)
	p := startDaemon(t, args...)
	syscall.Umask(old)
	p.waitFor(t, "3 cycles and RRD files written", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 3 && num(st, "writer", "values_written") > 0
	})
	// Flush what is pending so the RRD directory holds every file it will.
	if code := post(t, p.admin+"/flush", secretToken, ""); code != 200 {
		t.Fatalf("POST /flush with the token: %d", code)
	}
	parent := filepath.Dir(dir)
	before := spoolgen.Snapshot(t, filepath.Join(dir, "rrd"))
	parentBefore := listNames(t, parent)

	reqs := hostileRequests()
	t.Logf("%d hostile requests", len(reqs))
	for _, r := range reqs {
		code := request(t, r.method, p.admin+r.path, r.token, r.body)
		if code < 400 || code > 499 {
			t.Errorf("%s %s: status %d, want 4xx", r.method, r.path, code)
		}
	}
	after := spoolgen.Snapshot(t, filepath.Join(dir, "rrd"))
	if !maps.Equal(keysOf(before), keysOf(after)) {
		t.Errorf("RRD directory changed its files under hostile requests:\nbefore %v\nafter  %v", keysOf(before), keysOf(after))
	}
	if got := listNames(t, parent); !maps.Equal(got, parentBefore) {
		t.Errorf("files appeared next to the test directory: before %v, after %v", parentBefore, got)
	}
	for _, stray := range []string{"/etc/passwd.rrd", "/tmp/passwd.rrd", filepath.Join(parent, "x.rrd")} {
		if _, err := os.Stat(stray); err == nil {
			t.Errorf("%s exists", stray)
		}
	}

	outputs := map[string]string{"/status": string(get(t, p.admin+"/status")), "/metrics": string(get(t, p.admin+"/metrics"))}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("spoold exited with %v:\n%s", err, p.stderr)
	}
	outputs["log"] = p.stderr.String()
	checkCmd := exec.Command(os.Args[0], append(args, "-t")...)
	checkCmd.Env = append(os.Environ(), childEnv+"=1")
	check, _ := checkCmd.CombinedOutput()
	outputs["spoold -t"] = string(check)
	for _, name := range []string{"secret-v2", "secret-v3"} {
		if !strings.Contains(outputs["/status"], name) || !strings.Contains(outputs["/metrics"], name) {
			t.Fatalf("target %s is not in /status and /metrics: the check below would prove nothing\n%s", name, outputs["spoold -t"])
		}
	}
	for where, out := range outputs {
		for _, s := range []string{secretCommunity, secretAuthPass, secretPrivPass, secretToken} {
			if strings.Contains(out, s) {
				t.Errorf("%s shows the secret %s", where, s)
			}
		}
	}
	checkModes(t, filepath.Join(dir, "spool"), filepath.Join(dir, "rrd"))
}

type hostileRequest struct{ method, path, token, body string }

// hostileRequests are path traversals, encoded dots and slashes, absolute
// paths, NUL bytes, very long names, unknown targets, bad query values and
// POSTs without, with a wrong, or with a right token but a bad body.
func hostileRequests() []hostileRequest {
	long := strings.Repeat("a", 5000)
	var rs []hostileRequest
	for _, p := range []string{
		"/graph/../../etc/passwd.png", "/graph/..%2F..%2Fetc%2Fpasswd.png", "/graph/%2e%2e%2f%2e%2e%2fetc%2fpasswd.png",
		"/graph/%2E%2E.png", "/graph/..png", "/graph/.png", "/graph//etc/passwd.png", "/graph/%2Fetc%2Fpasswd.png",
		"/graph/a%00b.png", "/graph/core%00.png", "/graph/" + long + ".png", "/graph/no-such-target.png",
		"/graph/x.rrd", "/graph/a%5C..%5Cb.png", "/graph/%252e%252e%252fpasswd.png",
		"/graph/sim-0000.png?start=abc", "/graph/sim-0000.png?width=99999999999999999999", "/graph/sim-0000.png?ds=../../x",
		"/graph/sim-0000.png?ds=a%00b", "/graph/sim-0000.png?end=-1000000w", "/graph/sim-0000.png?start=now&end=-1h",
		"/graph/sim-0000.png?file=/etc/passwd", "/status/../../etc/passwd", "/" + long, "/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
		"/metrics%00", "/rrd/sim-0000.rrd",
	} {
		rs = append(rs, hostileRequest{"GET", p, "", ""})
	}
	for _, path := range []string{"/flush", "/loader"} {
		rs = append(rs, hostileRequest{"POST", path, "", ""}, hostileRequest{"POST", path, "wrong", ""},
			hostileRequest{"POST", path, secretToken + "x", ""}, hostileRequest{"POST", path, "TOKEN", ""})
	}
	for _, body := range []string{"loader_files=-1", "loader_files=abc", "loader_sleep=-5s", "loader_cpu=200%",
		"loader_cpu=NaN", "loader_threshold=0", "nope=1", "loader_files=" + long, "loader_files=1%00"} {
		rs = append(rs, hostileRequest{"POST", "/loader", secretToken, body})
	}
	return append(rs, hostileRequest{"DELETE", "/status", secretToken, ""}, hostileRequest{"PUT", "/flush", secretToken, ""})
}

func request(t *testing.T, method, url, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// ServeMux cleans paths with a redirect; the clean path must be
		// refused too.
		loc := resp.Header.Get("Location")
		u := strings.SplitN(url, "/", 4)
		return request(t, method, strings.Join(u[:3], "/")+loc, token, body)
	}
	return resp.StatusCode
}

func post(t *testing.T, url, token, body string) int { return request(t, "POST", url, token, body) }

func listNames(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		out[e.Name()] = ""
	}
	return out
}

func keysOf(m map[string]string) map[string]string {
	out := map[string]string{}
	for k := range m {
		out[k] = ""
	}
	return out
}

// checkModes: every file under the roots is 0640 and every directory 0750.
func checkModes(t *testing.T, roots ...string) {
	t.Helper()
	files := 0
	for _, root := range roots {
		filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
			if err != nil {
				t.Error(err)
				return nil
			}
			want := os.FileMode(0o640)
			if fi.IsDir() {
				want = 0o750
			}
			if fi.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
			}
			if strings.HasSuffix(path, ".rrd") {
				files++
			}
			return nil
		})
	}
	if files == 0 {
		t.Error("no RRD file checked")
	}
}

// TestAdminListensOnLoopbackByDefault: without --admin-listen the admin
// server is reachable from this host only.
func TestAdminListensOnLoopbackByDefault(t *testing.T) {
	host, _, err := net.SplitHostPort(defaultConfig().adminListen)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Fatalf("default --admin-listen %q is not a loopback address", defaultConfig().adminListen)
	}
}
