package snmpsimtest

import (
	"slices"
	"strings"
)

// IfMIBValues are the built-in if-mib profile's data sources, in the order
// of a row's values.
var IfMIBValues = []string{"in", "out", "inpkt", "outpkt", "inerr", "outerr", "indisc", "outdisc", "speed", "oper"}

// Port is an interface of a recording as the if-mib profile must poll it.
type Port struct {
	Index string // its index: the OID suffix of its cells
	// Segment is its key's last segment (fleet.InstanceSegment of its
	// ifName, or ifDescr where it has none; _I<index> added for a name
	// two rows share): its file is <rrd-dir>/<target>/<Segment>.rrd.
	Segment string
	// Values are its values in IfMIBValues order, as the agent answers
	// them: a counter's or gauge's number, or U where it answers none of
	// the column's alternatives.
	Values []string
}

// IfMIBPorts returns the ports the if-mib profile must find in the
// recording name, in index order; none for a recording without rows.
func IfMIBPorts(name string) []Port {
	var out []Port
	for _, p := range ifMIBPorts[name] {
		out = append(out, Port{Index: p[0], Segment: p[1], Values: strings.Fields(p[2])})
	}
	return out
}

// IfMIBRecordings returns the names of the recordings with ports, sorted.
func IfMIBRecordings() []string {
	var names []string
	for n := range ifMIBPorts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ifMIBPorts are each recording's ports: index, segment, values.
var ifMIBPorts = map[string][][3]string{
	"routeros": {
		{"1", "ether1", "100001111111 200002222222 3000033 4000044 U U U U U 1"},
		{"2", "ether2", "100002222222 200004444444 3000066 4000088 U U U U U 1"},
		{"3", "ether3", "100003333333 200006666666 3000099 4000132 U U U U U 2"},
		{"4", "ether4", "100004444444 200008888888 3000132 4000176 U U U U U 2"},
		{"5", "ether5", "100005555555 200011111110 3000165 4000220 U U U U U 1"},
		{"6", "ether6", "100006666666 200013333332 3000198 4000264 U U U U U 2"},
		{"7", "ether7", "100007777777 200015555554 3000231 4000308 U U U U U 2"},
		{"8", "ether8", "100008888888 200017777776 3000264 4000352 U U U U U 2"},
		{"9", "ether9", "100009999999 200019999998 3000297 4000396 U U U U U 2"},
		{"10", "ether10", "100011111110 200022222220 3000330 4000440 U U U U U 2"},
		{"11", "sfp-sfpplus1", "100012222221 200024444442 3000363 4000484 U U U U U 1"},
		{"12", "bridge", "100013333332 200026666664 3000396 4000528 U U U U U 1"},
	},
	"no-ifxtable": {
		{"1", "RMON_20Port_201_20on_20Unit_201", "3000000001 4000000001 5001 6001 11 21 1 0 U 1"},
		{"2", "RMON_20Port_202_20on_20Unit_201", "3000000002 4000000002 5002 6002 12 22 2 0 U 2"},
		{"3", "RMON_20Port_201_20on_20Unit_202", "3000000003 4000000003 5003 6003 13 23 0 0 U 1"},
		{"101", "RMON_20VLAN_201", "3000000101 4000000101 5101 6101 111 121 2 0 U 1"},
	},
	"split-counters": {
		{"1", "Vlan1", "7000000001 8000000001 70001 80001 U U U U 1000 1"},
		{"2", "Vlan20", "7000000002 8000000002 70002 80002 U U U U 1000 2"},
		{"10101", "Gi1_2F0_2F1", "7000010101 8000010101 80101 90101 U U U U 1000 1"},
		{"10102", "Gi1_2F0_2F2", "7000010102 8000010102 80102 90102 U U U U 1000 2"},
		{"4194304", "Te1_2F1_2F1", "7004194304 8004194304 4264304 4274304 U U U U 10000 1"},
	},
	"names": {
		{"1", "lo", "10000000000 20000000000 U U U U U U U 1"},
		{"2", "eth0", "20000000000 40000000000 U U U U U U U 1"},
		{"3", "eth1_20uplink", "3000 U U U U U U U U 1"},
		{"4", "Null0_I4", "4000 8000 U U U U U U U 1"},
		{"5", "Null0_I5", "5000 10000 U U U U U U U 1"},
		{"6", "_I6", "6000 12000 U U U U U U U 1"},
	},
	"vanishing": {
		{"1", "eth0", "9000000001 9100000001 U U U U U U U 1"},
		{"2", "eth1", "9000000002 9100000002 U U U U U U U 1"},
		{"3", "switch0", "9000000003 9100000003 U U U U U U U 1"},
	},
}
