# Sourced by the A-B bench scripts (bench/writer-ab.sh, bench/scale-ab.sh).
# ab_build WORK PKG NAME: builds the Go package PKG (./bench/writerbench,
# ./cmd/spoold) from the commits in $A and $B into WORK/NAME-A and
# WORK/NAME-B, each from its own `git archive` of the commit in WORK/src-A
# and WORK/src-B, with the build tags make gives that commit's builds (its
# scripts/gotags, none before there was one).
ab_build() {
	local work=$1 pkg=$2 name=$3 v rev
	for v in A B; do
		rev=${!v}
		mkdir "$work/src-$v"
		git archive "$rev" | tar -x -C "$work/src-$v"
		(
			cd "$work/src-$v"
			export GOFLAGS=
			[ -f scripts/gotags ] && GOFLAGS="-tags=$(cat scripts/gotags)"
			go build -o "$work/$name-$v" "$pkg"
		)
	done
}
