package doctor

import "fmt"

// Run examines the machine for o and returns the findings. An error means
// the examination itself could not be made (an option is invalid, mountinfo
// unreadable); what it finds wrong are findings of severity Warn.
func Run(o Options) (Report, error) {
	if o.SpoolDir == "" || o.RRDDir == "" {
		return Report{}, fmt.Errorf("doctor: spool and RRD directories must be set")
	}
	if o.ProcDir == "" {
		o.ProcDir = DefaultOptions().ProcDir
	}
	if o.SysDir == "" {
		o.SysDir = DefaultOptions().SysDir
	}
	mounts, err := readMounts(o.ProcDir)
	if err != nil {
		return Report{}, fmt.Errorf("doctor: %w", err)
	}
	vols, err := volumes([]string{o.SpoolDir, o.RRDDir}, mounts)
	if err != nil {
		return Report{}, fmt.Errorf("doctor: %w", err)
	}
	r := Report{Findings: []Finding{}}
	for _, v := range vols {
		checkReadAhead(&r, v)
		checkMount(&r, v, o.SysDir)
		checkSpace(&r, v)
	}
	checkRRDDir(&r, o.RRDDir, o.CheckRRDDir)
	checkNofile(&r, o)
	checkLandlock(&r, o.Landlock)
	checkSpool(&r, o)
	checkUpdate(&r, o)
	return r, nil
}
