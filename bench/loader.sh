#!/usr/bin/env bash
# Throttled-loader benchmark: builds spoold, generates a spool of
# ENTRIES entries over KEYS keys, then runs `spoold load`
#   1. with loader_files=1000, loader_sleep=50ms: wall time against nginx's
#      formula (files / loader_files) x loader_sleep, plus the unthrottled work;
#   2. with --loader-cpu=25%: the measured CPU share of the process;
#   3. unthrottled (--loader-sleep=0), for the work term.
# Usage: bench/loader.sh [ENTRIES] [KEYS]   (defaults 100000 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
ENTRIES=${1:-100000}
KEYS=${2:-10000}
WORK=$(mktemp -d /tmp/spoold-bench-loader.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

go build -o "$WORK/spoold" ./cmd/spoold
go run ./bench/genspool --spool-dir "$WORK/spool" --entries "$ENTRIES" --keys "$KEYS"

load() { "$WORK/spoold" load --spool-dir "$WORK/spool" --progress-every 0 "$@" 2>/dev/null; }
field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d[sys.argv[2]])' "$1" "$2"; }

free=$(load --loader-sleep 0)
throttled=$(load --loader-files 1000 --loader-sleep 50ms --loader-threshold 200ms)
cpu=$(load --loader-cpu 25%)

echo "unthrottled: $free"
echo "throttled:   $throttled"
echo "cpu25:       $cpu"
python3 - "$free" "$throttled" "$cpu" <<'PY'
import json, sys
free, thr, cpu = (json.loads(a) for a in sys.argv[1:])
expect = thr["formula_seconds"] + free["seconds"]
dev = (thr["seconds"] - expect) / expect * 100
print(f"loader: entries={thr['entries']} unthrottled={free['seconds']:.3f}s "
      f"({free['entries_per_second']:.0f}/s) throttled={thr['seconds']:.3f}s "
      f"formula={thr['formula_seconds']:.3f}s formula+work={expect:.3f}s deviation={dev:+.1f}% "
      f"cpu25_share={cpu['cpu_share']*100:.1f}% cpu25_seconds={cpu['seconds']:.2f}s")
PY
