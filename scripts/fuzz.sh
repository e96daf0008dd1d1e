#!/usr/bin/env bash
# Runs fuzz targets, given as <package>:<target>, each for FUZZTIME.
# A target that fails is run once more only if the failure wrote no new
# crasher into its testdata/fuzz/<target>/ and said "context deadline
# exceeded": the Go fuzzer's coordinator gives up on a worker that a loaded
# machine keeps from answering in time, which is no finding. A real finding
# writes a crasher and fails at once.
set -euo pipefail
FUZZTIME=${FUZZTIME:-3s}
GO=${GO:-go}
# crashers counts the files in a target's corpus directory (0 if none).
crashers() {
	if [ -d "$1" ]; then ls "$1" | wc -l; else echo 0; fi
}
for t in "$@"; do
	pkg=${t%%:*} target=${t#*:}
	echo "fuzz $target in $pkg for $FUZZTIME"
	dir="$pkg/testdata/fuzz/$target"
	before=$(crashers "$dir")
	log=$(mktemp)
	if "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log"; then
		rm -f "$log"
		continue
	fi
	after=$(crashers "$dir")
	if [ "$after" = "$before" ] && grep -q "context deadline exceeded" "$log"; then
		rm -f "$log"
		echo "fuzz $target: the fuzzer timed out a worker without a finding (a loaded machine); running it once more"
		"$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
		continue
	fi
	rm -f "$log"
	exit 1
done
