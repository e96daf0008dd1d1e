# spoold — the two commands a new user needs: `make demo` and `make check`.
GO       ?= go
BIN      := bin/spoold
PKGS     := ./...
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -X main.version=$(VERSION)
export CGO_ENABLED := 1

.PHONY: all deps build check vet test bench demo clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/spoold

vet: deps
	$(GO) vet $(PKGS)

test: deps
	$(GO) test -race -count=1 $(PKGS)

# check: what CI runs (.ci/run): install what is missing, vet, race tests.
check: vet test

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x $(PKGS)

# demo: a simulated fleet on 127.0.0.1 polled every 10 s; the admin page URL
# is printed; Ctrl-C flushes and prints a summary. DEMO_FLAGS adds flags,
# e.g. make demo DEMO_FLAGS="--duration 2m --devices 1000".
demo: build
	$(BIN) demo $(DEMO_FLAGS)

clean:
	rm -rf bin
