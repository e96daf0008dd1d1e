#!/usr/bin/env bash
# RRD writer benchmark. Same machine, same run, FILES RRD files of
# DS COUNTER data sources (profile: step 300 s, rrdwriter.DefaultRRAs), with
# VALUES pending values per file (one hour of 5-minute polls):
#   spoold:      spool entries on disk -> RRD files, entries removed (FlushAll,
#                --writers 4);
#   rrdcached:   Debian's, on a unix socket with -j journal, -t 4 threads:
#                BATCH of UPDATEs, then FLUSHALL until STATS show all written;
#   rrdtool_cli: one `rrdtool update` process per file on CLI_FILES files,
#                scaled to values/s.
# Every mode starts from the same state: dirty pages written back (sync)
# and, with COLD=1 (the default), the RRD files dropped from the page cache
# (posix_fadvise DONTNEED), so they are read from disk as in a daemon whose
# files do not all fit in memory. spoold's spool entries are written (and
# synced) before that, untimed, and stay cached, as the poller wrote them
# minutes before.
# Also reports pages written back to disk per file update (/proc/vmstat
# nr_written around a sync of the timed part) for spoold and rrdcached;
# nr_written counts every process, so the machine should be quiet.
# With COLD=1, also the limit of the RRD directory's device, same run:
#   writer_limit: fio_iops=<4 KiB random reads/s at queue depth 32, fio,
#   direct I/O, FIO_SECONDS (10) on a FIO_SIZE file (default: the size of
#   spoold's RRD files, at most 4g) in the RRD directory's file system>
#   spoold_iops=<4 KiB pages read in from disk per second during spoold's
#   timed part (/proc/vmstat pgpgin, every process)>
# and, on stderr, the reads the device completed per second and their size.
# Goal: spoold_iops >= 0.5 x fio_iops. COLD=0 prints no writer_limit line:
# cached files are not read from disk.
# And librrd's own cost, same run, on a third set of FILES files in the same
# state (synced, and dropped from the page cache with COLD=1):
#   writer_floor: librrd_us=<µs of CPU per file of bench/rrdfloor.c, which
#   makes rrdcached's call, rrd_update_r with all VALUES rows of a file,
#   and nothing else, on WRITERS threads> spoold_us=<spoold's µs of CPU
#   per file> rrdcached_us=<rrdcached's> librrd=<rrdfloor's values/s>
# (CPU: user + system of the process over its timed part.) native_us is
# the same for the native update path (writerbench -mode native: one
# rrd.Files.Update a file with all its rows, WRITERS goroutines), on a
# copy of rrdfloor's files made before rrdfloor ran (synced, and dropped
# from the page cache with COLD=1). With COLD=1 also, for those updates
# of the same files:
#   writer_pages: librrd_pages_per_file=<4 KiB pages read from the device
#   per file by rrdfloor (its own /proc/self/io read_bytes: librrd's page
#   faults and reads)> native_pages_per_file=<the same for the native
#   path> head_pages=<pages the live head of a file spans>
#   rras_per_file=<its archives>
# Goal: native_pages_per_file <= librrd_pages_per_file and <= head_pages +
# rras_per_file + 1.
# WARM=1 writes every file once, untimed, through spoold's writer and
# through rrdcached before the timed round: spoold's writer then knows its
# files (their info and the pages an update touches), as a running
# daemon's does after its first pass; without it the timed round is a
# writer's first pass after a start.
# FS=loop (root only) runs everything (RRD files, spool, rrdcached's
# journal, fio's file) on a scratch ext4 image instead, loop-mounted
# noatime without discard, with direct I/O to its image (so that pages
# dropped from its page cache are read from the disk, not from the image's
# own cache), removed on exit: the root file system here is mounted with
# online discard, where every unlink waits for a TRIM, the setting `spoold
# doctor` tells operators to change. With FS=loop, pgpgin counts each page
# twice (read from the loop device and from the disk under it) and fio reads
# through the loop device: compare writer_limit only without FS=loop.
# SEGMENT_MEMORY=N gives spoold's spool N bytes of --segment-memory (the
# daemon's default otherwise; the entries are appended by the same process,
# so they are parsed from memory as far as it holds them); NOPREFETCH=1
# turns the writer's prefetch off.
# Usage: bench/writer.sh [FILES] [CLI_FILES]   (defaults 4000 500)
# Disk: each file is about 1.8 MB (40 DS x 5,744 rows x 8 B); the script
# creates four sets of FILES files plus CLI_FILES, in a temp directory
# (about 36 GB with the defaults), and checks the free space first.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
FILES=${1:-4000}
CLI_FILES=${2:-500}
DS=${DS:-40}
VALUES=${VALUES:-12}
COLD=${COLD:-1}
COLDFLAG=""
[ "$COLD" = 1 ] && COLDFLAG="-cold"
WARMFLAG=""
[ "${WARM:-0}" = 1 ] && WARMFLAG="-warm"
export CGO_ENABLED=1
if ! command -v rrdcached >/dev/null; then
	apt-get install -y rrdcached >/dev/null
fi
RRDCACHED=$(command -v rrdcached || echo /usr/bin/rrdcached)
WORK=$(mktemp -d /tmp/spoold-bench-writer.XXXXXX)
# Four sets of RRD files, the CLI set, fio's file (at most 4 GiB) and room
# for the spool and the journal.
need_gib=$(((4 * FILES + CLI_FILES) * 2 / 1000 + 6))
free_gib=$(($(df -Pk "$WORK" | awk 'NR==2 {print $4}') / 1048576))
echo "# disk: needs about $need_gib GiB in $WORK ($free_gib GiB free)"
if [ "$need_gib" -gt "$free_gib" ]; then
	echo "bench/writer.sh: not enough space in $WORK for $FILES files: $need_gib GiB needed, $free_gib GiB free" >&2
	rmdir "$WORK"
	exit 1
fi
CACHED_PID=""
. bench/scratchfs.sh
cleanup() {
	if [ -n "$CACHED_PID" ]; then kill "$CACHED_PID" 2>/dev/null || true; fi
	scratchfs_cleanup
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ "${FS:-}" = loop ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench/writer.sh: FS=loop needs root (it loop-mounts a scratch ext4 file system)" >&2
		exit 1
	fi
	SCRATCH_LOOP_FLAGS=--direct-io=on scratchfs_mount "$WORK" "${need_gib}G" "$WORK/mnt"
	if [ -z "$SCRATCH_DIR" ]; then
		echo "bench/writer.sh: could not mount the scratch ext4 file system" >&2
		exit 1
	fi
	echo "# files: $SCRATCH_FS"
	DATA="$SCRATCH_DIR"
else
	DATA="$WORK"
fi

go build -o "$WORK/writerbench" ./bench/writerbench
gcc -O2 -Wall -pthread -o "$WORK/rrdfloor" bench/rrdfloor.c $(pkg-config --cflags --libs librrd)
B="$WORK/writerbench -files $FILES -ds $DS -values $VALUES $COLDFLAG"
if [ -n "$WARMFLAG" ]; then echo "# WARM=1: spoold and rrdcached write every file once, untimed, before the timed round"; fi
$B -mode create -dir "$DATA/spoold-rrd"
$B -mode create -dir "$DATA/cached-rrd"
"$WORK/writerbench" -mode create -files "$CLI_FILES" -ds "$DS" -dir "$DATA/cli-rrd"
sync

fio_iops=""
if [ "$COLD" = 1 ]; then
	if ! command -v fio >/dev/null; then
		apt-get install -y fio >/dev/null
	fi
	# Removed at exit, not now: on a file system with online discard the
	# unlink's discards would land in spoold's timed part.
	# As large as spoold's RRD files (at most 4 GiB), so that fio spreads
	# its reads as widely (a small file may sit in a virtual disk's host
	# cache).
	rrd_mib=$(du -sm "$DATA/spoold-rrd" | cut -f1)
	FIO_SIZE=${FIO_SIZE:-$((rrd_mib < 4096 ? rrd_mib : 4096))m}
	fio_iops=$(fio --name=writer_limit --filename="$DATA/fio.dat" --size="$FIO_SIZE" \
		--rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 \
		--runtime="${FIO_SECONDS:-10}" --time_based --output-format=json |
		python3 -c 'import json, sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))')
	sync
fi

WRITERS=${WRITERS:-4}
spoold=$($B -mode spoold $WARMFLAG -dir "$DATA/spoold-rrd" -spool "$DATA/spool" -writers "$WRITERS" ${NOPREFETCH:+-no-prefetch} ${SEGMENT_MEMORY:+-segment-memory "$SEGMENT_MEMORY"})

mkdir -p "$DATA/journal"
"$RRDCACHED" -g -t 4 -w 3600 -l "unix:$WORK/sock" -j "$DATA/journal" \
	-b "$DATA/cached-rrd" -B -p "$WORK/rrdcached.pid" >"$WORK/rrdcached.log" 2>&1 &
CACHED_PID=$!
for _ in $(seq 100); do [ -S "$WORK/sock" ] && break; sleep 0.1; done
rrdcached=$($B -mode rrdcached $WARMFLAG -pid "$CACHED_PID" -dir "$DATA/cached-rrd" -sock "$WORK/sock")
kill "$CACHED_PID"; wait "$CACHED_PID" 2>/dev/null || true; CACHED_PID=""

# Made now, not with the others: four sets at once may not all stay in
# the page cache (COLD=0), and the first two are done with.
# librrd and the native path update the same files: a set and its copy
# (the same bytes, the same current rows; rrdtool create picks those at
# random), with the same rows.
$B -mode create -dir "$DATA/floor-rrd"
cp -a "$DATA/floor-rrd" "$DATA/native-rrd"
floor=$("$WORK/rrdfloor" ${COLDFLAG:+-c} "$DATA/floor-rrd" "$FILES" "$DS" "$VALUES" "$WRITERS")
native=$($B -mode native -dir "$DATA/native-rrd" -writers "$WRITERS")
rm -rf "$DATA/floor-rrd" "$DATA/native-rrd"

cli=$($B -mode cli -files "$CLI_FILES" -dir "$DATA/cli-rrd")

read -r s s_pages s_rps s_cpu <<<"$spoold"
read -r c c_pages c_cpu <<<"$rrdcached"
read -r f f_cpu floor_pages <<<"$floor"
read -r n n_cpu n_pages head_pages rras <<<"$native"
python3 - "$s" "$c" "$cli" "$s_pages" "$c_pages" "$FILES" "$VALUES" "$COLD" <<'PY'
import sys
s, c, cli = (float(x) for x in sys.argv[1:4])
sp, cp, files, values, cold = sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7], sys.argv[8]
print(f"writer: spoold={s:.0f} rrdcached={c:.0f} rrdtool_cli={cli:.0f} ratio_rrdcached={s / c:.2f}")
print(f"pages written back per file update: spoold={sp} rrdcached={cp} "
      f"({files} files, {values} values each, RRD files {'dropped from the page cache before each mode' if cold == '1' else 'in the page cache'}; "
      f"spoold's include removing its entries, rrdcached's its journal)")
PY
echo "writer_floor: librrd_us=$f_cpu native_us=$n_cpu spoold_us=$s_cpu rrdcached_us=$c_cpu librrd=$f native=$n"
if [ "$COLD" = 1 ]; then
	echo "writer_pages: librrd_pages_per_file=$floor_pages native_pages_per_file=$n_pages head_pages=$head_pages rras_per_file=$rras"
	echo "writer_limit: fio_iops=$fio_iops spoold_iops=$s_rps"
	echo "(fio on a $FIO_SIZE file for ${FIO_SECONDS:-10} s; RRD directory on $(df --output=source,fstype "$DATA" | tail -1 | tr -s ' '), $(findmnt -no OPTIONS -T "$DATA"))"
fi
