package doctor

import (
	"github.com/spoold/spoold/internal/confine"
)

// checkLandlock reports whether the daemon would confine its file access
// with Landlock, as st (confine.Probe of its --landlock) says; nil skips
// the check.
func checkLandlock(r *Report, st *confine.Status) {
	if st == nil {
		return
	}
	f := Finding{Check: "landlock", Severity: OK, Found: "the daemon's file access: " + st.String(),
		Why: "confined, the kernel refuses the daemon any write outside its spool and RRD directories (and any read outside what its flags and librrd need), whichever code path makes it"}
	switch st.Mode {
	case confine.Off:
		f.Severity, f.Fix = Warn, "start spoold without --landlock=false"
	case confine.Unsupported:
		f.Severity, f.Fix = Warn, "boot a kernel of Linux 5.19 or later built with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= parameter (cat /sys/kernel/security/lsm lists the active ones)"
	}
	r.add(f)
}
