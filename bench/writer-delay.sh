#!/usr/bin/env bash
# Writer throughput against the write delay: FILES RRD files of DS
# COUNTER data sources (step 300 s, rrdwriter.DefaultRRAs), TOTAL polls per
# file written in rounds of PER values per file per update (PER-1 poll
# intervals of write delay, no jitter); RRD files dropped from the page
# cache before each round; see bench/writerdelay. Writes the figures to
# docs/img/writer-delay.dat and the chart docs/img/writer-delay.png
# (gnuplot, installed from Debian if missing).
# Usage: bench/writer-delay.sh [FILES] [DS]   (defaults 2000 10)
#        PLOT_ONLY=1 bench/writer-delay.sh [FILES] [DS]  redraws the chart from the .dat
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/gotags.sh
. bench/gotags.sh
FILES=${1:-2000}
DS=${2:-10}
PER=${PER:-1,2,4,12,24}
export CGO_ENABLED=1
command -v gnuplot >/dev/null || apt-get install -y gnuplot-nox >/dev/null
DAT=docs/img/writer-delay.dat
if [ "${PLOT_ONLY:-0}" != 1 ]; then
	WORK=$(mktemp -d /tmp/spoold-bench-writer-delay.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
	go build -o "$WORK/writerdelay" ./bench/writerdelay
	{
		echo "# bench/writer-delay.sh $FILES $DS (PER=$PER) on $(uname -r), $(date -u +%Y-%m-%d)"
		"$WORK/writerdelay" -dir "$WORK" -files "$FILES" -ds "$DS" -per "$PER"
	} | tee "$DAT"
fi

gnuplot <<GP
set terminal pngcairo size 900,520 font "sans,11"
set output "docs/img/writer-delay.png"
set title "RRD writer: $FILES files x $DS DS, cold page cache, 5-minute polls"
set xlabel "values per file per update  (write delay = (values - 1) x 5 min)" offset 0,-0.8
set bmargin 5
set logscale x 2
set xtics ("1\n0" 1, "2\n5m" 2, "4\n15m" 4, "12\n55m" 12, "24\n1h55m" 24)
set ylabel "values written per second"
set y2label "pages dirtied per value (each written back once)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key top left
set grid
plot "$DAT" using 1:3 with linespoints lw 2 pt 7 title "values/s", \
     "$DAT" using 1:5 axes x1y2 with linespoints lw 2 pt 5 title "pages dirtied per value (/proc/self/io)"
GP
echo "wrote docs/img/writer-delay.png"
