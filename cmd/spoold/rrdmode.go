package main

import (
	"fmt"
	"os"

	"github.com/spoold/spoold/rrdwriter"
)

// rrdFileMode is the mode of the RRD files spoold creates.
const rrdFileMode = 0o640

// privateRRD is the librrd boundary with RRD files made rrdFileMode after
// creation: librrd (1.7) creates them 0644 whatever the umask.
type privateRRD struct{ rrdwriter.RRD }

func (r privateRRD) Create(path string, p rrdwriter.Profile, start int64) error {
	if err := r.RRD.Create(path, p, start); err != nil {
		return err
	}
	if err := os.Chmod(path, rrdFileMode); err != nil {
		return fmt.Errorf("restrict rrd file mode %s: %w", path, err)
	}
	return nil
}
