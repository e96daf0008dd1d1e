package mib

import (
	"fmt"
	"sort"
	"sync"
)

// builtinSyntax is the base type, named numbers and defining module of
// each syntax the built-in objects use: the SMI's own types and the
// textual conventions of SNMPv2-TC, HCNUM-TC, IF-MIB, IANAifType-MIB,
// HOST-RESOURCES-MIB and UCD-SNMP-MIB ("" for ASN.1's own). An object's
// inline enumeration ("INTEGER") is its own.
var builtinSyntax = map[string]struct{ module, base, enums string }{
	"INTEGER":                    {"", BaseInteger, ""},
	"OBJECT IDENTIFIER":          {"", BaseOID, ""},
	"Integer32":                  {"SNMPv2-SMI", BaseInteger, ""},
	"Unsigned32":                 {"SNMPv2-SMI", BaseGauge32, ""},
	"Counter32":                  {"SNMPv2-SMI", BaseCounter32, ""},
	"Counter64":                  {"SNMPv2-SMI", BaseCounter64, ""},
	"Gauge32":                    {"SNMPv2-SMI", BaseGauge32, ""},
	"TimeTicks":                  {"SNMPv2-SMI", BaseTimeTicks, ""},
	"IpAddress":                  {"SNMPv2-SMI", BaseIPAddress, ""},
	"Opaque":                     {"SNMPv2-SMI", BaseOpaque, ""},
	"DisplayString":              {"SNMPv2-TC", BaseOctetString, ""},
	"PhysAddress":                {"SNMPv2-TC", BaseOctetString, ""},
	"DateAndTime":                {"SNMPv2-TC", BaseOctetString, ""},
	"TimeStamp":                  {"SNMPv2-TC", BaseTimeTicks, ""},
	"TruthValue":                 {"SNMPv2-TC", BaseInteger, "true(1), false(2)"},
	"AutonomousType":             {"SNMPv2-TC", BaseOID, ""},
	"CounterBasedGauge64":        {"HCNUM-TC", BaseCounter64, ""},
	"InterfaceIndex":             {"IF-MIB", BaseInteger, ""},
	"InterfaceIndexOrZero":       {"IF-MIB", BaseInteger, ""},
	"IANAifType":                 {"IANAifType-MIB", BaseInteger, ianaIfTypes},
	"KBytes":                     {"HOST-RESOURCES-MIB", BaseInteger, ""},
	"ProductID":                  {"HOST-RESOURCES-MIB", BaseOID, ""},
	"InternationalDisplayString": {"HOST-RESOURCES-MIB", BaseOctetString, ""},
	"UCDErrorFlag":               {"UCD-SNMP-MIB", BaseInteger, "noError(0), error(1)"},
	"Float":                      {"UCD-SNMP-MIB", BaseOpaque, ""},
}

// builtinDef is one object of the built-in table. enums is set only for
// an inline enumeration (syntax "INTEGER").
type builtinDef struct {
	kind                Kind
	name, oid           string
	syntax, inlineEnums string
}

// builtinModules are the objects that resolve with no MIB file on the
// machine: what the built-in profiles poll, discover and filter on. The
// OIDs, syntaxes and labels are those of the modules' RFCs (3418, 2863,
// 2790) and of net-snmp's UCD-SNMP-MIB; the tests check them against
// net-snmp's and pysnmp's copies of those modules where the machine has
// them.
var builtinModules = []struct {
	module string
	defs   []builtinDef
}{
	{"SNMPv2-SMI", []builtinDef{
		{Node, "iso", "1", "", ""},
		{Node, "org", "1.3", "", ""},
		{Node, "dod", "1.3.6", "", ""},
		{Node, "internet", "1.3.6.1", "", ""},
		{Node, "directory", "1.3.6.1.1", "", ""},
		{Node, "mgmt", "1.3.6.1.2", "", ""},
		{Node, "mib-2", "1.3.6.1.2.1", "", ""},
		{Node, "transmission", "1.3.6.1.2.1.10", "", ""},
		{Node, "experimental", "1.3.6.1.3", "", ""},
		{Node, "private", "1.3.6.1.4", "", ""},
		{Node, "enterprises", "1.3.6.1.4.1", "", ""},
		{Node, "security", "1.3.6.1.5", "", ""},
		{Node, "snmpV2", "1.3.6.1.6", "", ""},
		{Node, "snmpDomains", "1.3.6.1.6.1", "", ""},
		{Node, "snmpProxys", "1.3.6.1.6.2", "", ""},
		{Node, "snmpModules", "1.3.6.1.6.3", "", ""},
		{Node, "zeroDotZero", "0.0", "", ""},
	}},
	{"SNMPv2-MIB", []builtinDef{
		{Node, "system", "1.3.6.1.2.1.1", "", ""},
		{Scalar, "sysDescr", "1.3.6.1.2.1.1.1", "DisplayString", ""},
		{Scalar, "sysObjectID", "1.3.6.1.2.1.1.2", "OBJECT IDENTIFIER", ""},
		{Scalar, "sysUpTime", "1.3.6.1.2.1.1.3", "TimeTicks", ""},
		{Scalar, "sysContact", "1.3.6.1.2.1.1.4", "DisplayString", ""},
		{Scalar, "sysName", "1.3.6.1.2.1.1.5", "DisplayString", ""},
		{Scalar, "sysLocation", "1.3.6.1.2.1.1.6", "DisplayString", ""},
		{Scalar, "sysServices", "1.3.6.1.2.1.1.7", "INTEGER", ""},
		{Scalar, "sysORLastChange", "1.3.6.1.2.1.1.8", "TimeStamp", ""},
		{Table, "sysORTable", "1.3.6.1.2.1.1.9", "", ""},
		{Row, "sysOREntry", "1.3.6.1.2.1.1.9.1", "", ""},
		{Column, "sysORIndex", "1.3.6.1.2.1.1.9.1.1", "INTEGER", ""},
		{Column, "sysORID", "1.3.6.1.2.1.1.9.1.2", "OBJECT IDENTIFIER", ""},
		{Column, "sysORDescr", "1.3.6.1.2.1.1.9.1.3", "DisplayString", ""},
		{Column, "sysORUpTime", "1.3.6.1.2.1.1.9.1.4", "TimeStamp", ""},
		{Node, "snmp", "1.3.6.1.2.1.11", "", ""},
		{Scalar, "snmpInPkts", "1.3.6.1.2.1.11.1", "Counter32", ""},
		{Scalar, "snmpOutPkts", "1.3.6.1.2.1.11.2", "Counter32", ""},
		{Node, "snmpMIB", "1.3.6.1.6.3.1", "", ""},
		{Node, "snmpMIBObjects", "1.3.6.1.6.3.1.1", "", ""},
		{Node, "snmpTrap", "1.3.6.1.6.3.1.1.4", "", ""},
		{Scalar, "snmpTrapOID", "1.3.6.1.6.3.1.1.4.1", "OBJECT IDENTIFIER", ""},
	}},
	{"IF-MIB", []builtinDef{
		{Node, "interfaces", "1.3.6.1.2.1.2", "", ""},
		{Scalar, "ifNumber", "1.3.6.1.2.1.2.1", "Integer32", ""},
		{Table, "ifTable", "1.3.6.1.2.1.2.2", "", ""},
		{Row, "ifEntry", "1.3.6.1.2.1.2.2.1", "", ""},
		{Column, "ifIndex", "1.3.6.1.2.1.2.2.1.1", "InterfaceIndex", ""},
		{Column, "ifDescr", "1.3.6.1.2.1.2.2.1.2", "DisplayString", ""},
		{Column, "ifType", "1.3.6.1.2.1.2.2.1.3", "IANAifType", ""},
		{Column, "ifMtu", "1.3.6.1.2.1.2.2.1.4", "Integer32", ""},
		{Column, "ifSpeed", "1.3.6.1.2.1.2.2.1.5", "Gauge32", ""},
		{Column, "ifPhysAddress", "1.3.6.1.2.1.2.2.1.6", "PhysAddress", ""},
		{Column, "ifAdminStatus", "1.3.6.1.2.1.2.2.1.7", "INTEGER", "up(1), down(2), testing(3)"},
		{Column, "ifOperStatus", "1.3.6.1.2.1.2.2.1.8", "INTEGER",
			"up(1), down(2), testing(3), unknown(4), dormant(5), notPresent(6), lowerLayerDown(7)"},
		{Column, "ifLastChange", "1.3.6.1.2.1.2.2.1.9", "TimeTicks", ""},
		{Column, "ifInOctets", "1.3.6.1.2.1.2.2.1.10", "Counter32", ""},
		{Column, "ifInUcastPkts", "1.3.6.1.2.1.2.2.1.11", "Counter32", ""},
		{Column, "ifInNUcastPkts", "1.3.6.1.2.1.2.2.1.12", "Counter32", ""},
		{Column, "ifInDiscards", "1.3.6.1.2.1.2.2.1.13", "Counter32", ""},
		{Column, "ifInErrors", "1.3.6.1.2.1.2.2.1.14", "Counter32", ""},
		{Column, "ifInUnknownProtos", "1.3.6.1.2.1.2.2.1.15", "Counter32", ""},
		{Column, "ifOutOctets", "1.3.6.1.2.1.2.2.1.16", "Counter32", ""},
		{Column, "ifOutUcastPkts", "1.3.6.1.2.1.2.2.1.17", "Counter32", ""},
		{Column, "ifOutNUcastPkts", "1.3.6.1.2.1.2.2.1.18", "Counter32", ""},
		{Column, "ifOutDiscards", "1.3.6.1.2.1.2.2.1.19", "Counter32", ""},
		{Column, "ifOutErrors", "1.3.6.1.2.1.2.2.1.20", "Counter32", ""},
		{Column, "ifOutQLen", "1.3.6.1.2.1.2.2.1.21", "Gauge32", ""},
		{Column, "ifSpecific", "1.3.6.1.2.1.2.2.1.22", "OBJECT IDENTIFIER", ""},
		{Node, "ifMIB", "1.3.6.1.2.1.31", "", ""},
		{Node, "ifMIBObjects", "1.3.6.1.2.1.31.1", "", ""},
		{Table, "ifXTable", "1.3.6.1.2.1.31.1.1", "", ""},
		{Row, "ifXEntry", "1.3.6.1.2.1.31.1.1.1", "", ""},
		{Column, "ifName", "1.3.6.1.2.1.31.1.1.1.1", "DisplayString", ""},
		{Column, "ifInMulticastPkts", "1.3.6.1.2.1.31.1.1.1.2", "Counter32", ""},
		{Column, "ifInBroadcastPkts", "1.3.6.1.2.1.31.1.1.1.3", "Counter32", ""},
		{Column, "ifOutMulticastPkts", "1.3.6.1.2.1.31.1.1.1.4", "Counter32", ""},
		{Column, "ifOutBroadcastPkts", "1.3.6.1.2.1.31.1.1.1.5", "Counter32", ""},
		{Column, "ifHCInOctets", "1.3.6.1.2.1.31.1.1.1.6", "Counter64", ""},
		{Column, "ifHCInUcastPkts", "1.3.6.1.2.1.31.1.1.1.7", "Counter64", ""},
		{Column, "ifHCInMulticastPkts", "1.3.6.1.2.1.31.1.1.1.8", "Counter64", ""},
		{Column, "ifHCInBroadcastPkts", "1.3.6.1.2.1.31.1.1.1.9", "Counter64", ""},
		{Column, "ifHCOutOctets", "1.3.6.1.2.1.31.1.1.1.10", "Counter64", ""},
		{Column, "ifHCOutUcastPkts", "1.3.6.1.2.1.31.1.1.1.11", "Counter64", ""},
		{Column, "ifHCOutMulticastPkts", "1.3.6.1.2.1.31.1.1.1.12", "Counter64", ""},
		{Column, "ifHCOutBroadcastPkts", "1.3.6.1.2.1.31.1.1.1.13", "Counter64", ""},
		{Column, "ifLinkUpDownTrapEnable", "1.3.6.1.2.1.31.1.1.1.14", "INTEGER", "enabled(1), disabled(2)"},
		{Column, "ifHighSpeed", "1.3.6.1.2.1.31.1.1.1.15", "Gauge32", ""},
		{Column, "ifPromiscuousMode", "1.3.6.1.2.1.31.1.1.1.16", "TruthValue", ""},
		{Column, "ifConnectorPresent", "1.3.6.1.2.1.31.1.1.1.17", "TruthValue", ""},
		{Column, "ifAlias", "1.3.6.1.2.1.31.1.1.1.18", "DisplayString", ""},
		{Column, "ifCounterDiscontinuityTime", "1.3.6.1.2.1.31.1.1.1.19", "TimeStamp", ""},
		{Scalar, "ifTableLastChange", "1.3.6.1.2.1.31.1.5", "TimeTicks", ""},
	}},
	{"HOST-RESOURCES-MIB", []builtinDef{
		{Node, "host", "1.3.6.1.2.1.25", "", ""},
		{Node, "hrSystem", "1.3.6.1.2.1.25.1", "", ""},
		{Scalar, "hrSystemUptime", "1.3.6.1.2.1.25.1.1", "TimeTicks", ""},
		{Scalar, "hrSystemDate", "1.3.6.1.2.1.25.1.2", "DateAndTime", ""},
		{Scalar, "hrSystemNumUsers", "1.3.6.1.2.1.25.1.5", "Gauge32", ""},
		{Scalar, "hrSystemProcesses", "1.3.6.1.2.1.25.1.6", "Gauge32", ""},
		{Scalar, "hrSystemMaxProcesses", "1.3.6.1.2.1.25.1.7", "Integer32", ""},
		{Node, "hrStorage", "1.3.6.1.2.1.25.2", "", ""},
		{Node, "hrStorageTypes", "1.3.6.1.2.1.25.2.1", "", ""},
		{Scalar, "hrMemorySize", "1.3.6.1.2.1.25.2.2", "KBytes", ""},
		{Table, "hrStorageTable", "1.3.6.1.2.1.25.2.3", "", ""},
		{Row, "hrStorageEntry", "1.3.6.1.2.1.25.2.3.1", "", ""},
		{Column, "hrStorageIndex", "1.3.6.1.2.1.25.2.3.1.1", "Integer32", ""},
		{Column, "hrStorageType", "1.3.6.1.2.1.25.2.3.1.2", "AutonomousType", ""},
		{Column, "hrStorageDescr", "1.3.6.1.2.1.25.2.3.1.3", "DisplayString", ""},
		{Column, "hrStorageAllocationUnits", "1.3.6.1.2.1.25.2.3.1.4", "Integer32", ""},
		{Column, "hrStorageSize", "1.3.6.1.2.1.25.2.3.1.5", "Integer32", ""},
		{Column, "hrStorageUsed", "1.3.6.1.2.1.25.2.3.1.6", "Integer32", ""},
		{Column, "hrStorageAllocationFailures", "1.3.6.1.2.1.25.2.3.1.7", "Counter32", ""},
		{Node, "hrDevice", "1.3.6.1.2.1.25.3", "", ""},
		{Node, "hrDeviceTypes", "1.3.6.1.2.1.25.3.1", "", ""},
		{Table, "hrDeviceTable", "1.3.6.1.2.1.25.3.2", "", ""},
		{Row, "hrDeviceEntry", "1.3.6.1.2.1.25.3.2.1", "", ""},
		{Column, "hrDeviceIndex", "1.3.6.1.2.1.25.3.2.1.1", "Integer32", ""},
		{Column, "hrDeviceType", "1.3.6.1.2.1.25.3.2.1.2", "AutonomousType", ""},
		{Column, "hrDeviceDescr", "1.3.6.1.2.1.25.3.2.1.3", "DisplayString", ""},
		{Column, "hrDeviceID", "1.3.6.1.2.1.25.3.2.1.4", "ProductID", ""},
		{Column, "hrDeviceStatus", "1.3.6.1.2.1.25.3.2.1.5", "INTEGER",
			"unknown(1), running(2), warning(3), testing(4), down(5)"},
		{Column, "hrDeviceErrors", "1.3.6.1.2.1.25.3.2.1.6", "Counter32", ""},
		{Table, "hrProcessorTable", "1.3.6.1.2.1.25.3.3", "", ""},
		{Row, "hrProcessorEntry", "1.3.6.1.2.1.25.3.3.1", "", ""},
		{Column, "hrProcessorFrwID", "1.3.6.1.2.1.25.3.3.1.1", "ProductID", ""},
		{Column, "hrProcessorLoad", "1.3.6.1.2.1.25.3.3.1.2", "Integer32", ""},
	}},
	{"IANAifType-MIB", nil},
	{"HOST-RESOURCES-TYPES", []builtinDef{
		{Node, "hrStorageOther", "1.3.6.1.2.1.25.2.1.1", "", ""},
		{Node, "hrStorageRam", "1.3.6.1.2.1.25.2.1.2", "", ""},
		{Node, "hrStorageVirtualMemory", "1.3.6.1.2.1.25.2.1.3", "", ""},
		{Node, "hrStorageFixedDisk", "1.3.6.1.2.1.25.2.1.4", "", ""},
		{Node, "hrStorageRemovableDisk", "1.3.6.1.2.1.25.2.1.5", "", ""},
		{Node, "hrStorageFloppyDisk", "1.3.6.1.2.1.25.2.1.6", "", ""},
		{Node, "hrStorageCompactDisc", "1.3.6.1.2.1.25.2.1.7", "", ""},
		{Node, "hrStorageRamDisk", "1.3.6.1.2.1.25.2.1.8", "", ""},
		{Node, "hrStorageFlashMemory", "1.3.6.1.2.1.25.2.1.9", "", ""},
		{Node, "hrStorageNetworkDisk", "1.3.6.1.2.1.25.2.1.10", "", ""},
		{Node, "hrDeviceOther", "1.3.6.1.2.1.25.3.1.1", "", ""},
		{Node, "hrDeviceUnknown", "1.3.6.1.2.1.25.3.1.2", "", ""},
		{Node, "hrDeviceProcessor", "1.3.6.1.2.1.25.3.1.3", "", ""},
		{Node, "hrDeviceNetwork", "1.3.6.1.2.1.25.3.1.4", "", ""},
		{Node, "hrDevicePrinter", "1.3.6.1.2.1.25.3.1.5", "", ""},
		{Node, "hrDeviceDiskStorage", "1.3.6.1.2.1.25.3.1.6", "", ""},
	}},
	{"UCD-SNMP-MIB", []builtinDef{
		{Node, "ucdavis", "1.3.6.1.4.1.2021", "", ""},
		{Node, "memory", "1.3.6.1.4.1.2021.4", "", ""},
		{Scalar, "memTotalSwap", "1.3.6.1.4.1.2021.4.3", "Integer32", ""},
		{Scalar, "memAvailSwap", "1.3.6.1.4.1.2021.4.4", "Integer32", ""},
		{Scalar, "memTotalReal", "1.3.6.1.4.1.2021.4.5", "Integer32", ""},
		{Scalar, "memAvailReal", "1.3.6.1.4.1.2021.4.6", "Integer32", ""},
		{Scalar, "memTotalFree", "1.3.6.1.4.1.2021.4.11", "Integer32", ""},
		{Scalar, "memShared", "1.3.6.1.4.1.2021.4.13", "Integer32", ""},
		{Scalar, "memBuffer", "1.3.6.1.4.1.2021.4.14", "Integer32", ""},
		{Scalar, "memCached", "1.3.6.1.4.1.2021.4.15", "Integer32", ""},
		{Scalar, "memTotalSwapX", "1.3.6.1.4.1.2021.4.18", "CounterBasedGauge64", ""},
		{Scalar, "memAvailSwapX", "1.3.6.1.4.1.2021.4.19", "CounterBasedGauge64", ""},
		{Scalar, "memTotalRealX", "1.3.6.1.4.1.2021.4.20", "CounterBasedGauge64", ""},
		{Scalar, "memAvailRealX", "1.3.6.1.4.1.2021.4.21", "CounterBasedGauge64", ""},
		{Scalar, "memTotalFreeX", "1.3.6.1.4.1.2021.4.22", "CounterBasedGauge64", ""},
		{Scalar, "memSharedX", "1.3.6.1.4.1.2021.4.24", "CounterBasedGauge64", ""},
		{Scalar, "memBufferX", "1.3.6.1.4.1.2021.4.25", "CounterBasedGauge64", ""},
		{Scalar, "memCachedX", "1.3.6.1.4.1.2021.4.26", "CounterBasedGauge64", ""},
		{Scalar, "memSysAvail", "1.3.6.1.4.1.2021.4.27", "CounterBasedGauge64", ""},
		{Scalar, "memSwapError", "1.3.6.1.4.1.2021.4.100", "UCDErrorFlag", ""},
		{Table, "dskTable", "1.3.6.1.4.1.2021.9", "", ""},
		{Row, "dskEntry", "1.3.6.1.4.1.2021.9.1", "", ""},
		{Column, "dskIndex", "1.3.6.1.4.1.2021.9.1.1", "Integer32", ""},
		{Column, "dskPath", "1.3.6.1.4.1.2021.9.1.2", "DisplayString", ""},
		{Column, "dskDevice", "1.3.6.1.4.1.2021.9.1.3", "DisplayString", ""},
		{Column, "dskTotal", "1.3.6.1.4.1.2021.9.1.6", "Integer32", ""},
		{Column, "dskAvail", "1.3.6.1.4.1.2021.9.1.7", "Integer32", ""},
		{Column, "dskUsed", "1.3.6.1.4.1.2021.9.1.8", "Integer32", ""},
		{Column, "dskPercent", "1.3.6.1.4.1.2021.9.1.9", "Integer32", ""},
		{Table, "laTable", "1.3.6.1.4.1.2021.10", "", ""},
		{Row, "laEntry", "1.3.6.1.4.1.2021.10.1", "", ""},
		{Column, "laIndex", "1.3.6.1.4.1.2021.10.1.1", "Integer32", ""},
		{Column, "laNames", "1.3.6.1.4.1.2021.10.1.2", "DisplayString", ""},
		{Column, "laLoad", "1.3.6.1.4.1.2021.10.1.3", "DisplayString", ""},
		{Column, "laConfig", "1.3.6.1.4.1.2021.10.1.4", "DisplayString", ""},
		{Column, "laLoadInt", "1.3.6.1.4.1.2021.10.1.5", "Integer32", ""},
		{Column, "laLoadFloat", "1.3.6.1.4.1.2021.10.1.6", "Float", ""},
		{Column, "laErrorFlag", "1.3.6.1.4.1.2021.10.1.100", "UCDErrorFlag", ""},
		{Node, "systemStats", "1.3.6.1.4.1.2021.11", "", ""},
		{Scalar, "ssSwapIn", "1.3.6.1.4.1.2021.11.3", "Integer32", ""},
		{Scalar, "ssSwapOut", "1.3.6.1.4.1.2021.11.4", "Integer32", ""},
		{Scalar, "ssCpuUser", "1.3.6.1.4.1.2021.11.9", "Integer32", ""},
		{Scalar, "ssCpuSystem", "1.3.6.1.4.1.2021.11.10", "Integer32", ""},
		{Scalar, "ssCpuIdle", "1.3.6.1.4.1.2021.11.11", "Integer32", ""},
		{Scalar, "ssCpuRawUser", "1.3.6.1.4.1.2021.11.50", "Counter32", ""},
		{Scalar, "ssCpuRawNice", "1.3.6.1.4.1.2021.11.51", "Counter32", ""},
		{Scalar, "ssCpuRawSystem", "1.3.6.1.4.1.2021.11.52", "Counter32", ""},
		{Scalar, "ssCpuRawIdle", "1.3.6.1.4.1.2021.11.53", "Counter32", ""},
		{Scalar, "ssCpuRawWait", "1.3.6.1.4.1.2021.11.54", "Counter32", ""},
		{Scalar, "ssCpuRawKernel", "1.3.6.1.4.1.2021.11.55", "Counter32", ""},
		{Scalar, "ssCpuRawInterrupt", "1.3.6.1.4.1.2021.11.56", "Counter32", ""},
		{Scalar, "ssIORawSent", "1.3.6.1.4.1.2021.11.57", "Counter32", ""},
		{Scalar, "ssIORawReceived", "1.3.6.1.4.1.2021.11.58", "Counter32", ""},
		{Scalar, "ssRawInterrupts", "1.3.6.1.4.1.2021.11.59", "Counter32", ""},
		{Scalar, "ssRawContexts", "1.3.6.1.4.1.2021.11.60", "Counter32", ""},
		{Scalar, "ssCpuRawSoftIRQ", "1.3.6.1.4.1.2021.11.61", "Counter32", ""},
		{Scalar, "ssRawSwapIn", "1.3.6.1.4.1.2021.11.62", "Counter32", ""},
		{Scalar, "ssRawSwapOut", "1.3.6.1.4.1.2021.11.63", "Counter32", ""},
		{Scalar, "ssCpuRawSteal", "1.3.6.1.4.1.2021.11.64", "Counter32", ""},
		{Scalar, "ssCpuRawGuest", "1.3.6.1.4.1.2021.11.65", "Counter32", ""},
		{Scalar, "ssCpuRawGuestNice", "1.3.6.1.4.1.2021.11.66", "Counter32", ""},
		{Scalar, "ssCpuNumCpus", "1.3.6.1.4.1.2021.11.67", "Integer32", ""},
	}},
}

// builtinObjects returns the built-in table as Objects, sorted by module
// and then in table order.
func builtinObjects() ([]*Object, error) {
	var out []*Object
	for _, m := range builtinModules {
		for _, d := range m.defs {
			o := &Object{Module: m.module, Name: d.name, OID: d.oid, Kind: d.kind, Syntax: d.syntax}
			if d.syntax != "" {
				s, ok := builtinSyntax[d.syntax]
				if !ok {
					return nil, fmt.Errorf("build object %s: syntax %q is not in the built-in syntaxes", o.QualifiedName(), d.syntax)
				}
				o.Base = s.base
				enums := s.enums
				if d.inlineEnums != "" {
					enums = d.inlineEnums
				}
				var err error
				if o.Enums, err = parseEnums(enums); err != nil {
					return nil, fmt.Errorf("build object %s: %w", o.QualifiedName(), err)
				}
				sort.Slice(o.Enums, func(i, j int) bool { return o.Enums[i].Value < o.Enums[j].Value })
			}
			out = append(out, o)
		}
	}
	return out, nil
}

var builtin = sync.OnceValues(func() (*Resolver, error) {
	objs, err := builtinObjects()
	if err != nil {
		return nil, err
	}
	r := newResolver()
	for _, o := range objs {
		r.add(o, "")
	}
	return r, nil
})

// Builtin returns the Resolver of the built-in objects alone: what
// resolves with no MIB files. It is built once and shared; it is safe for
// concurrent use.
func Builtin() *Resolver {
	r, err := builtin()
	if err != nil {
		// The table is source code, and a test builds it.
		panic(err)
	}
	return r
}
