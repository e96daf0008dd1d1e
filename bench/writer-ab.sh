#!/usr/bin/env bash
# A-B of the writer between two commits, same run: builds writerbench
# (bench/writerbench) from REV_A and REV_B and runs them
# interleaved A B B A (ORDER= changes it), each on its own fresh set of
# FILES RRD files (made by its own build, synced, then COLD=1 drops them
# from the page cache; COLD=0, the default, keeps them cached) with its own
# spool of VALUES entries per file. For each run it prints the commit and
# writerbench's lines: CPU per file and cores busy, the device's reads, and
# "<values/s> <pages written back per file> <pages read/s> <µs CPU per file>".
# CPU per file is the figure to compare on a shared machine: values/s moves
# with the other load. The sets are made before the first run and must fit
# in the page cache together for COLD=0 (4 × 1,500 files of 1.8 MB: 11 GB).
# ENV_A and ENV_B are environment assignments for A's and B's spoold runs
# (ENV_A="GOGC=100" ENV_B="GOGC=400" bench/writer-ab.sh HEAD HEAD: the
# collector's settings against each other); each run also prints its peak
# RSS (maxrss_kb=, /usr/bin/time), the memory such a setting costs.
# Usage: bench/writer-ab.sh REV_A REV_B [FILES]   (default 1500)
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1
B=$2
FILES=${3:-1500}
ORDER=${ORDER:-A B B A}
COLDFLAG=""
[ "${COLD:-0}" = 1 ] && COLDFLAG="-cold"
export CGO_ENABLED=1
WORK=$(mktemp -d /tmp/spoold-bench-writer-ab.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=bench/abbuild.sh
. bench/abbuild.sh
ab_build "$WORK" ./bench/writerbench wb
i=0
for v in $ORDER; do
	i=$((i + 1))
	"$WORK/wb-$v" -mode create -files "$FILES" -dir "$WORK/rrd-$i"
done
sync
i=0
for v in $ORDER; do
	i=$((i + 1))
	rev=${!v}
	envv=ENV_$v
	# shellcheck disable=SC2086 # ENV_A/ENV_B are lists of assignments
	out=$(env ${!envv:-} /usr/bin/time -f "maxrss_kb=%M" "$WORK/wb-$v" -mode spoold -files "$FILES" -values "${VALUES:-12}" -dir "$WORK/rrd-$i" \
		-spool "$WORK/spool-$i" -writers "${WRITERS:-4}" $COLDFLAG 2>&1 | tr '\n' ' ')
	echo "$v $(git rev-parse --short "$rev") ${!envv:-}: $out"
done
