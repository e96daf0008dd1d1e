#!/usr/bin/env bash
# Runs fuzz targets, given as <package>:<target>, each for FUZZTIME.
# A target that fails is run again (at most three runs) only if the failure
# wrote no new crasher into its testdata/fuzz/<target>/ and said "context
# deadline exceeded": the Go fuzzer's coordinator sometimes gives up on a
# worker at the end of a short -fuzztime (seen twice in one CI run here),
# which is no finding. A real finding writes a crasher and fails at once.
set -euo pipefail
FUZZTIME=${FUZZTIME:-3s}
GO=${GO:-go}
# crashers counts the files in a target's corpus directory (0 if none).
crashers() {
	if [ -d "$1" ]; then ls "$1" | wc -l; else echo 0; fi
}
for t in "$@"; do
	pkg=${t%%:*} target=${t#*:}
	dir="$pkg/testdata/fuzz/$target"
	for try in 1 2 3; do
		echo "fuzz $target in $pkg for $FUZZTIME"
		before=$(crashers "$dir")
		log=$(mktemp)
		if "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log"; then
			rm -f "$log"
			continue 2
		fi
		after=$(crashers "$dir")
		if [ "$try" -lt 3 ] && [ "$after" = "$before" ] && grep -q "context deadline exceeded" "$log"; then
			rm -f "$log"
			echo "fuzz $target: the fuzzer timed out a worker without a finding; running it again ($try of 3)"
			continue
		fi
		rm -f "$log"
		exit 1
	done
done
