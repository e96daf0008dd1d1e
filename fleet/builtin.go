package fleet

import (
	"strings"
	"sync"

	"github.com/spoold/spoold/mib"
)

// builtinText declares the built-in profiles in the profiles file syntax
// (docs/profiles.md lists them); if-mib:<n> is built by IfMIBProfile.
//
// host keeps its scalar keys of before tables (the target's own file, the
// same data sources); its tables add files under <target>/storage/ and
// <target>/cpu/, so an existing file needs no migration.
const builtinText = `
profile host
  ds uptime      sysUpTime.0          GAUGE   0 U
  ds cpu_user    ssCpuRawUser.0       COUNTER 0 U
  ds cpu_system  ssCpuRawSystem.0     COUNTER 0 U
  ds cpu_idle    ssCpuRawIdle.0       COUNTER 0 U
  ds load1       laLoadInt.1          GAUGE   0 U
  ds load5       laLoadInt.2          GAUGE   0 U
  ds load15      laLoadInt.3          GAUGE   0 U
  ds mem_total   memTotalReal.0       GAUGE   0 U
  ds mem_avail   memAvailReal.0       GAUGE   0 U
  ds mem_buffer  memBuffer.0          GAUGE   0 U
  ds mem_cached  memCached.0          GAUGE   0 U
  ds processes   hrSystemProcesses.0  GAUGE   0 U
  ds users       hrSystemNumUsers.0   GAUGE   0 U
  # HOST-RESOURCES-MIB hrStorageTable: one file per storage area, by hrStorageDescr.
  table storage
    subdir   storage
    index    hrStorageIndex
    instance hrStorageDescr
    column units hrStorageAllocationUnits GAUGE 0 U
    column size  hrStorageSize            GAUGE 0 U
    column used  hrStorageUsed            GAUGE 0 U
  # hrProcessorTable: the load of each processor that has one, by its index.
  table cpu
    subdir   cpu
    index    hrProcessorLoad
    instance index
    column load hrProcessorLoad GAUGE 0 100

profile if-mib
  # IF-MIB: every interface, one file each, named by ifName (ifDescr if it has none).
  table if
    index    ifIndex
    instance ifName|ifDescr
    alias    ifAlias
    column in      ifHCInOctets|ifInOctets         COUNTER 0 U
    column out     ifHCOutOctets|ifOutOctets       COUNTER 0 U
    column inpkt   ifHCInUcastPkts|ifInUcastPkts   COUNTER 0 U
    column outpkt  ifHCOutUcastPkts|ifOutUcastPkts COUNTER 0 U
    column inerr   ifInErrors     COUNTER 0 U
    column outerr  ifOutErrors    COUNTER 0 U
    column indisc  ifInDiscards   COUNTER 0 U
    column outdisc ifOutDiscards  COUNTER 0 U
    column speed   ifHighSpeed    GAUGE   0 U
    column oper    ifOperStatus   GAUGE   1 7
`

// builtinProfiles returns the parsed built-in profiles, shared (a Profile
// is immutable).
func builtinProfiles() Profiles {
	builtins.once.Do(func() {
		pp := &profileParser{file: "built-in profiles", ps: Profiles{}, where: map[string]int{}, builtin: true, res: mib.Builtin()}
		ps, err := pp.parse(strings.NewReader(builtinText))
		if err != nil {
			panic("fleet: " + err.Error()) // TestBuiltinProfiles parses them
		}
		builtins.ps = ps
	})
	return builtins.ps
}

var builtins struct {
	once sync.Once
	ps   Profiles
}

// HostProfile returns the built-in profile "host": CPU time counters, load
// averages, memory and process counts from UCD-SNMP-MIB and
// HOST-RESOURCES-MIB as scalars, and the storage and processor tables, as
// net-snmp's snmpd serves them.
func HostProfile() *Profile { return builtinProfiles()["host"] }

// IfMIBTableProfile returns the built-in profile "if-mib": every interface
// of IF-MIB's ifTable as its own key, named by ifName (or ifDescr).
func IfMIBTableProfile() *Profile { return builtinProfiles()["if-mib"] }
