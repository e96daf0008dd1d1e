#!/usr/bin/env bash
# Loader time against loader_files: generates a spool of ENTRIES
# entries over KEYS keys, then runs `spoold load` unthrottled (the work
# term) and with each loader_files of FILES_LIST at a fixed loader_sleep
# and loader_threshold. nginx's formula predicts
#   time = (entries / loader_files) x loader_sleep + work.
# Writes docs/img/loader-sweep.dat and the chart docs/img/loader-sweep.png
# (gnuplot, installed from Debian if missing).
# Usage: bench/loader-sweep.sh [ENTRIES] [KEYS]   (defaults 200000 20000)
#        PLOT_ONLY=1 bench/loader-sweep.sh [ENTRIES]  redraws the chart from the .dat
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
ENTRIES=${1:-200000}
KEYS=${2:-20000}
SLEEP=${SLEEP:-50ms}
THRESHOLD=${THRESHOLD:-200ms}
FILES_LIST=${FILES_LIST:-"100 200 500 1000 2000 5000 10000 20000"}
command -v gnuplot >/dev/null || apt-get install -y gnuplot-nox >/dev/null
DAT=docs/img/loader-sweep.dat
if [ "${PLOT_ONLY:-0}" != 1 ]; then
	WORK=$(mktemp -d /tmp/spoold-bench-loader-sweep.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
	go build -o "$WORK/spoold" ./cmd/spoold
	go run ./bench/genspool --spool-dir "$WORK/spool" --entries "$ENTRIES" --keys "$KEYS" >/dev/null
	load() { "$WORK/spoold" load --spool-dir "$WORK/spool" --progress-every 0 "$@" 2>/dev/null; }
	free=$(load --loader-sleep 0)
	{
		echo "# bench/loader-sweep.sh $ENTRIES $KEYS, loader_sleep=$SLEEP loader_threshold=$THRESHOLD, on $(uname -r), $(date -u +%Y-%m-%d)"
		echo "# unthrottled: $free"
		echo "# loader_files seconds formula_seconds formula_plus_work_seconds iterations entries"
		for f in $FILES_LIST; do
			python3 - "$f" "$free" "$(load --loader-files "$f" --loader-sleep "$SLEEP" --loader-threshold "$THRESHOLD")" <<'PY'
import json, sys
f, free, thr = int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
print(f, round(thr["seconds"], 3), round(thr["formula_seconds"], 3),
      round(thr["formula_seconds"] + free["seconds"], 3), thr["iterations"], thr["entries"])
PY
		done
	} | tee "$DAT"
fi
WORKSEC=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    if l.startswith("# unthrottled: "): print(round(json.loads(l[15:])["seconds"], 3))' "$DAT")
SLEEPSEC=$(python3 -c 'import sys; s=sys.argv[1]; print(float(s[:-2])/1000 if s.endswith("ms") else float(s[:-1]))' "$SLEEP")

gnuplot <<GP
set terminal pngcairo size 900,520 font "sans,11" noenhanced
set output "docs/img/loader-sweep.png"
set title "Loader: $ENTRIES spool entries, loader_sleep=$SLEEP, loader_threshold=$THRESHOLD"
set xlabel "loader_files"
set ylabel "seconds to index the spool"
set logscale xy
set grid
set key top right
set samples 200
plot [80:25000] $ENTRIES/x*$SLEEPSEC + $WORKSEC with lines lw 2 dt 2 title "formula: (entries / loader_files) x loader_sleep + unthrottled work ($WORKSEC s)", \
     "$DAT" using 1:2 with points pt 7 ps 1.5 title "measured (spoold load)"
GP
echo "wrote docs/img/loader-sweep.png"
