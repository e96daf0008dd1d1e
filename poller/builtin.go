package poller

import (
	"strings"
	"sync"
)

// builtinText declares the built-in profiles in the profiles file syntax
// (docs/configuration.md lists them); if-mib:<n> is built by IfMIBProfile.
//
// host keeps its scalar keys of before tables (the target's own file, the
// same data sources); its tables add files under <target>/storage/ and
// <target>/cpu/, so an existing file needs no migration.
const builtinText = `
profile host
  ds uptime      1.3.6.1.2.1.1.3.0          GAUGE   0 U
  ds cpu_user    1.3.6.1.4.1.2021.11.50.0   COUNTER 0 U
  ds cpu_system  1.3.6.1.4.1.2021.11.52.0   COUNTER 0 U
  ds cpu_idle    1.3.6.1.4.1.2021.11.53.0   COUNTER 0 U
  ds load1       1.3.6.1.4.1.2021.10.1.5.1  GAUGE   0 U
  ds load5       1.3.6.1.4.1.2021.10.1.5.2  GAUGE   0 U
  ds load15      1.3.6.1.4.1.2021.10.1.5.3  GAUGE   0 U
  ds mem_total   1.3.6.1.4.1.2021.4.5.0     GAUGE   0 U
  ds mem_avail   1.3.6.1.4.1.2021.4.6.0     GAUGE   0 U
  ds mem_buffer  1.3.6.1.4.1.2021.4.14.0    GAUGE   0 U
  ds mem_cached  1.3.6.1.4.1.2021.4.15.0    GAUGE   0 U
  ds processes   1.3.6.1.2.1.25.1.6.0       GAUGE   0 U
  ds users       1.3.6.1.2.1.25.1.5.0       GAUGE   0 U
  # HOST-RESOURCES-MIB hrStorageTable: one file per storage area, by hrStorageDescr.
  table storage
    subdir   storage
    index    1.3.6.1.2.1.25.2.3.1.1
    instance 1.3.6.1.2.1.25.2.3.1.3
    column units 1.3.6.1.2.1.25.2.3.1.4 GAUGE 0 U
    column size  1.3.6.1.2.1.25.2.3.1.5 GAUGE 0 U
    column used  1.3.6.1.2.1.25.2.3.1.6 GAUGE 0 U
  # hrProcessorTable: the load of each processor, by its index.
  table cpu
    subdir   cpu
    index    1.3.6.1.2.1.25.3.3.1.2
    instance index
    column load 1.3.6.1.2.1.25.3.3.1.2 GAUGE 0 100

profile if-mib
  # IF-MIB: every interface, one file each, named by ifName (ifDescr if it has none).
  table if
    index    1.3.6.1.2.1.2.2.1.1
    instance ifName|ifDescr
    column in      1.3.6.1.2.1.31.1.1.1.6|1.3.6.1.2.1.2.2.1.10   COUNTER 0 U
    column out     1.3.6.1.2.1.31.1.1.1.10|1.3.6.1.2.1.2.2.1.16  COUNTER 0 U
    column inpkt   1.3.6.1.2.1.31.1.1.1.7|1.3.6.1.2.1.2.2.1.11   COUNTER 0 U
    column outpkt  1.3.6.1.2.1.31.1.1.1.11|1.3.6.1.2.1.2.2.1.17  COUNTER 0 U
    column inerr   1.3.6.1.2.1.2.2.1.14   COUNTER 0 U
    column outerr  1.3.6.1.2.1.2.2.1.20   COUNTER 0 U
    column indisc  1.3.6.1.2.1.2.2.1.13   COUNTER 0 U
    column outdisc 1.3.6.1.2.1.2.2.1.19   COUNTER 0 U
    column speed   1.3.6.1.2.1.31.1.1.1.15 GAUGE  0 U
    column oper    1.3.6.1.2.1.2.2.1.8    GAUGE   1 7
`

// builtinProfiles returns the parsed built-in profiles, shared (a Profile
// is immutable).
func builtinProfiles() Profiles {
	builtins.once.Do(func() {
		pp := &profileParser{file: "built-in profiles", ps: Profiles{}, where: map[string]int{}, builtin: true}
		ps, err := pp.parse(strings.NewReader(builtinText))
		if err != nil {
			panic("poller: " + err.Error()) // TestBuiltinProfiles parses them
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
