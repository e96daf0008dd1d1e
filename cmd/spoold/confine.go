package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/rrdcached"
)

// confineOptions are the paths the daemon touches once it runs, from its
// flags (--landlock): the spool and --rrd-dir read-write; the directories
// of --targets, --profiles and the "file:" secrets the targets name
// (so that a file an editor replaced is read on SIGHUP) and --mib-dir
// read-only; the pid file read, and removed at
// exit with the --listen unix sockets (bound before, so only their removal
// is allowed); the system files confine.DefaultOptions lists and the
// user's fontconfig cache and configuration, for graphs.
func (c *config) confineOptions(secrets []string) confine.Options {
	o := confine.DefaultOptions()
	o.Enabled = c.landlock
	o.ReadWrite = []string{c.spool.Dir, c.writer.Dir}
	for _, f := range append([]string{c.targetsFile, c.profilesFile}, secrets...) {
		if f != "" {
			o.ReadOnly = append(o.ReadOnly, filepath.Dir(f))
		}
	}
	o.ReadOnly = append(o.ReadOnly, c.mibDirs...)
	if c.pidFile != "" {
		o.ReadOnly = append(o.ReadOnly, c.pidFile)
		o.RemoveIn = append(o.RemoveIn, filepath.Dir(c.pidFile))
	}
	for _, l := range c.protocol.server.Listeners {
		if network, path, err := rrdcached.ParseSpec(l.Spec); err == nil && network == "unix" {
			o.RemoveIn = append(o.RemoveIn, filepath.Dir(path))
		}
	}
	if dir, err := os.UserCacheDir(); err == nil {
		o.System = append(o.System, filepath.Join(dir, "fontconfig"))
	}
	if dir, err := os.UserConfigDir(); err == nil {
		o.System = append(o.System, filepath.Join(dir, "fontconfig"))
	}
	return o
}

// confine restricts the daemon's file access to confineOptions once every
// file it opens outside them is open (the spool lock, the sockets, the pid
// file), before its loops start.
func (d *daemon) confine() error {
	st, err := confine.Apply(d.cfg.confineOptions(d.fleet.Get().SecretFiles))
	if err != nil {
		return fmt.Errorf("confine the daemon to its directories (--landlock): %w", err)
	}
	d.landlock.Store(&st)
	if st.Mode == confine.Unsupported {
		d.log.Warn("landlock unavailable: the daemon's file access is not restricted", "reason", st.Reason)
	}
	return nil
}
