#!/usr/bin/env bash
# rrdcached's protocol, spoold against Debian's rrdcached: the
# same Go client (bench/rrdcachedbench) sends one BATCH of UPDATES (12)
# updates to each of FILES (10,000) RRD files of DS (40) data sources on
# rrdcached (-j journal) and to spoold (--fsync FSYNC, default none), in the
# same run; then KILLS (20) times per server another round, SIGKILL right
# after the last acknowledgement, a restart, a SIGTERM (the shutdown writes
# what the server kept), and a count of acknowledged updates missing from
# the RRD files. Written is the rate from the first
# UPDATE until a FLUSH of every file returned. Prints each server's line and
#   rrdcached_proto: spoold_acked_per_s=<n> rrdcached_acked_per_s=<n> spoold_written_per_s=<n> rrdcached_written_per_s=<n> spoold_lost=<n> rrdcached_lost=<n>
# Usage: bench/rrdcached.sh [FILES] [KILLS]   (FSYNC=batch bench/rrdcached.sh for --fsync batch)
# Until spoold's --listen is wired it measures rrdcached alone and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${1:-10000}
KILLS=${2:-20}
DS=${DS:-40}
UPDATES=${UPDATES:-12}
FSYNC=${FSYNC:-none}
export CGO_ENABLED=1
command -v rrdcached >/dev/null || scripts/install-deps.sh
WORK=$(mktemp -d /tmp/spoold-bench-rrdcached.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/bin/rrdcachedbench" ./bench/rrdcachedbench
go build -o "$WORK/bin/spoold" ./cmd/spoold
SPOOLD=""
# The help read whole first: grep -q stops at the first match, and the
# SIGPIPE it leaves spoold would fail the pipe (pipefail).
HELP=$("$WORK/bin/spoold" --help 2>&1 || true)
if grep -q -- '--listen ' <<<"$HELP"; then
	: >"$WORK/targets.conf"
	SPOOLD="$WORK/bin/spoold --listen unix:{SOCK} --rrd-dir {DIR} --spool-dir {WORK}/spool --targets $WORK/targets.conf --admin-listen= --fsync $FSYNC --shutdown-timeout 30m --log-level warn"
else
	echo "bench/rrdcached.sh: this spoold has no --listen (its rrdcached server is not wired yet): rrdcached only" >&2
fi
echo "# bench/rrdcached.sh $FILES $KILLS (DS=$DS UPDATES=$UPDATES FSYNC=$FSYNC) on $(uname -r), $(nproc) cores, $(date -u +%Y-%m-%d)"
"$WORK/bin/rrdcachedbench" -dir "$WORK" -files "$FILES" -ds "$DS" -updates "$UPDATES" -kills "$KILLS" -spoold "$SPOOLD"
[ -n "$SPOOLD" ]
