// Package confine restricts the process's own file access with Landlock
// (Linux 5.13 and later), as systemd's ReadWritePaths= restricts a unit's:
// once Apply returns, every open, create, rename, link and removal of a
// file outside the paths its Options name is refused by the kernel with
// EACCES, on every thread, whichever code path makes it. A file opened
// before Apply stays usable; Landlock checks at open time.
//
// Only file-system rights are restricted. The network (SNMP, the
// rrdcached protocol, --forward) is not, nor connecting to unix sockets by
// their path, nor signals: the daemon needs them and the paths it writes
// are what this package guards.
//
// The kernel's Landlock ABI decides what can be restricted: below ABI 2
// (Linux 5.19) a file cannot be renamed from one directory to another under
// Landlock at all, which the spool's quarantine does, so nothing is
// restricted there (Unsupported); below ABI 3 truncation, below ABI 5
// ioctls on device files are left unrestricted and Status names them. The
// restriction is best effort in that sense only: a path that cannot be
// added is an error, never a silently wider grant.
//
// Package confine starts no goroutines. On kernels below ABI 8 the
// restriction is applied to every thread of the process by signalling each
// (libpsx, through go-landlock); from ABI 8 by the kernel itself.
package confine
