# Sourced (from the repository's top) by the bench scripts that build Go
# programs: the build tags make builds and tests with (scripts/gotags, see
# the Makefile's GOFLAGS), so that a bench measures the binary make builds.
export GOFLAGS="-tags=$(cat scripts/gotags)${GOFLAGS:+ $GOFLAGS}"
