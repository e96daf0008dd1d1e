package simulate

import (
	"fmt"
	"strconv"
)

// Numbering is how the devices number their interfaces (ifIndex).
type Numbering int

const (
	// Contiguous numbers every device's interfaces 1..Interfaces, named
	// Gi0/1, Gi0/2..., as the legacy built-in profile if-mib:<n> polls them.
	Contiguous Numbering = iota
	// Vendor numbers them as real gear does, one of three layouts by device
	// index i%3 (see Layout): a Catalyst stack (1, 2, then 10101...), a
	// Juniper router (1, 6, then 513...), a Nexus switch (83886080, then
	// 436207616 + (module-1)<<19 + (port-1)<<12).
	Vendor
)

// String returns the flag spelling of n.
func (n Numbering) String() string {
	if n == Vendor {
		return "vendor"
	}
	return "contiguous"
}

// ParseNumbering reads "contiguous" or "vendor".
func ParseNumbering(s string) (Numbering, error) {
	switch s {
	case "contiguous":
		return Contiguous, nil
	case "vendor":
		return Vendor, nil
	}
	return 0, fmt.Errorf("parse interface numbering %q: want contiguous or vendor", s)
}

// iface is one interface of a layout: what its position (its port)
// determines, whatever ifIndex it has at the moment.
type iface struct {
	index       int // ifIndex in the layout's own numbering
	name, descr string
	typ         int    // ifType
	mbps        uint64 // ifHighSpeed
	mtu         int
}

// IANAifType values the layouts use.
const (
	ifTypeEthernet = 6
	ifTypeLoopback = 24
	ifTypeVirtual  = 53
)

// layout is a family of devices: its system group and how it numbers and
// names its interfaces: first the fixed ones (management, loopback), then
// line cards or stack members of 48 ports each.
type layout struct {
	name        string
	sysDescr    string
	sysObjectID string
	fixed       []iface
	// card returns port q (1..48) of card or member m (1...). The ifIndex
	// grows with the port, so a table's slots are in ifIndex order.
	card func(m, q int) iface
}

const portsPerCard = 48

// port returns interface p (0-based) of a device with layout l.
func (l *layout) port(p int) iface {
	if p < len(l.fixed) {
		return l.fixed[p]
	}
	p -= len(l.fixed)
	return l.card(p/portsPerCard+1, p%portsPerCard+1)
}

func ethernet(index int, name, descr string, mbps uint64, mtu int) iface {
	return iface{index: index, name: name, descr: descr, typ: ifTypeEthernet, mbps: mbps, mtu: mtu}
}

var (
	contiguousLayout = layout{
		name:        "contiguous",
		sysDescr:    "Cisco IOS Software, simulated by spoold",
		sysObjectID: ".1.3.6.1.4.1.9.1.1208",
		card: func(m, q int) iface {
			n := strconv.Itoa((m-1)*portsPerCard + q)
			return ethernet((m-1)*portsPerCard+q, "Gi0/"+n, "GigabitEthernet0/"+n, 1000, 1500)
		},
	}
	vendorLayouts = [...]layout{
		{
			name:        "catalyst",
			sysDescr:    "Cisco IOS Software, C3750E Software (C3750E-UNIVERSALK9-M), simulated by spoold",
			sysObjectID: ".1.3.6.1.4.1.9.1.516",
			fixed: []iface{
				{index: 1, name: "Vl1", descr: "Vlan1", typ: ifTypeVirtual, mbps: 1000, mtu: 1500},
				ethernet(2, "Gi0/0", "GigabitEthernet0/0", 1000, 1500),
			},
			card: func(m, q int) iface {
				s := fmt.Sprintf("%d/0/%d", m, q)
				return ethernet(10000+100*m+q, "Gi"+s, "GigabitEthernet"+s, 1000, 1500)
			},
		},
		{
			name:        "junos",
			sysDescr:    "Juniper Networks, Inc. mx480 internet router, kernel JUNOS 21.4R3, simulated by spoold",
			sysObjectID: ".1.3.6.1.4.1.2636.1.1.1.2.25",
			fixed: []iface{
				ethernet(1, "fxp0", "fxp0", 1000, 1514),
				{index: 6, name: "lo0", descr: "lo0", typ: ifTypeLoopback, mtu: 65535},
			},
			card: func(m, q int) iface {
				s := fmt.Sprintf("ge-%d/0/%d", m-1, q-1)
				return ethernet(512+(m-1)*portsPerCard+q, s, s, 1000, 1514)
			},
		},
		{
			name:        "nxos",
			sysDescr:    "Cisco NX-OS(tm) n9000, Software (n9000-dk9), Version 9.3(8), simulated by spoold",
			sysObjectID: ".1.3.6.1.4.1.9.12.3.1.3.1812",
			fixed:       []iface{ethernet(83886080, "mgmt0", "mgmt0", 1000, 1500)},
			card: func(m, q int) iface {
				s := fmt.Sprintf("%d/%d", m, q)
				return ethernet(0x1A000000+(m-1)<<19+(q-1)<<12, "Eth"+s, "Ethernet"+s, 10000, 9216)
			},
		},
	}
)

// layoutOf returns device i's layout.
func (f *Fleet) layoutOf(i int) *layout {
	if f.opts.Numbering == Vendor {
		return &vendorLayouts[i%len(vendorLayouts)]
	}
	return &contiguousLayout
}

// aliases are the ifAlias texts of ports in use; %d is a number derived
// from the device and port.
var aliases = [...]string{
	"uplink to core-%d", "server rack A%d port 4", "customer %d: 1G transit", "peering: IX-%d",
	"backup link to dist-%d", "wifi controller %d", "", "storage-%d iSCSI",
}

// alias returns the ifAlias of device i's port p: empty for most
// management and down ports, else a text from aliases.
func alias(i, p int, down bool) string {
	if down {
		return ""
	}
	h := mix(uint64(i)<<20 ^ uint64(p) ^ 0xa11a5)
	a := aliases[h%uint64(len(aliases))]
	if a == "" {
		return a
	}
	return fmt.Sprintf(a, 1+(h>>8)%40)
}

// Interface is one row of a device's ifTable as it serves it at some time.
type Interface struct {
	// Index is the ifIndex. A renumbering device gives its interfaces new
	// ones at each restart; Port stays.
	Index int
	// Port is the interface's identity, 0 to Options.Interfaces-1, which
	// seeds its rates: Name, Descr, Type and the rates follow it.
	Port int
	// Name, Descr and Alias are ifName, ifDescr and ifAlias.
	Name, Descr, Alias string
	// Type is ifType: 6 ethernetCsmacd, 24 softwareLoopback, 53 propVirtual.
	Type int
	// SpeedMbps is ifHighSpeed.
	SpeedMbps uint64
	// AdminUp and OperUp are ifAdminStatus and ifOperStatus up(1); else
	// down(2). The counters of an interface not oper up stay flat.
	AdminUp, OperUp bool
}

// portStatus returns whether device i's port p is admin and oper up: the
// fraction Options.Down of each device's ports is down, spread evenly and
// shifted per device; every other down port is admin down, the rest only
// oper down.
func (f *Fleet) portStatus(i, p int) (adminUp, operUp bool) {
	salt := int(mix(uint64(i)+0xd0) % 1024)
	if !spread(p, f.opts.Down, salt) {
		return true, true
	}
	return mix(uint64(i)<<16^uint64(p))%2 == 0, false
}
