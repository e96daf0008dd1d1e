# spoold — the two commands a new user needs: `make demo` and `make check`.
GO       ?= go
BIN      := bin/spoold
PKGS     := ./...
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -X main.version=$(VERSION)
export CGO_ENABLED := 1
# GOFLAGS: every build and test here (and in bench/*.sh, which read the
# same file) takes the build tags of scripts/gotags. gosnmp_nodebug
# compiles out gosnmp's debug logging, which otherwise prepares a log line
# for every variable a poll decodes, for a logger spoold never sets
# (poller.GoSNMPLogging: the daemon warns at start when built without it).
export GOFLAGS := -tags=$(shell cat scripts/gotags) $(GOFLAGS)

.PHONY: all deps build check vet test test-nocgo fuzz-short fuzz-long bench soak demo clean man install deb

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build $(GOBUILDFLAGS) -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/spoold

vet: deps
	$(GO) vet $(PKGS)

# -timeout: go test's default, 10 minutes a package, is less than what
# cmd/spoold can take under -race on a loaded 2-core machine.
test: deps
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# test-nocgo: the packages that do not need librrd, built and tested
# without cgo (rrd's logic included: only its librrd shims need cgo).
NOCGO_PKGS := ./spool ./shm ./intake ./loader ./rrd ./graph ./rrdwriter ./rrdcached ./rrdcached/spoolbackend ./fleet ./mib ./internal/enum ./internal/numtext ./internal/confine ./internal/testing/testenv
test-nocgo:
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 30m $(NOCGO_PKGS)

# check: what CI runs (.ci/run): install what is missing, vet, race tests,
# the packages that build without cgo tested without it, and every fuzz
# target for a few seconds.
check: vet test test-nocgo fuzz-short

# Fuzz targets, as <package>:<target>. FUZZ_SHORT: every decoder of
# outside data (spool entries and names, flag values, config files, SNMP
# values, /graph queries, MIB names, rrdcached commands and UPDATE values, an rrdcached peer's replies and addresses; the native RRD update against librrd); FUZZ_LONG adds RRD headers, simulator requests,
# MIB files (each input a whole load: too slow for 3 s) and /proc files (mount
# lookups and iostat arithmetic: procfs parses them).
FUZZ_SHORT := \
	./spool:FuzzDecode ./spool:FuzzParseSegment ./spool:FuzzParseName ./spool:FuzzParseLevels ./spool:FuzzParseFsyncPolicy \
	./shm:FuzzParseSize ./loader:FuzzParseCPU \
	./fleet:FuzzParseTargets ./fleet:FuzzParseProfiles ./poller:FuzzMapValue ./fleet:FuzzInstanceSegment ./poller:FuzzWalkAnswer ./mib:FuzzResolve \
	./admin:FuzzParseGraphQuery ./rrd:FuzzRRDPath ./graph:FuzzParseTemplate ./cmd/spoold:FuzzDaemonFlags ./admin:FuzzLoaderFields \
	./rrdcached:FuzzParseCommand ./rrdcached:FuzzServerReply \
	./rrdcached:FuzzReadReply ./rrdcached:FuzzParseInfo ./rrdcached:FuzzParseAddress ./fleet:FuzzParseShard ./rrdwriter:FuzzParseRemoteInfo \
	./rrdcached/spoolbackend:FuzzParseUpdate ./rrd:FuzzNativeUpdate
FUZZ_LONG := $(FUZZ_SHORT) \
	./rrd:FuzzParseHeader ./rrd:FuzzParseGeometry ./simulate:FuzzAnswer ./simulate:FuzzGetNext ./mib:FuzzLoadMIB \
	./doctor:FuzzMounts ./diskstat:FuzzCompute ./diskstat:FuzzParseTaskIO

# fuzz-short runs each of FUZZ_SHORT for 3 s (inside check); fuzz-long each
# of FUZZ_LONG for FUZZTIME (make soak calls it). A crasher is written to
# the package's testdata/fuzz/<target>/ and fails the run: commit it, and
# it becomes a regression seed that plain `go test` runs.
FUZZTIME ?= 60s
fuzz = @GO=$(GO) FUZZTIME=$(2) scripts/fuzz.sh $(1)

fuzz-short: deps
	$(call fuzz,$(FUZZ_SHORT),3s)

fuzz-long: deps
	$(call fuzz,$(FUZZ_LONG),$(FUZZTIME))

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x $(PKGS)

# soak: the long reliability runs (docs/reliability.md): CRASH_TRIALS SIGKILL
# trials checked entry by entry, the full and read-only disk test, the
# SOAK_MINUTES soak of 1,000 simulated devices (memory, descriptors and
# goroutines flat; without -race, whose shadow memory is not the daemon's),
# the admin load benchmark, and fuzz-long. The lines to read are
# "crash: trials=...", "disk: ...", "soak: minutes=..." and "adminload: ...".
CRASH_TRIALS ?= 300
SOAK_MINUTES ?= 20
soak: deps
	$(GO) test -race -count=1 -v -timeout 2h -run '^(TestCrashTrials|TestFullAndReadOnlyDisks)$$' ./cmd/spoold \
		-args -crash-trials=$(CRASH_TRIALS) -crash-rrd-fsync=none,batch,always > soak.log 2>&1 || { tail -50 soak.log; exit 1; }
	@grep -E '^(crash:|disk:|--- |ok|PASS)' soak.log
	$(GO) test -count=1 -v -timeout $$(( $(SOAK_MINUTES) + 15 ))m -run '^TestSoak$$' ./cmd/spoold \
		-args -soak-minutes=$(SOAK_MINUTES) >> soak.log 2>&1 || { tail -50 soak.log; exit 1; }
	@grep -E '^(soak:|--- [A-Z]+: TestSoak)' soak.log
	bench/adminload.sh
	$(MAKE) fuzz-long

# demo: a simulated fleet on 127.0.0.1 polled every 10 s; the admin page URL
# is printed; Ctrl-C flushes and prints a summary. DEMO_FLAGS adds flags,
# e.g. make demo DEMO_FLAGS="--duration 2m --devices 1000".
demo: build
	$(BIN) demo $(DEMO_FLAGS)

# install: the binary, spoold(8), the systemd units (spoold, and
# spoold-rrdcached in rrdcached's place), the rrdcached link, the docs and examples,
# and /etc/spoold/{targets,profiles}.conf unless they exist (an operator's
# files are never overwritten; the installed targets.conf has the example
# targets commented out, so spoold polls nothing until told to).
# PREFIX=/usr/local, DESTDIR for staging, as operators expect.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/spoold
UNITDIR    ?= $(PREFIX)/lib/systemd/system
# LIBDIR/spoold/rrdcached: a link to spoold by rrdcached's name, for
# Debian's /etc/init.d/rrdcached (DAEMON=) and scripts that start rrdcached.
LIBDIR     ?= $(PREFIX)/lib
SYSCONFDIR ?= /etc
MAN        ?= $(BIN).8

# man: spoold(8), rendered by the binary from its own flags (spoold manpage).
man: build
	$(BIN) manpage > $(MAN).tmp && mv $(MAN).tmp $(MAN)

install: man
	install -d -m 0755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(SYSCONFDIR)/spoold
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/spoold
	install -m 0644 $(MAN) $(DESTDIR)$(MANDIR)/man8/spoold.8
	sed -e 's|/usr/local/bin/spoold|$(BINDIR)/spoold|g' -e 's|/usr/share/doc/spoold|$(DOCDIR)|g' \
		-e 's|/etc/spoold/|$(SYSCONFDIR)/spoold/|g' \
		docs/spoold.service > $(DESTDIR)$(UNITDIR)/spoold.service
	sed -e 's|/usr/local/bin/spoold|$(BINDIR)/spoold|g' -e 's|/usr/share/doc/spoold|$(DOCDIR)|g' \
		docs/spoold-rrdcached.service > $(DESTDIR)$(UNITDIR)/spoold-rrdcached.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/spoold.service $(DESTDIR)$(UNITDIR)/spoold-rrdcached.service
	install -d -m 0755 $(DESTDIR)$(LIBDIR)/spoold
	ln -sfnr $(DESTDIR)$(BINDIR)/spoold $(DESTDIR)$(LIBDIR)/spoold/rrdcached
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -m 0644 docs/examples/targets.conf docs/examples/profiles.conf $(DESTDIR)$(DOCDIR)/examples/
	@set -e; etc=$(DESTDIR)$(SYSCONFDIR)/spoold; \
	if [ -e $$etc/targets.conf ]; then echo "keeping $$etc/targets.conf"; else \
		sed -e '/^[^#[:space:]]/{/^defaults[[:space:]]/!s/^/# /}' \
			-e '1a # The example targets are commented out: spoold polls nothing until you add yours.' \
			docs/examples/targets.conf > $$etc/targets.conf; chmod 0644 $$etc/targets.conf; fi; \
	if [ -e $$etc/profiles.conf ]; then echo "keeping $$etc/profiles.conf"; else \
		install -m 0644 docs/examples/profiles.conf $$etc/profiles.conf; fi

# deb: a Debian package of the same install, built with dpkg-deb
# (packaging/build-deb.sh; the package's scripts are in packaging/deb/).
DEBDIR ?= bin
deb: GOBUILDFLAGS := -buildmode=pie
deb: build
	packaging/build-deb.sh $(BIN) $(DEBDIR)

clean:
	rm -rf bin soak.log
