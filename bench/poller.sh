#!/usr/bin/env bash
# Poller benchmark: a simulated fleet of DEVICES devices with 10
# interfaces (40 IF-MIB HC counters each, plus sysUpTime) in one process, the
# poller in another, each cycle written to a scratch spool. Prints, per case
# and cycle:
#   poller: devices=10000 ok=<n> ... seconds=<s> cpu_seconds=<s> peak_rss_mb=<m>
# (a) all devices alive; (b) 10% dead, timeout 1s and 1 retry.
# Goals on 2 cores: (a) <= 3 s, (b) <= 6 s.
# The first cycle of a case runs on an empty spool (level directories are
# created); the second is the steady state.
# Then the tables case: TABLE_DEVICES (2,500) simulated devices of
# 48 interfaces numbered as vendors do (1, 2, 10101...: non-contiguous), the
# if-mib profile, spooled not written; then TABLE_WRITE (250) of them polled
# once more and their interface files (12,000) created and written:
#   tables: devices=2500 interfaces=120000 discovery_s=<s> cycle_s=<s> write_s=<s> pdus_per_device=<n>
#   tables-disk: files=12000 bytes=<n> bytes_per_file=<n>
# Goals on 2 cores: discovery_s <= 30, cycle_s <= 5, write_s <= 30.
# Usage: bench/poller.sh [DEVICES] [CONCURRENCY] [SPOOL_PARENT]
#   (defaults 10000 1000 /tmp; use /dev/shm to leave the disk out)
#   TABLE_DEVICES, TABLE_WRITE, TABLE_MODE (auto|get|bulk), TABLE_WRITERS (4) in the environment;
#   CASES="a b tables" (the default) picks the cases.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
DEVICES=${1:-10000}
CONC=${2:-1000}
PARENT=${3:-/tmp}
WORK=$(mktemp -d /tmp/spoold-bench-poller.XXXXXX)
SPOOL=$(mktemp -d "$PARENT/spoold-bench-poller-spool.XXXXXX")
SIM_PID=""
cleanup() {
	if [ -n "$SIM_PID" ]; then kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; fi
	rm -rf "$WORK" "$SPOOL"
}
trap cleanup EXIT

go build -o "$WORK/pollbench" ./bench/pollbench
go build -o "$WORK/tablebench" ./bench/tablebench
go build -o "$WORK/spoold" ./cmd/spoold
SIM=("$WORK/spoold" simulate)

port=$((20000 + RANDOM % 20000))
run_case() { # name dead-fraction [target timeout] [target retries]
	local name=$1 dead=$2
	rm -f "$WORK/targets"
	"${SIM[@]}" --listen "127.0.0.1:$port" --devices "$DEVICES" --interfaces 10 --dead "$dead" \
		--targets-timeout "${3:-2s}" --targets-retries "${4:-1}" --targets-out "$WORK/targets" >/dev/null 2>&1 &
	SIM_PID=$!
	for _ in $(seq 100); do [ -s "$WORK/targets" ] && break; sleep 0.1; done
	sleep 0.2 # the targets file is written before the fleet answers; let it settle
	echo "# ($name) devices=$DEVICES dead=$dead concurrency=$CONC spool=$SPOOL"
	"$WORK/pollbench" --targets "$WORK/targets" --spool-dir "$SPOOL/$name" \
		--poll-concurrency "$CONC" --cycles 2
	kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null || true; SIM_PID=""
	port=$((port + 1))
}
run_tables() {
	local devices=${TABLE_DEVICES:-2500} write=${TABLE_WRITE:-250} mode=${TABLE_MODE:-auto}
	rm -f "$WORK/targets"
	"${SIM[@]}" --listen "127.0.0.1:$port" --devices "$devices" --interfaces 48 --numbering vendor \
		--targets-profile if-mib --targets-out "$WORK/targets" >/dev/null 2>&1 &
	SIM_PID=$!
	for _ in $(seq 100); do [ -s "$WORK/targets" ] && break; sleep 0.1; done
	sleep 0.2
	echo "# (tables) devices=$devices interfaces=48 numbering=vendor profile=if-mib mode=$mode write=$write concurrency=$CONC spool=$SPOOL rrd=$WORK/rrd"
	"$WORK/tablebench" --targets "$WORK/targets" --spool-dir "$SPOOL/tables" --rrd-dir "$WORK/rrd" \
		--poll-concurrency "$CONC" --write-devices "$write" --poll-table-mode "$mode" --writers "${TABLE_WRITERS:-4}"
	kill "$SIM_PID"; wait "$SIM_PID" 2>/dev/null || true; SIM_PID=""
	port=$((port + 1))
}
for c in ${CASES:-a b tables}; do
	case $c in
	a) run_case a 0 ;;
	b) run_case b 0.1 1s 1 ;;
	tables) run_tables ;;
	esac
done
