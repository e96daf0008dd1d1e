module github.com/spoold/spoold

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/gosnmp/gosnmp v1.47.0
	github.com/ziutek/rrd v0.0.3
	go.uber.org/goleak v1.3.0
)
