#!/usr/bin/env bash
# Restart warm-up benchmark. Same run, two seeded spools of
# TARGETS simulated targets x POLLS polls 5 minutes apart, the newest 50
# minutes old (older than the default --write-delay 30m + --write-jitter
# 15m: the whole backlog is due at once):
#   segments: one POLLS-entry segment per target;
#   files:    one single-entry file per poll, as spools held before segments.
# For each, spoold starts with nginx's default loader settings
# (--loader-files 100 --loader-sleep 50ms --loader-threshold 200ms), polls
# the simulated fleet (127.0.0.1) every 5 minutes, and is asked for the
# graph of a random target every second while its start-up walk runs.
# bench/warmup/main.go documents each figure of the line it prints:
#   warmup: files=<n> walk_s=<s> first_write_s=<s> drained_s=<s> graph_p99_ms=<ms> graph_failed=<n>
# after a "# mode=..." header line. Run as root, the spool and RRD files
# live on a loop-mounted ext4 image (bench/scratchfs.sh), removed on exit;
# otherwise in a temp directory on /tmp, whatever its file system does.
# Disk: about 100 KB per RRD file (2 data sources, default RRAs), one
# mode's files at a time.
# Usage: bench/warmup.sh [TARGETS] [POLLS]   (defaults 20000 12)
#   MODES="segments" runs one mode; KEEP=1 keeps each daemon's log in
#   /tmp/spoold-bench-warmup-logs/<mode>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
TARGETS=${1:-20000}
POLLS=${2:-12}
export CGO_ENABLED=1
WORK=$(mktemp -d /tmp/spoold-bench-warmup.XXXXXX)
. bench/scratchfs.sh
trap 'scratchfs_cleanup; rm -rf "$WORK"' EXIT

go build -o "$WORK/spoold" ./cmd/spoold
go build -o "$WORK/warmup" ./bench/warmup
DATA="$WORK/data"
scratchfs_mount "$WORK" 8G "$DATA"
FS=$SCRATCH_FS

for mode in ${MODES:-segments files}; do
	echo "# mode=$mode targets=$TARGETS polls=$POLLS fs=$FS"
	"$WORK/warmup" --spoold "$WORK/spoold" --dir "$DATA/$mode" --mode "$mode" \
		--targets "$TARGETS" --polls "$POLLS"
	if [ "${KEEP:-0}" = 1 ]; then
		mkdir -p /tmp/spoold-bench-warmup-logs
		cp "$DATA/$mode/spoold.log" "/tmp/spoold-bench-warmup-logs/$mode.log"
		echo "# log: /tmp/spoold-bench-warmup-logs/$mode.log"
	fi
	rm -rf "${DATA:?}/$mode"
done
