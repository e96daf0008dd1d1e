#!/usr/bin/env bash
# Admin API under load. spoold runs as its own process
# against a simulated fleet of DEVICES devices on 127.0.0.1, polled every
# 2 s; a Go load generator on loopback sends GET /status, /metrics, the
# page, graphs (and a 404 graph), POST /flush without the token (401) from
# WORKERS connections at RATE requests/s in all (0 = as fast as answered),
# and one POST /flush with the token per poll cycle. Rounds of 2 unloaded
# then 2 loaded cycles (each starting after the switch), ROUNDS times,
# alternating so that the machine's other load hits both alike; prints
#   adminload: ... unloaded_median_ms=<u> loaded_median_ms=<l> ratio=<l/u> ... unexpected=map[]
# Goal: ratio <= 1.2 and no unexpected answer (BenchmarkAdminLoad in
# cmd/spoold). The generator and the simulator share the machine's cores
# with the daemon, as they would on a small box.
# Usage: bench/adminload.sh [DEVICES] [WORKERS] [RATE] [ROUNDS] [STATUS_CACHE]
#   (defaults 1000 8 0 8 250ms; STATUS_CACHE 0 renders /status, /metrics and
#   the page per request, as before --admin-status-cache)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
DEVICES=${1:-1000}
WORKERS=${2:-8}
RATE=${3:-0}
ROUNDS=${4:-8}
CACHE=${5:-250ms}
export CGO_ENABLED=1
go test -count=1 -run '^$' -bench '^BenchmarkAdminLoad$' -benchtime 1x ./cmd/spoold \
	-args -adminload-devices "$DEVICES" -adminload-workers "$WORKERS" \
	-adminload-rate "$RATE" -adminload-rounds "$ROUNDS" -adminload-status-cache "$CACHE" | grep -E '^(adminload:|Benchmark|ok|FAIL|---)'
