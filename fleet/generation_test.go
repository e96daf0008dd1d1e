package fleet_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/rrd"
)

// TestGenerationLayouts: a generation loaded from a profiles and a targets
// file gives each key of its targets the RRD layout the writer creates
// its file with (the profile's data sources, a heartbeat of two steps,
// the step's default RRAs), and none to a key no target has; the keys of
// one profile's table share theirs, made once; Current swaps generations
// whole.
func TestGenerationLayouts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	files := fleet.Files{
		Profiles: write("profiles.conf", "profile edge\n  ds up sysUpTime.0 GAUGE 0 U\n  table if\n    index ifIndex\n    instance ifName\n    column in ifHCInOctets COUNTER 0 U\n"),
		Targets:  write("targets.conf", "r1 192.0.2.1 profile=edge community=public\nr2 192.0.2.2 profile=edge community=public\n"),
		Step:     time.Minute,
	}
	g, err := fleet.Load(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Target("r1"); !ok || len(g.Targets) != 2 || g.MIBErr != nil {
		t.Fatalf("targets %v, MIB error %v", g.Targets, g.MIBErr)
	}
	keys := map[string]string{"r1": "up", "r1/Gi0_2F1": "in", "r2/Gi0_2F1": "in", "r2/Te1_2F1": "in", "r2": "up"}
	for key, ds := range keys {
		l, ok := g.Layout(key)
		if !ok || len(l.DS) != 1 || l.DS[0].Name != ds || l.DS[0].Heartbeat != 2*time.Minute || l.Step != time.Minute || len(l.RRAs) != len(rrd.DefaultRRAs(time.Minute)) {
			t.Errorf("Layout(%q) = %+v, %v; want data source %s, step 1m, heartbeat 2m", key, l, ok, ds)
		}
		if err := l.Validate(); err != nil {
			t.Errorf("Layout(%q): %v", key, err)
		}
	}
	for key := range keys {
		if n := testing.AllocsPerRun(10, func() { g.Layout(key) }); n != 0 {
			t.Errorf("Layout(%q) allocates %v times once made; want its profile's layout, shared", key, n)
		}
	}
	for _, key := range []string{"r3", "r3/x", "/abs"} {
		if l, ok := g.Layout(key); ok {
			t.Errorf("Layout(%q) = %+v: no target has it", key, l)
		}
	}
	var cur fleet.Current
	cur.Set(g)
	if _, ok := cur.Layout("r1"); !ok || cur.Get() != g {
		t.Fatal("Current does not hold the generation set")
	}
}

// TestGenerationSecretFiles: a generation names each "file:" secret its
// targets file read, once, so that the daemon may keep reading them on
// SIGHUP when it confines its file access.
func TestGenerationSecretFiles(t *testing.T) {
	dir := t.TempDir()
	community, auth := filepath.Join(dir, "community"), filepath.Join(dir, "secrets", "auth")
	os.Mkdir(filepath.Dir(auth), 0o700)
	for _, p := range []string{community, auth} {
		if err := os.WriteFile(p, []byte("s3cret-value\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	targets := filepath.Join(dir, "targets.conf")
	text := "defaults profile=host\nr1 192.0.2.1 community=file:" + community + "\nr2 192.0.2.2 community=file:" + community + "\n" +
		"r3 192.0.2.3 version=3 user=u auth=SHA auth-pass=file:" + auth + "\nr4 192.0.2.4 community=public\n"
	if err := os.WriteFile(targets, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := fleet.Load(fleet.Files{Targets: targets, Step: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{community, auth}; !slices.Equal(g.SecretFiles, want) {
		t.Errorf("SecretFiles %q, want %q", g.SecretFiles, want)
	}
}
