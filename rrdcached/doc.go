// Package rrdcached speaks rrdcached's line protocol: a server (listeners on
// unix and TCP sockets, per-listener permissions, limits, BATCH) that hands
// commands to a Backend, and a client used to forward updates to a remote
// rrdcached or spoold.
package rrdcached
