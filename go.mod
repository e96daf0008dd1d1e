module github.com/spoold/spoold

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/alecthomas/participle v0.4.1
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/gosnmp/gosnmp v1.47.0
	github.com/landlock-lsm/go-landlock v0.11.2
	github.com/prometheus/client_golang v1.25.0
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/procfs v0.23.0
	github.com/sleepinggenius2/gosmi v0.4.4
	github.com/ziutek/rrd v0.0.3
	go.uber.org/goleak v1.3.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)
