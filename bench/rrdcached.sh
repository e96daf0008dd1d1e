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
# Run as root, both servers' directories are on a scratch ext4 of their own
# (bench/scratchfs.sh), as on a server; the output says which.
# Usage: bench/rrdcached.sh [FILES] [KILLS]   (FSYNC=batch bench/rrdcached.sh for --fsync batch;
#   SPOOLD_FLAGS: more daemon flags for spoold, split at blanks)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
FILES=${1:-10000}
KILLS=${2:-20}
DS=${DS:-40}
UPDATES=${UPDATES:-12}
FSYNC=${FSYNC:-none}
export CGO_ENABLED=1
command -v rrdcached >/dev/null || scripts/install-deps.sh
WORK=$(mktemp -d /tmp/spoold-bench-rrdcached.XXXXXX)
. bench/scratchfs.sh
trap 'scratchfs_cleanup; rm -rf "$WORK"' EXIT
scratchfs_mount "$WORK" 8G "$WORK/fs"
go build -o "$WORK/bin/rrdcachedbench" ./bench/rrdcachedbench
go build -o "$WORK/bin/spoold" ./cmd/spoold
# rrdcached's own command line, through spoold rrdcached: the journal
# directory is the spool.
SPOOLD="$WORK/bin/spoold rrdcached -g -l unix:{SOCK} -b {DIR} -B -R -F -j {WORK}/spool -p {WORK}/pid -w 3600 -f 7200 -- --admin-listen= --fsync $FSYNC --shutdown-timeout 30m --log-level warn${SPOOLD_FLAGS:+ $SPOOLD_FLAGS}"
echo "# bench/rrdcached.sh $FILES $KILLS (DS=$DS UPDATES=$UPDATES FSYNC=$FSYNC${SPOOLD_FLAGS:+ SPOOLD_FLAGS=\"$SPOOLD_FLAGS\"}) on $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
echo "# both servers' files: $SCRATCH_FS"
"$WORK/bin/rrdcachedbench" -dir "$WORK/fs" -files "$FILES" -ds "$DS" -updates "$UPDATES" -kills "$KILLS" -spoold "$SPOOLD"
