#!/usr/bin/env bash
# Spool segments benchmark: TARGETS targets x POLLS polls of
# COUNTERS counters (spool.Entry as the poller makes it: key "dev00042",
# Counter values "ds00".."ds39"), same run, two modes:
#   file: one file per poll, spool.Spool.Write (temp file + rename): what
#         spoold's poller did before segments;
#   seg:  spool.Spool.Append, default segment options: the POLLS polls of a
#         target go to its open segment (the write window: every poll of a
#         target before the writer seals and takes it).
# Per poll, each mode: wall µs of the writes; KiB written to the spool's
# block device (/proc/diskstats sectors, from a syncfs before the first
# write to after a syncfs that follows the last); and the drain, as the
# writer does it target by target: file: read + unlink each file; seg:
# Seal, ReadSegmentInto (a reused buffer, as the writer) + unlink each segment.
#   drain_x = file drain wall µs per poll / seg drain wall µs per poll
#   (read + unlink; the syncfs after the drain and the device KiB are in
#   the detail lines, not in the ratio).
# A third mode, segfd, measures what held descriptors save over
# open/append/close: seg with --segment-open-files at twice TARGETS, so
# every target's segment keeps its descriptor (a smaller setting saves at
# most its share of the targets, since the poller visits them in turn).
# It prints
#   fdcache: seg_us=<µs/poll> segfd_us=<µs/poll> open_close_share=<%>
# Rounds A-B-C-C-B-A-A-B-C (ORDER), each on a fresh spool; every figure is
# the median of its mode's rounds. Details (one JSON line per round, medians)
# go to stdout before the summary line:
#   spool: file_us=<µs/poll> seg_us=<µs/poll> file_kib=<KiB/poll> seg_kib=<KiB/poll> drain_x=<file drain cost / segment drain cost>
# Goals: seg_kib <= 2.0, file_us / seg_us >= 3, drain_x >= 5.
#
# The machine's root file system is mounted with discard (each unlink waits
# for a TRIM), which is not what the goals are about: run as root, the
# script makes its own file system, a 2 GiB sparse ext4 image in /tmp
# (inode tables initialised by mkfs, so no lazy-init thread writes during
# the run), loop-mounted noatime without discard, runs both modes there and
# always removes it again (umount, losetup -d, rm) on exit.
# Usage: sudo bench/spool.sh [TARGETS] [POLLS] [COUNTERS]   (defaults 10000 12 40)
# CPUPROFILE=path writes a CPU profile of all rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
TARGETS=${1:-10000}
POLLS=${2:-12}
COUNTERS=${3:-40}
ORDER=${ORDER:-file,seg,segfd,segfd,seg,file,file,seg,segfd}
if [ "$(id -u)" != 0 ]; then
	echo "bench/spool.sh: needs root (it loop-mounts a scratch ext4 file system)" >&2
	exit 1
fi
WORK=$(mktemp -d /tmp/spoold-bench-spool.XXXXXX)
. bench/scratchfs.sh
trap 'scratchfs_cleanup; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

go build -o "$WORK/spoolbench" ./bench/spoolbench
scratchfs_mount "$WORK" 2G "$WORK/mnt" -i 8192
if [ -z "$SCRATCH_DIR" ]; then
	echo "bench/spool.sh: could not mount the scratch ext4 file system" >&2
	exit 1
fi
echo "spool fs: $SCRATCH_FS"
echo "machine: $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
"$WORK/spoolbench" --dir "$WORK/mnt" --targets "$TARGETS" --polls "$POLLS" --counters "$COUNTERS" \
	--order "$ORDER" ${CPUPROFILE:+--cpuprofile "$CPUPROFILE"}
