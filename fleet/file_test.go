package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails t if f has not returned after a generous deadline: the
// defect it guards against is a read that never returns.
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still reading after 10s: the read blocks")
		return nil
	}
}

// TestFilesMustBeRegularAndBounded points a secret, the targets file and
// the profiles file at things that are not small regular files: each is
// refused at once, naming the file. A symlink to a regular file is an
// operator's normal setup and is followed.
func TestFilesMustBeRegularAndBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, maxSecretFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte(secretWord+"\n"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	targets := func(community string) string {
		p := filepath.Join(dir, "targets-"+filepath.Base(community))
		os.WriteFile(p, []byte("r1 192.0.2.1 profile=host community=file:"+community+"\n"), 0o600)
		return p
	}
	for _, tc := range []struct {
		name, targets, profiles, want, bad string
	}{
		{"secret is a FIFO", targets(fifo), "", "not a regular file", fifo},
		{"secret is /dev/zero", targets("/dev/zero"), "", "not a regular file", "/dev/zero"},
		{"secret is a directory", targets(dir), "", "not a regular file", dir},
		{"secret is too large", targets(big), "", "larger than", big},
		{"targets file is a FIFO", fifo, "", "not a regular file", fifo},
		{"profiles file is a FIFO", targets(secret), fifo, "not a regular file", fifo},
		{"secret is a symlink to a regular file", targets(link), "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := within(t, func() error {
				var ps Profiles
				if tc.profiles != "" {
					var err error
					if ps, err = LoadProfiles(tc.profiles); err != nil {
						return err
					}
				}
				ts, err := LoadTargets(tc.targets, ps)
				if err == nil && ts[0].Community.Reveal() != secretWord {
					return errors.New("wrong secret read")
				}
				return err
			})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.bad) {
				t.Fatalf("error %v does not name %s", err, tc.bad)
			}
		})
	}
}
