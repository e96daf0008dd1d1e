#!/usr/bin/env bash
# Admin API under load (issue 6, part 6). spoold runs as its own process
# against a simulated fleet of DEVICES devices on 127.0.0.1, polled every
# 2 s; a Go load generator on loopback sends GET /status, /metrics, the
# page, graphs (and a 404 graph), POST /flush without the token (401) from
# WORKERS connections at RATE requests/s in all (0 = as fast as answered),
# and one POST /flush with the token per poll cycle. Rounds of 4 unloaded
# then 4 loaded cycles, ROUNDS times; prints
#   adminload: ... unloaded_median_ms=<u> loaded_median_ms=<l> ratio=<l/u> ... unexpected=map[]
# Goal: ratio <= 1.2 and no unexpected answer (BenchmarkAdminLoad in
# cmd/spoold). The generator and the simulator share the machine's cores
# with the daemon, as they would on a small box.
# Usage: bench/adminload.sh [DEVICES] [WORKERS] [RATE] [ROUNDS]   (defaults 1000 8 0 3)
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES=${1:-1000}
WORKERS=${2:-8}
RATE=${3:-0}
ROUNDS=${4:-3}
export CGO_ENABLED=1
go test -count=1 -run '^$' -bench '^BenchmarkAdminLoad$' -benchtime 1x ./cmd/spoold \
	-args -adminload-devices "$DEVICES" -adminload-workers "$WORKERS" \
	-adminload-rate "$RATE" -adminload-rounds "$ROUNDS" | grep -E '^(adminload:|Benchmark|ok|FAIL|---)'
