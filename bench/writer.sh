#!/usr/bin/env bash
# RRD writer benchmark (issue 3). Same machine, same run, FILES RRD files of
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
# (CPU: user + system of the process over its timed part.)
# Usage: bench/writer.sh [FILES] [CLI_FILES]   (defaults 10000 500)
# Disk: each file is about 1.8 MB (40 DS x 5,744 rows x 8 B); the script
# creates three sets of FILES files plus CLI_FILES, in a temp directory.
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=${1:-10000}
CLI_FILES=${2:-500}
DS=${DS:-40}
VALUES=${VALUES:-12}
COLD=${COLD:-1}
COLDFLAG=""
[ "$COLD" = 1 ] && COLDFLAG="-cold"
export CGO_ENABLED=1
if ! command -v rrdcached >/dev/null; then
	apt-get install -y rrdcached >/dev/null
fi
RRDCACHED=$(command -v rrdcached || echo /usr/bin/rrdcached)
WORK=$(mktemp -d /tmp/spoold-bench-writer.XXXXXX)
CACHED_PID=""
cleanup() {
	if [ -n "$CACHED_PID" ]; then kill "$CACHED_PID" 2>/dev/null || true; fi
	rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/writerbench" ./rrdwriter/internal/writerbench
gcc -O2 -Wall -pthread -o "$WORK/rrdfloor" bench/rrdfloor.c $(pkg-config --cflags --libs librrd)
B="$WORK/writerbench -files $FILES -ds $DS -values $VALUES $COLDFLAG"
$B -mode create -dir "$WORK/spoold-rrd"
$B -mode create -dir "$WORK/cached-rrd"
"$WORK/writerbench" -mode create -files "$CLI_FILES" -ds "$DS" -dir "$WORK/cli-rrd"
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
	rrd_mib=$(du -sm "$WORK/spoold-rrd" | cut -f1)
	FIO_SIZE=${FIO_SIZE:-$((rrd_mib < 4096 ? rrd_mib : 4096))m}
	fio_iops=$(fio --name=writer_limit --filename="$WORK/fio.dat" --size="$FIO_SIZE" \
		--rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 \
		--runtime="${FIO_SECONDS:-10}" --time_based --output-format=json |
		python3 -c 'import json, sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))')
	sync
fi

WRITERS=${WRITERS:-4}
spoold=$($B -mode spoold -dir "$WORK/spoold-rrd" -spool "$WORK/spool" -writers "$WRITERS" ${NOPREFETCH:+-no-prefetch})

mkdir -p "$WORK/journal"
"$RRDCACHED" -g -t 4 -w 3600 -l "unix:$WORK/sock" -j "$WORK/journal" \
	-b "$WORK/cached-rrd" -B -p "$WORK/rrdcached.pid" >"$WORK/rrdcached.log" 2>&1 &
CACHED_PID=$!
for _ in $(seq 100); do [ -S "$WORK/sock" ] && break; sleep 0.1; done
rrdcached=$($B -mode rrdcached -pid "$CACHED_PID" -dir "$WORK/cached-rrd" -sock "$WORK/sock")
kill "$CACHED_PID"; wait "$CACHED_PID" 2>/dev/null || true; CACHED_PID=""

# Made now, not with the others: three sets at once may not all stay in
# the page cache (COLD=0), and the first two are done with.
$B -mode create -dir "$WORK/floor-rrd"
floor=$("$WORK/rrdfloor" ${COLDFLAG:+-c} "$WORK/floor-rrd" "$FILES" "$DS" "$VALUES" "$WRITERS")

cli=$($B -mode cli -files "$CLI_FILES" -dir "$WORK/cli-rrd")

read -r s s_pages s_rps s_cpu <<<"$spoold"
read -r c c_pages c_cpu <<<"$rrdcached"
read -r f f_cpu <<<"$floor"
python3 - "$s" "$c" "$cli" "$s_pages" "$c_pages" "$FILES" "$VALUES" "$COLD" <<'PY'
import sys
s, c, cli = (float(x) for x in sys.argv[1:4])
sp, cp, files, values, cold = sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7], sys.argv[8]
print(f"writer: spoold={s:.0f} rrdcached={c:.0f} rrdtool_cli={cli:.0f} ratio_rrdcached={s / c:.2f}")
print(f"pages written back per file update: spoold={sp} rrdcached={cp} "
      f"({files} files, {values} values each, RRD files {'dropped from the page cache before each mode' if cold == '1' else 'in the page cache'}; "
      f"spoold's include removing its entries, rrdcached's its journal)")
PY
echo "writer_floor: librrd_us=$f_cpu spoold_us=$s_cpu rrdcached_us=$c_cpu librrd=$f"
if [ "$COLD" = 1 ]; then
	echo "writer_limit: fio_iops=$fio_iops spoold_iops=$s_rps"
	echo "(fio on a $FIO_SIZE file for ${FIO_SECONDS:-10} s; RRD directory on $(df --output=source,fstype "$WORK" | tail -1 | tr -s ' '), $(findmnt -no OPTIONS -T "$WORK"))"
fi
