//go:build race

package testenv

// Race is whether the race detector is built in: its shadow memory makes a
// process's resident size no measure of what the code holds.
const Race = true
