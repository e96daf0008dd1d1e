// Package packaging holds the tests of `make install` and `make deb`: the
// installed tree, and the Debian package installed, checked and purged.
// The packaging itself is the Makefile, build-deb.sh and deb/.
package packaging
