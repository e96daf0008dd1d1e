#!/usr/bin/env bash
# Two builds of the daemon measured at once, each on a fleet of its own:
# builds spoold from REV_A and REV_B, and for each of ROUNDS runs both side
# by side, each with its own `spoold simulate` of DEVICES devices × 48
# interfaces (if-mib, the small archives of `RRA=small bench/scale.sh`),
# its own spool and RRD directories on one scratch ext4 (as root; see
# bench/scratchfs.sh), polling every 30 s with bench/scale.sh's flags and
# FLAGS_A or FLAGS_B. Once both have created every file and SETTLE seconds
# (60) have passed, it reads both daemons' CPU time (/proc/PID/stat) at the
# same moment, again WINDOW seconds (180) later, and prints per round and
# side:
#   scale_ab: round= side= rev= flags= cpu_us_per_if_poll= rss_kib_per_if=
# One daemon measured after the other on a shared machine differs by 10%
# and more from run to run; run together, both see the same noise, so the
# ratio of a round is the figure to compare (the two share the CPUs: each
# one's absolute figure is higher than alone).
# Usage: [FLAGS_A=...] [FLAGS_B=...] bench/scale-ab.sh REV_A REV_B [DEVICES] [ROUNDS]   (1000, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1
B=$2
DEVICES=${3:-1000}
ROUNDS=${4:-2}
INTERFACES=48
SETTLE=${SETTLE:-60}
WINDOW=${WINDOW:-180}
IFS_N=$((DEVICES * INTERFACES))
export CGO_ENABLED=1

WORK=$(mktemp -d /var/tmp/spoold-bench-scale-ab.XXXXXX)
# shellcheck source=bench/scratchfs.sh
. bench/scratchfs.sh
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	scratchfs_cleanup
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Small archives: about 35 KB a file, two fleets, and room for the spools.
need_kib=$((IFS_N * 2 * 40 + 2 * 1048576))
free_kib=$(df -Pk "$WORK" | awk 'NR == 2 { print $4 }')
echo "# disk: needs about $((need_kib / 1048576 + 1)) GiB in $WORK ($((free_kib / 1048576)) GiB free)"
if [ "$free_kib" -lt "$need_kib" ]; then
	echo "bench/scale-ab.sh: not enough space in $WORK" >&2
	exit 1
fi
scratchfs_mount "$WORK" "$((need_kib / 1048576 + 1))G" "$WORK/fs"
echo "# files: $SCRATCH_FS"

# shellcheck source=bench/abbuild.sh
. bench/abbuild.sh
ab_build "$WORK" ./cmd/spoold spoold
cat >"$WORK/profiles.conf" <<'EOF'
# bench/scale-ab.sh: bench/scale.sh's RRA=small profile
profile if-small
  use if-mib
  rra RRA:AVERAGE:0.5:1:120
  rra RRA:AVERAGE:0.5:10:144
  rra RRA:MAX:0.5:10:144
EOF
# The packaged unit's limit where the container allows it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "# open-files limit $(ulimit -n); $(nproc) cores; $(uname -r)"

metric() { # metric PORT NAME: a /metrics value, 0 when not there yet
	{ curl -sf "http://127.0.0.1:$1/metrics" || true; } | awk -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

for round in $(seq "$ROUNDS"); do
	declare -A DAEMON SIM PORT
	for v in A B; do
		d="$WORK/fs/$v-$round"
		mkdir -p "$d/spool" "$d/rrd"
		sim=23161
		PORT[$v]=23780
		if [ "$v" = B ]; then
			sim=23162
			PORT[$v]=23781
		fi
		"$WORK/spoold-$v" simulate --devices "$DEVICES" --interfaces "$INTERFACES" --listen "127.0.0.1:$sim" \
			--targets-out "$d/targets.conf" --targets-profile if-small >"$d/sim.log" 2>&1 &
		SIM[$v]=$!
		PIDS+=("${SIM[$v]}")
		for _ in $(seq 60); do [ -s "$d/targets.conf" ] && break; sleep 1; done
		flags=FLAGS_$v
		# shellcheck disable=SC2086 # FLAGS_A/FLAGS_B are lists of flags
		"$WORK/spoold-$v" --targets "$d/targets.conf" --profiles "$WORK/profiles.conf" --poll-interval 30s \
			--write-delay 90s --write-jitter 10s --spool-dir "$d/spool" --rrd-dir "$d/rrd" \
			--admin-listen "127.0.0.1:${PORT[$v]}" --max-new-files-per-hour 0 --log-level warn ${!flags:-} >"$d/daemon.log" 2>&1 &
		DAEMON[$v]=$!
		PIDS+=("${DAEMON[$v]}")
	done
	for _ in $(seq 600); do
		a=$(metric "${PORT[A]}" spoold_writer_creates_total)
		b=$(metric "${PORT[B]}" spoold_writer_creates_total)
		[ "${a%.*}" -ge "$IFS_N" ] && [ "${b%.*}" -ge "$IFS_N" ] && break
		for v in A B; do
			if ! kill -0 "${DAEMON[$v]}" 2>/dev/null; then
				echo "bench/scale-ab.sh: daemon $v ended:" >&2
				tail -5 "$WORK/fs/$v-$round/daemon.log" >&2
				exit 1
			fi
		done
		sleep 2
	done
	if [ "${a%.*}" -lt "$IFS_N" ] || [ "${b%.*}" -lt "$IFS_N" ]; then
		echo "bench/scale-ab.sh: files created after 20 minutes: A $a, B $b of $IFS_N" >&2
		exit 1
	fi
	sleep "$SETTLE"
	declare -A C0 C1
	for v in A B; do C0[$v]=$(cpu_ticks "${DAEMON[$v]}"); done
	sleep "$WINDOW"
	for v in A B; do C1[$v]=$(cpu_ticks "${DAEMON[$v]}"); done
	hz=$(getconf CLK_TCK)
	for v in A B; do
		rev=${!v}
		flags=FLAGS_$v
		rss_kb=$(awk '/^VmRSS/ { print $2 }' "/proc/${DAEMON[$v]}/status")
		echo "scale_ab: round=$round side=$v rev=$(git rev-parse --short "$rev") flags=\"${!flags:-}\"" \
			"cpu_us_per_if_poll=$(awk -v c=$((C1[$v] - C0[$v])) -v hz="$hz" -v n="$IFS_N" -v w="$WINDOW" 'BEGIN { printf "%.1f", c / hz * 1e6 / (n * w / 30) }')" \
			"rss_kib_per_if=$(awk -v r="$rss_kb" -v n="$IFS_N" 'BEGIN { printf "%.2f", r / n }')"
	done
	for v in A B; do kill "${DAEMON[$v]}" "${SIM[$v]}"; done
	wait "${DAEMON[A]}" "${DAEMON[B]}" "${SIM[A]}" "${SIM[B]}" 2>/dev/null || true
	PIDS=()
	rm -rf "$WORK/fs/A-$round" "$WORK/fs/B-$round"
done
