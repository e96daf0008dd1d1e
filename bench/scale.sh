#!/usr/bin/env bash
# spoold end to end at fleet size, beside collectd + rrdcached on the same
# simulated devices. Everything runs as a user runs it: `spoold simulate`
# serves DEVICES devices of INTERFACES interfaces on 127.0.0.1, the daemon
# polls them with the if-mib profile every INTERVAL and writes real RRD
# files; it is measured from outside only (/proc, the block layer, /metrics,
# the admin API's /graph).
#
# 1. The fleet. The run waits until every interface has its RRD file
#    (created_files_per_s: files over the time from the first create to the
#    last), then measures CYCLES poll cycles:
#      scale: devices= interfaces= cycle_s_p50= cycle_s_max= overruns=
#        cpu_us_per_if_poll= write_cpu_us_per_file= disk_kib_per_if_poll=
#        rss_kib_per_if= created_files_per_s= backlog_max_s= graph_p99_ms=
#    cpu: user + system of the daemon over the cycles, per interface and
#    poll; write_cpu_us_per_file: that CPU's share in the writer (perf
#    samples with an rrdwriter or rrd frame) per RRD file update, and on
#    stderr the samples' share of each part of the daemon (cpu_parts) and
#    its system calls per interface and poll (perf stat's count of them);
#    disk: the daemon's write_bytes (/proc/PID/io: spool and RRD pages it
#    dirtied) per interface and poll, the device's sectors on stderr;
#    rss: the largest VmRSS sampled (every second), per interface, and on
#    stderr where the memory is at the window's end; backlog:
#    the largest spoold_writer_oldest_pending_age_seconds (/metrics is read
#    every 5 s, see scrape); graph: a random interface's
#    traffic graph drawn through /graph about twice a second meanwhile.
# 2. The restart. SIGKILL (the worst case: nothing flushed), then the
#    same command on the spool it left:
#      scale_restart: walk_s= first_write_s= drained_s= graph_p99_ms=
#    walk: until the loader's walk ended; first_write: until the first RRD
#    update; drained: until no entry polled before the restart is pending;
#    graphs drawn from the restart until drained.
# 3. The peer (PEER=0 skips it). collectd 5 (its snmp plugin walking the
#    same 10 IF-MIB columns, Table true, ifName the instance, ReadThreads
#    PEER_THREADS) writing through Debian's rrdcached (-w WRITE_DELAY
#    -z WRITE_JITTER, -j journal), and then spoold again, on the first
#    PEER_DEVICES devices, each measured for PEER_CYCLES intervals once
#    its files exist:
#      scale_peer: devices= interfaces= spoold_cpu_us_per_if_poll=
#        peer_cpu_us_per_if_poll= spoold_disk_kib_per_if_poll=
#        peer_disk_kib_per_if_poll= spoold_rss_kib_per_if= peer_rss_kib_per_if=
#    (peer: collectd and rrdcached together). peer_polled on stderr is the
#    share of the expected values rrdcached received: below 1, collectd did
#    not keep up with that many devices.
#
# RRA=small gives every file 408 rows (an hour of 30 s polls, a day of
# 5-minute averages and maxima: about 35 KB with 10 data sources) through
# a profiles file's rra lines, and collectd the same spans, for fleets past
# this disk; the default is the daemon's default archives (790 KB a file at
# a 30 s step) and collectd's.
# Run as root, all files are on a scratch ext4 image of their own
# (bench/scratchfs.sh: noatime, no discard), sized to fit; the output says
# which. The script checks the free space first and says what it uses.
#
# Usage: [RRA=small] bench/scale.sh [DEVICES] [INTERFACES] [CYCLES]
#   (defaults 1000 48 10; INTERVAL=30s WRITE_DELAY=90 WRITE_JITTER=10
#   PEER=1 PEER_DEVICES=200 PEER_CYCLES=6 PEER_THREADS=16; SPOOLD_FLAGS:
#   more daemon flags, split at blanks, for a run beside one with the
#   defaults; PERF_OUT=FILE keeps the window's perf samples there;
#   HEAP_OUT=FILE runs the daemon with --admin-pprof and keeps its heap
#   profile at the window's end there: go tool pprof -sample_index
#   inuse_space FILE)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
DEVICES=${1:-1000}
IFACES=${2:-48}
CYCLES=${3:-10}
INTERVAL=${INTERVAL:-30s}
IV=${INTERVAL%s}
WRITE_DELAY=${WRITE_DELAY:-90}
WRITE_JITTER=${WRITE_JITTER:-10}
RRA=${RRA:-default}
PEER=${PEER:-1}
PEER_DEVICES=${PEER_DEVICES:-200}
PEER_DEVICES=$((PEER_DEVICES < DEVICES ? PEER_DEVICES : DEVICES))
PEER_CYCLES=${PEER_CYCLES:-6}
PEER_THREADS=${PEER_THREADS:-16}
SIM_PORT=${SIM_PORT:-21161}
ADMIN_PORT=${ADMIN_PORT:-21780}
export CGO_ENABLED=1
HZ=$(getconf CLK_TCK)

case "$RRA" in
small) FILE_KB=40 PEER_FILE_KB=20 ;;
default) FILE_KB=790 PEER_FILE_KB=300 ;;
*) echo "scale.sh: RRA=$RRA: want small or default" >&2; exit 2 ;;
esac
FILES=$((DEVICES * IFACES))
# --keys-zone as tuning.md sizes it: 120 bytes a key plus its name (about
# 30) and a few pending segments, with room to spare; the default 64m
# holds about 400,000 keys of one segment, fewer once a backlog builds.
KEYS_ZONE=$((FILES * 400 / 1048576 + 64))m
PEER_FILES=$((PEER_DEVICES * IFACES))
# The fleet's files and spool, then the subset's twice (spoold's;
# collectd's six files an interface), one set at a time; a tenth more for
# rrdcached's journal and the file system. The spool takes a 4 KiB block a
# segment, up to four a key with a backlog and the restart's new segments
# (SPOOL_KB): at 10,000 devices a tenth of the small files' size was not
# enough, and the restart's polls failed on a full disk.
SPOOL_KB=16
NEED_KB=$(((FILES * (FILE_KB + SPOOL_KB) > PEER_FILES * (FILE_KB + SPOOL_KB + 6 * PEER_FILE_KB) ? FILES * (FILE_KB + SPOOL_KB) : PEER_FILES * (FILE_KB + SPOOL_KB + 6 * PEER_FILE_KB)) * 11 / 10 + 1048576))
for t in rrdcached collectd rrdtool; do
	command -v $t >/dev/null || scripts/install-deps.sh
done
command -v perf >/dev/null || { [ "$(id -u)" = 0 ] && apt-get install -y -qq linux-perf >/dev/null 2>&1; } || true

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/spoold-bench-scale.XXXXXX")
FREE_KB=$(df -Pk "$WORK" | awk 'NR==2 {print $4}')
# The open-files limit of the packaged systemd unit (LimitNOFILE): half of
# it holds the open spool segments' descriptors (--segment-open-files auto).
ulimit -n 262144 2>/dev/null || true
echo "# bench/scale.sh $DEVICES $IFACES $CYCLES (RRA=$RRA INTERVAL=$INTERVAL WRITE_DELAY=$WRITE_DELAY WRITE_JITTER=$WRITE_JITTER${SPOOLD_FLAGS:+ SPOOLD_FLAGS=\"$SPOOLD_FLAGS\"}) on $(uname -r), $(nproc) cores, $(date -u +%Y-%m-%d), open-files limit $(ulimit -n)"
echo "# disk: needs about $((NEED_KB / 1048576 + 1)) GiB in $WORK ($((FREE_KB / 1048576)) GiB free)"
if [ "$NEED_KB" -gt "$FREE_KB" ]; then
	echo "scale.sh: not enough space in $WORK: $((NEED_KB / 1048576 + 1)) GiB needed, $((FREE_KB / 1048576)) GiB free; use RRA=small or fewer devices" >&2
	rmdir "$WORK"
	exit 1
fi
PIDS=()
stop_all() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}
. bench/scratchfs.sh
trap 'stop_all; scratchfs_cleanup; rm -rf "$WORK"' EXIT
scratchfs_mount "$WORK" "$((NEED_KB / 1048576 + 1))G" "$WORK/fs"
echo "# files: $SCRATCH_FS"
go build -o "$WORK/bin/spoold" ./cmd/spoold
SPOOLD=$WORK/bin/spoold
FS=$WORK/fs

# --- helpers: a process measured from /proc --------------------------------
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
wbytes() { awk '/^write_bytes:/ {print $2}' "/proc/$1/io"; }
sum() { local s=0 p; for p in "${@:2}"; do s=$((s + $($1 "$p"))); done; echo $s; }
# scrape reads the daemon's /metrics once; metric NAME [LABELS] is a value
# of the last scrape (0 when absent). A scrape is not free: at 4,000 devices
# it is 1.2 MB of per-target series and about 0.1 s of the daemon's CPU, so
# the loops below scrape once a round (every 5 s while the fleet is
# measured, as a Prometheus scraping often would), not once a value.
scrape() { curl -sf -o "$WORK/metrics" "http://127.0.0.1:$ADMIN_PORT/metrics" 2>/dev/null || : >"$WORK/metrics"; }
metric() {
	awk -v n="$1" -v l="${2:-}" '!f && ($1 == n || (l != "" && index($1, n "{") == 1 && index($1, l))) {v=$2; f=1} END {print f ? v : 0}' "$WORK/metrics"
}
# sectors written by the block device under DIR (the scratch loop device,
# or the disk of the root file system).
sectors() {
	local dev
	dev=$(basename "$(findmnt -no SOURCE -T "$1")")
	[ -r "/sys/class/block/$dev/stat" ] && awk '{print $7}' "/sys/class/block/$dev/stat" || echo 0
}
p99() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR) {i=int(NR*0.99+0.999); print v[i < 1 ? 1 : i]} else print "NA"}'; }
p50() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print "NA"}'; }
ms() { awk -v s="$1" 'BEGIN {printf "%d", s * 1000}'; }
# graphs OUT DEVICES: draws a random interface's traffic graph about
# twice a second until killed, one time in ms a line to OUT.
graphs() {
	local out=$1 n=$2 d key t
	while :; do
		d=$(printf 'dev%05d' $((RANDOM % n)))
		key=$(cd "$FS/rrd/$d" 2>/dev/null && ls | shuf -n1 | sed 's/\.rrd$//') || true
		if [ -n "${key:-}" ]; then
			t=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "http://127.0.0.1:$ADMIN_PORT/graph?key=$d/$key&template=traffic") || true
			case "$t" in 200\ *) ms "${t#* }" >>"$out"; echo >>"$out" ;; *) echo "graph $d/$key: $t" >>"$out.err" ;; esac
		fi
		sleep 0.5
	done
}
wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds
	local limit=$1 what=$2 end=$((SECONDS + $1))
	shift 2
	until "$@"; do
		if [ $SECONDS -ge $end ]; then echo "scale.sh: $what not within ${limit}s" >&2; return 1; fi
		sleep 1
	done
}

# --- the simulated fleet and the daemon -------------------------------------
PROFILE=if-mib
PROFILES_ARG=()
if [ "$RRA" = small ]; then
	PROFILE=if-small
	cat >"$WORK/profiles.conf" <<-EOF
	# bench/scale.sh RRA=small: the if-mib profile with an hour of polls and a day of 5-minute averages and maxima
	profile if-small
	  use if-mib
	  rra RRA:AVERAGE:0.5:1:120
	  rra RRA:AVERAGE:0.5:10:144
	  rra RRA:MAX:0.5:10:144
	EOF
	PROFILES_ARG=(--profiles "$WORK/profiles.conf")
fi
"$SPOOLD" simulate --devices "$DEVICES" --interfaces "$IFACES" --listen "127.0.0.1:$SIM_PORT" \
	--targets-out "$WORK/targets.conf" --targets-profile "$PROFILE" >"$WORK/simulate.log" 2>&1 &
SIM=$!
PIDS+=("$SIM")
sim_ready() { # the targets file written, or the simulator gone (its log says why)
	if ! kill -0 "$SIM" 2>/dev/null; then
		echo "scale.sh: the simulator exited:" >&2
		tail -5 "$WORK/simulate.log" >&2
		exit 1
	fi
	test -s "$WORK/targets.conf"
}
if ! wait_for 30 "the simulator's targets file" sim_ready; then
	tail -5 "$WORK/simulate.log" >&2
	exit 1
fi
mkdir -p "$FS/spool" "$FS/rrd"
DAEMON=()
# syscall_census CSV N: the system calls of perf stat's CSV (counts of
# syscalls:sys_enter_* tracepoints, and all of them as
# raw_syscalls:sys_enter) per N, the most frequent first.
syscall_census() {
	awk -F, -v n="$2" '$1 ~ /^[0-9]+$/ && $3 == "raw_syscalls:sys_enter" {all = $1; next}
		$1 ~ /^[0-9]+$/ && $1 > 0 {name = $3; sub(/^syscalls:sys_enter_/, "", name); c[name] = $1}
		END {
			if (!all) {print "none counted"; exit}
			k = 0
			while (k < 12) {
				best = ""
				for (s in c) if (best == "" || c[s] > c[best]) best = s
				if (best == "") break
				printf "%s %.2f, ", best, c[best] / n; delete c[best]; k++
			}
			printf "all %.2f", all / n
		}' "$1"
}

# cpu_parts PERF_DATA: the share of the samples of each part of the
# daemon, by the first pattern a sample's stack matches, in this order.
cpu_parts() {
	perf script -i "$1" -F ip,sym 2>/dev/null | awk '
		function part(s) {
			if (s ~ /gcBgMarkWorker|gcDrain|bgsweep|bgscavenge|gcAssist|markroot|sweepone/) return "gc"
			if (s ~ /rrdwriter\.\(\*removals\)/) return "removal"
			if (s ~ /spoold\/rrdwriter\.|spoold\/rrd\./) return "writer"
			if (s ~ /spool\.\(\*Spool\)\.Append|intake\.\(\*Intake\)\.Append/) return "append"
			if (s ~ /gosnmp/) return "snmp"
			if (s ~ /spoold\/poller\./) return "poller"
			if (s ~ /spoold\/admin\.|spoold\/graph\.|net\/http\.|client_golang/) return "admin"
			if (s ~ /runtime\.(sysmon|schedule|findRunnable|park_m|goexit0|mstart)/) return "scheduler"
			return "other"
		}
		/^[[:space:]]*$/ {if (st != "") {n[part(st)]++; t++}; st = ""; next}
		{st = st " " $2}
		END {
			if (st != "") {n[part(st)]++; t++}
			split("snmp poller append writer removal gc scheduler admin other", o, " ")
			for (i = 1; i <= 9; i++) printf "%s%s %.1f%%", (i > 1 ? ", " : ""), o[i], t ? 100 * n[o[i]] / t : 0
		}'
}
start_daemon() { # start_daemon TARGETS: sets DAEMON_PID
	DAEMON=("$SPOOLD" --targets "$1" "${PROFILES_ARG[@]}" --poll-interval "$INTERVAL"
		--write-delay "${WRITE_DELAY}s" --write-jitter "${WRITE_JITTER}s"
		--spool-dir "$FS/spool" --rrd-dir "$FS/rrd" --admin-listen "127.0.0.1:$ADMIN_PORT"
		--max-new-files-per-hour 0 --keys-zone "$KEYS_ZONE" --log-level warn)
	# shellcheck disable=SC2206 # split at blanks, as documented
	DAEMON+=(${SPOOLD_FLAGS:-})
	[ -n "${HEAP_OUT:-}" ] && DAEMON+=(--admin-pprof)
	"${DAEMON[@]}" >>"$WORK/daemon.log" 2>&1 &
	DAEMON_PID=$!
	PIDS+=("$DAEMON_PID")
	wait_for 60 "the daemon's admin API" curl -sf -o /dev/null "http://127.0.0.1:$ADMIN_PORT/metrics"
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a >= b)}'; }
# spool_ok PHASE: fails the run if the daemon could not spool a poll result
# (a full scratch disk, say): its figures would not be the fleet's.
spool_ok() {
	scrape
	local n
	n=$(metric spoold_spool_write_errors_total)
	if [ "$n" != 0 ]; then
		echo "scale.sh: $1: $n spool writes failed (the log: $(grep -m1 -o 'err=.*' "$WORK/daemon.log")); no figures" >&2
		exit 1
	fi
}
created_all() { scrape; ge "$(metric spoold_writer_creates_total)" "$1"; }

# created WANT: waits until the daemon created WANT files; prints files/s.
created() {
	local want=$1 first=0 now c
	while :; do
		scrape
		c=$(metric spoold_writer_creates_total)
		now=$(date +%s.%N)
		if [ "$first" = 0 ] && ge "$c" 1; then first=$now; fi
		if ge "$c" "$want"; then break; fi
		kill -0 "$DAEMON_PID" || { echo "scale.sh: the daemon exited" >&2; tail "$WORK/daemon.log" >&2; exit 1; }
		sleep 1
	done
	awk -v n="$want" -v a="$first" -v b="$now" 'BEGIN {printf "%d", n / (b - a > 1 ? b - a : 1)}'
}

# --- 1. the fleet --------------------------------------------------------------
start_daemon "$WORK/targets.conf"
echo "# $FILES files; waiting for the daemon to create them (the first after the write delay, ${WRITE_DELAY}s)" >&2
CREATED_PER_S=$(created "$FILES")
# The window: CYCLES cycles from the end of the next one.
scrape
seq0=$(metric spoold_poller_last_cycle_seq)
seq_moved() { scrape; [ "$(metric spoold_poller_last_cycle_seq)" != "$seq0" ]; }
wait_for $((2 * IV + 30)) "the next poll cycle" seq_moved
seq0=$(metric spoold_poller_last_cycle_seq)
cpu0=$(cpu_ticks "$DAEMON_PID") wb0=$(wbytes "$DAEMON_PID") sec0=$(sectors "$FS/rrd") up0=$(metric spoold_writer_update_calls_total)
: >"$WORK/graphs" >"$WORK/cycles"
graphs "$WORK/graphs" "$DEVICES" &
GRAPHS=$!
PERF=""
if command -v perf >/dev/null; then
	perf record -q -F 199 -g -p "$DAEMON_PID" -o "$WORK/perf.data" -- sleep $((CYCLES * IV)) >"$WORK/perf.log" 2>&1 &
	PERF=$!
	# and the daemon's system calls, counted by the kernel's tracepoints:
	# all, and those it makes most (with every syscalls:sys_enter_*
	# tracepoint on the daemon's threads, perf counted nothing)
	calls=raw_syscalls:sys_enter
	for c in openat2 openat write read pwrite64 pread64 preadv2 close unlinkat newfstat fcntl fadvise64 \
		futex nanosleep epoll_pwait madvise getdents64 fdatasync syncfs mkdirat ftruncate tgkill; do
		calls+=,syscalls:sys_enter_$c
	done
	perf stat -x, -e "$calls" -p "$DAEMON_PID" -o "$WORK/syscalls.csv" -- sleep $((CYCLES * IV)) >"$WORK/perf-stat.log" 2>&1 &
	SYSCALLS=$!
fi
rss_max=0 backlog_max=0 seq=$seq0 overruns=0 mem_max=0 round=0
while [ "$seq" -lt $((seq0 + CYCLES)) ]; do
	sleep 1
	r=$(rss_kib "$DAEMON_PID")
	[ "$r" -gt "$rss_max" ] && rss_max=$r
	round=$((round + 1))
	[ $((round % 5)) = 0 ] || continue
	scrape
	b=$(metric spoold_writer_oldest_pending_age_seconds)
	ge "$b" "$backlog_max" && backlog_max=$b
	m=$(metric spoold_spool_memory_bytes)
	ge "$m" "$mem_max" && mem_max=$m
	s=$(metric spoold_poller_last_cycle_seq)
	if [ "$s" != "$seq" ]; then
		seq=$s
		metric spoold_poller_last_cycle_duration_seconds >>"$WORK/cycles"
		overruns=$((overruns + $(metric spoold_poller_last_cycle_devices 'result="overrun"')))
	fi
done
cpu1=$(cpu_ticks "$DAEMON_PID") wb1=$(wbytes "$DAEMON_PID") sec1=$(sectors "$FS/rrd") up1=$(scrape && metric spoold_writer_update_calls_total)
mib() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1048576}'; }
echo "# load average at the window's end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (the simulator and the graph requests included)" >&2
echo "# memory at the window's end (MiB): VmRSS $(($(rss_kib "$DAEMON_PID") / 1024)), anonymous $(($(awk '/^RssAnon:/ {print $2}' "/proc/$DAEMON_PID/status") / 1024)), file $(($(awk '/^RssFile:/ {print $2}' "/proc/$DAEMON_PID/status") / 1024)); Go heap in use $(mib "$(metric go_memstats_heap_inuse_bytes)"), free and kept $(mib "$(awk -v i="$(metric go_memstats_heap_idle_bytes)" -v r="$(metric go_memstats_heap_released_bytes)" 'BEGIN {print i - r}')"), stacks $(mib "$(metric go_memstats_stack_inuse_bytes)"), runtime $(mib "$(awk -v a="$(metric go_memstats_mspan_sys_bytes)" -v b="$(metric go_memstats_gc_sys_bytes)" -v c="$(metric go_memstats_other_sys_bytes)" -v d="$(metric go_memstats_buck_hash_sys_bytes)" 'BEGIN {print a + b + c + d}')")" >&2
if [ -n "${HEAP_OUT:-}" ]; then
	curl -sf -o "$HEAP_OUT" "http://127.0.0.1:$ADMIN_PORT/debug/pprof/heap"
	echo "# heap profile at the window's end kept in $HEAP_OUT (go tool pprof -sample_index inuse_space $HEAP_OUT)" >&2
fi
kill "$GRAPHS"; wait "$GRAPHS" 2>/dev/null || true
polls=$((FILES * CYCLES))
updates=$((up1 - up0))
write_us=NA
if [ -n "$PERF" ]; then
	wait "$PERF" 2>/dev/null || true
	# the share of samples with a frame in package rrdwriter or rrd
	share=$(perf script -i "$WORK/perf.data" -F ip,sym 2>/dev/null | awk '
		/^[[:space:]]*$/ {if (n) {t++; if (w) ws++}; n=0; w=0; next}
		{n++; if ($0 ~ /spoold\/rrdwriter\.|spoold\/rrd\./) w=1}
		END {if (n) {t++; if (w) ws++}; if (t) printf "%.4f", ws / t; else print "NA"}')
	[ "$share" != NA ] && [ "$updates" -gt 0 ] &&
		write_us=$(awk -v c=$((cpu1 - cpu0)) -v hz="$HZ" -v s="$share" -v u="$updates" 'BEGIN {printf "%.0f", c / hz * 1e6 * s / u}')
	echo "# writer: ${share} of the daemon's perf samples, $updates file updates in the window" >&2
	echo "# cpu by part (perf samples: gc = the collector's marking, sweeping and assists; removal = the writer's unlinks): $(cpu_parts "$WORK/perf.data")" >&2
	wait "$SYSCALLS" 2>/dev/null || true
	echo "# system calls an interface and poll (perf stat): $(syscall_census "$WORK/syscalls.csv" $((FILES * CYCLES)))" >&2
	if [ -n "${PERF_OUT:-}" ]; then
		cp "$WORK/perf.data" "$PERF_OUT"
		echo "# perf samples of the window kept in $PERF_OUT (perf report -i $PERF_OUT)" >&2
	fi
fi
spool_ok "the fleet"
echo "# spool memory (--segment-memory) at most $(awk -v m="$mem_max" -v n="$FILES" 'BEGIN {printf "%.0f bytes, %.2f KiB per interface", m, m / 1024 / n}'), part of the RSS" >&2
echo "# block layer under the files: $(((sec1 - sec0) / 2 / CYCLES / (FILES > 0 ? FILES : 1))) KiB per interface and poll written to the device ($(((sec1 - sec0) / 2048)) MiB, every process)" >&2
echo "scale: devices=$DEVICES interfaces=$FILES cycle_s_p50=$(p50 "$WORK/cycles") cycle_s_max=$(sort -n "$WORK/cycles" | tail -1) overruns=$overruns" \
	"cpu_us_per_if_poll=$(awk -v c=$((cpu1 - cpu0)) -v hz="$HZ" -v p=$polls 'BEGIN {printf "%.1f", c / hz * 1e6 / p}')" \
	"write_cpu_us_per_file=$write_us" \
	"disk_kib_per_if_poll=$(awk -v b=$((wb1 - wb0)) -v p=$polls 'BEGIN {printf "%.2f", b / 1024 / p}')" \
	"rss_kib_per_if=$(awk -v r="$rss_max" -v n="$FILES" 'BEGIN {printf "%.2f", r / n}')" \
	"created_files_per_s=$CREATED_PER_S backlog_max_s=$backlog_max graph_p99_ms=$(p99 "$WORK/graphs")"

# --- 2. the restart ------------------------------------------------------------
kill -9 "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
t0=$(date +%s.%N)
: >"$WORK/graphs"
start_daemon "$WORK/targets.conf"
graphs "$WORK/graphs" "$DEVICES" &
GRAPHS=$!
walk_s="" first_s="" drained_s=""
since() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'; }
end=$((SECONDS + 900))
while [ -z "$drained_s" ] && [ $SECONDS -lt $end ]; do
	scrape
	if [ -z "$walk_s" ] && ge "$(metric spoold_loader_walk_end_time_seconds)" "$t0"; then walk_s=$(since); fi
	if [ -z "$first_s" ] && ge "$(metric spoold_writer_update_calls_total)" 1; then first_s=$(since); fi
	if [ -n "$walk_s" ]; then
		o=$(metric spoold_index_oldest_pending_time_seconds)
		if ge "$o" "$t0" || [ "$(metric spoold_index_entries)" = 0 ]; then drained_s=$(since); fi
	fi
	sleep 0.5
done
sleep 5 # graphs a little past the drain
kill "$GRAPHS"; wait "$GRAPHS" 2>/dev/null || true
spool_ok "the restart"
echo "scale_restart: walk_s=${walk_s:-NA} first_write_s=${first_s:-NA} drained_s=${drained_s:-NA} graph_p99_ms=$(p99 "$WORK/graphs")"
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
rm -rf "$FS/spool" "$FS/rrd"
[ "$PEER" = 0 ] && exit 0

# --- 3. the peer, and spoold, on the first PEER_DEVICES devices ---------------
awk -v n="$PEER_DEVICES" '/^#|^defaults|^$/ {print; next} c++ < n' "$WORK/targets.conf" >"$WORK/targets-peer.conf"
# steady PIDS...: measures PEER_CYCLES intervals of wall time; prints
# "cpu_us disk_kib rss_kib" per interface (and poll).
steady() {
	local c0 w0 t0 r=0 x end=$((SECONDS + PEER_CYCLES * IV))
	c0=$(sum cpu_ticks "$@") w0=$(sum wbytes "$@") t0=$(date +%s.%N)
	while [ $SECONDS -lt $end ]; do
		sleep 1
		x=$(sum rss_kib "$@")
		if [ "$x" -gt "$r" ]; then r=$x; fi
	done
	awk -v c=$(($(sum cpu_ticks "$@") - c0)) -v w=$(($(sum wbytes "$@") - w0)) -v r="$r" -v hz="$HZ" \
		-v t="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')" -v iv="$IV" -v n="$PEER_FILES" \
		'BEGIN {p = n * t / iv; printf "%.1f %.2f %.2f %.1f\n", c / hz * 1e6 / p, w / 1024 / p, r / n, t}'
}
mkdir -p "$FS/spool" "$FS/rrd"
start_daemon "$WORK/targets-peer.conf"
created "$PEER_FILES" >/dev/null
read -r s_cpu s_disk s_rss _ < <(steady "$DAEMON_PID")
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true
rm -rf "$FS/spool" "$FS/rrd"

# collectd: one Data block per collectd type, the same 10 columns as the
# if-mib profile, 64-bit counters; rrdcached with the daemon's write delay.
mkdir -p "$FS/peer/rrd" "$FS/peer/journal"
rrdcached -g -l "unix:$WORK/rrdcached.sock" -j "$FS/peer/journal" -b "$FS/peer/rrd" -B -F \
	-w "$WRITE_DELAY" -z "$WRITE_JITTER" -t 4 -p "$WORK/rrdcached.pid" >"$WORK/rrdcached.log" 2>&1 &
RRDC=$!
PIDS+=("$RRDC")
wait_for 30 "rrdcached's socket" test -S "$WORK/rrdcached.sock"
RRATS="RRATimespan 3600
  RRATimespan 86400
  RRATimespan 604800
  RRATimespan 2678400
  RRATimespan 31622400"
[ "$RRA" = small ] && RRATS="RRARows 120
  RRATimespan 3600
  RRATimespan 86400"
data() { # data NAME TYPE PREFIX OID...
	local name=$1 type=$2 prefix=$3
	shift 3
	printf '  <Data "%s">\n    Type "%s"\n    Table true\n    Instance ".1.3.6.1.2.1.31.1.1.1.1"\n' "$name" "$type"
	[ -n "$prefix" ] && printf '    InstancePrefix "%s"\n' "$prefix"
	printf '    Values'; printf ' "%s"' "$@"; printf '\n  </Data>\n'
}
{
	cat <<-EOF
	Hostname "spoold-bench"
	FQDNLookup false
	BaseDir "$WORK"
	PIDFile "$WORK/collectd.pid"
	TypesDB "/usr/share/collectd/types.db"
	Interval $IV
	ReadThreads $PEER_THREADS
	AutoLoadPlugin false
	LoadPlugin logfile
	<Plugin logfile>
	  LogLevel warning
	  File "$WORK/collectd.log"
	</Plugin>
	LoadPlugin rrdcached
	<Plugin rrdcached>
	  DaemonAddress "unix:$WORK/rrdcached.sock"
	  DataDir "$FS/peer/rrd"
	  CreateFiles true
	  CreateFilesAsync false
	  StepSize $IV
	  HeartBeat $((2 * IV))
	  $RRATS
	</Plugin>
	LoadPlugin snmp
	<Plugin snmp>
	EOF
	data octets if_octets "" .1.3.6.1.2.1.31.1.1.1.6 .1.3.6.1.2.1.31.1.1.1.10
	data packets if_packets "" .1.3.6.1.2.1.31.1.1.1.7 .1.3.6.1.2.1.31.1.1.1.11
	data errors if_errors "" .1.3.6.1.2.1.2.2.1.14 .1.3.6.1.2.1.2.2.1.20
	data discards if_dropped "" .1.3.6.1.2.1.2.2.1.13 .1.3.6.1.2.1.2.2.1.19
	data speed gauge "speed-" .1.3.6.1.2.1.31.1.1.1.15
	data oper gauge "oper-" .1.3.6.1.2.1.2.2.1.8
	for ((i = 0; i < PEER_DEVICES; i++)); do
		d=$(printf 'dev%05d' $i)
		printf '  <Host "%s">\n    Address "udp:127.0.0.1:%s"\n    Version 2\n    Community "%s"\n    Collect "octets" "packets" "errors" "discards" "speed" "oper"\n  </Host>\n' "$d" "$SIM_PORT" "$d"
	done
	echo "</Plugin>"
} >"$WORK/collectd.conf"
collectd -f -C "$WORK/collectd.conf" >"$WORK/collectd.out" 2>&1 &
COLLECTD=$!
PIDS+=("$COLLECTD")
files_exist() { [ "$(find "$FS/peer/rrd" -name '*.rrd' | wc -l)" -ge $((6 * PEER_FILES)) ]; }
wait_for $((4 * IV + 120)) "collectd's $((6 * PEER_FILES)) RRD files" files_exist ||
	{ tail -5 "$WORK/collectd.log" >&2; exit 1; }
# stats KEY: a counter of rrdcached's STATS (python3's socket module
# speaks the line protocol).
stats() {
	python3 - "$WORK/rrdcached.sock" "$1" <<-'EOF' 2>/dev/null || echo 0
	import socket, sys
	s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1]); s.sendall(b"STATS\n")
	f = s.makefile()
	n = int(f.readline().split()[0])
	for _ in range(n):
	    k, v = f.readline().split(":")
	    if k.strip() == sys.argv[2]: print(v.strip())
	EOF
}
v0=$(stats UpdatesReceived)
read -r p_cpu p_disk p_rss p_secs < <(steady "$COLLECTD" "$RRDC")
v1=$(stats UpdatesReceived)
echo "# peer_polled=$(awk -v a="${v0:-0}" -v b="${v1:-0}" -v w=$((6 * PEER_FILES)) -v t="$p_secs" -v iv="$IV" 'BEGIN {printf "%.2f", (b - a) / (w * t / iv)}') (rrdcached's UpdatesReceived over the values collectd should have sent)" >&2
echo "scale_peer: devices=$PEER_DEVICES interfaces=$PEER_FILES spoold_cpu_us_per_if_poll=$s_cpu peer_cpu_us_per_if_poll=$p_cpu" \
	"spoold_disk_kib_per_if_poll=$s_disk peer_disk_kib_per_if_poll=$p_disk spoold_rss_kib_per_if=$s_rss peer_rss_kib_per_if=$p_rss"
