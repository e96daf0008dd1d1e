package rrdwriter

// Procs returns how many goroutines a process that runs this writer should
// let run Go code at once (GOMAXPROCS), given the CPUs it may use: the CPUs
// plus Writers. A writer waits for the disk inside a system call (a page of
// a cold RRD file read, a segment's unlink that waits for a TRIM on a file
// system mounted with online discard), and so does each of its Writers
// removal lanes; a goroutine in such a call keeps its P until the
// runtime's monitor takes it back, tens of microseconds later, and with
// GOMAXPROCS at the CPU count two such waits leave both CPUs idle while
// other files wait to be updated. With a P for each writer besides one for
// each CPU, the CPUs stay busy while writers wait (docs/tuning.md has the
// measurements).
func (o Options) Procs(cpus int) int {
	return max(cpus, 1) + max(o.Writers, 0)
}
