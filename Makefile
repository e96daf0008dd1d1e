# spoold — the two commands a new user needs: `make demo` and `make check`.
GO       ?= go
BIN      := bin/spoold
PKGS     := ./...
export CGO_ENABLED := 1

.PHONY: all deps build check vet test bench demo clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/spoold

vet: deps
	$(GO) vet $(PKGS)

test: deps
	$(GO) test -race -count=1 $(PKGS)

# check: what CI runs (.ci/run): install what is missing, vet, race tests.
check: vet test

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x $(PKGS)

demo: build
	@echo "spoold demo: the daemon (issue 5) is not built yet; see 'bin/spoold load --help' for the loader dry run." >&2
	@exit 1

clean:
	rm -rf bin
