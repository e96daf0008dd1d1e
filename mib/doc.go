// Package mib owns MIB names: it turns what a profile writes for an OID
// ("IF-MIB::ifHCInOctets", "ifHCInOctets", "sysUpTime.0", or numeric)
// into a numeric OID, and an OID back into a name for people (spoold walk,
// error messages). It knows each object's syntax and enumeration labels,
// so a filter may say ifOperStatus=up or hrStorageType=hrStorageFixedDisk.
//
// The objects the built-in profiles use (SNMPv2-MIB's system group,
// IF-MIB's ifTable and ifXTable, HOST-RESOURCES-MIB, UCD-SNMP-MIB) are a
// Go table in builtin.go: they resolve with no MIB file on the machine.
// An operator's MIB files (--mib-dir) are parsed with
// github.com/sleepinggenius2/gosmi; the base modules that nearly every
// MIB imports (SNMPv2-SMI, SNMPv2-TC, SNMPv2-CONF, HCNUM-TC) come with
// this package, in base/, written for it, and the built-in modules' text
// is generated from the table (gen.go), so vendor MIBs that import from
// them load on a machine without the IETF files (Debian ships none). A
// file of the same module name in a MIB directory takes precedence.
//
// gosmi keeps its modules in one global of the process, like libsmi; Load
// uses it under a package lock and copies what it needs out, so a
// *Resolver never touches gosmi: it is immutable and safe for concurrent
// use, and a reload (SIGHUP) is a new Load whose Resolver replaces the
// old one. A process keeps one LoadCache across its loads: the metrics of
// what did not load, and the last load, returned again while no file has
// changed.
//
// The package starts no goroutines.
package mib
