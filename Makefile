# microshift-compose. `make run` runs the main job on the embedded catalog;
# `make test` installs what the tests need and runs them.

GO      ?= go
BIN     := bin/microshift-compose
PKG     := ./cmd/microshift-compose
# osbuild/images pulls in containers/image and containers/storage; these tags
# select their pure-Go code paths (no gpgme, btrfs or devicemapper headers).
TAGS    := containers_image_openpgp,exclude_graphdriver_btrfs,exclude_graphdriver_devicemapper
export GOFLAGS := -buildvcs=false -tags=$(TAGS)
export CGO_ENABLED ?= 0

ARGS ?= build --profile full --arch x86_64 --output out/

.PHONY: all build run test test-deps bench-smoke lint install docs bench fuzz clean tags goreleaser-check

all: lint build test

build:
	$(GO) build -trimpath -o $(BIN) $(PKG)

# The main job: compose the full profile for x86_64 from the embedded catalog.
run: build
	./$(BIN) $(ARGS)

# The conformance suite (compose/conformance_test.go) writes its table
# (release x arch x selection) to bin/conformance.txt; it is printed after
# the tests. Without ../shared (a user's clone) the suite is skipped. The
# tests keep their osbuild definitions cache in bin/cache, not the user's.
CONFORMANCE := $(CURDIR)/bin/conformance.txt
# -timeout 30m: the command tests drive real registries, podman builds and
# the binary; on a loaded 2-core machine they can pass the default 10 minutes.
test: test-deps
	@mkdir -p bin && rm -f $(CONFORMANCE)
	CONFORMANCE_REPORT=$(CONFORMANCE) MICROSHIFT_COMPOSE_CACHE=$(CURDIR)/bin/cache $(GO) test -count=1 -timeout 30m ./...
	@if [ -f $(CONFORMANCE) ]; then cat $(CONFORMANCE); else echo "conformance: skipped (needs the upstream reference files in ../shared)"; fi

# Runs every Go benchmark once, so that `make bench` cannot rot unseen
# (CI runs it; nothing is timed).
bench-smoke: test-deps
	MICROSHIFT_COMPOSE_CACHE=$(CURDIR)/bin/cache $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x ./...

# Installs the real tools tests use (Debian packages); CI runs on fresh machines.
# cosign (the signature tests sign and verify with it) and helm (the chart
# tests compare with helm template; the same Helm the build renders with)
# are built pinned from the Go module proxy into bin/ once.
COSIGN_VERSION ?= v2.5.3
HELM_VERSION ?= v3.19.0
test-deps:
	./hack/install-test-deps.sh
	@[ -x bin/cosign ] || { echo "building cosign $(COSIGN_VERSION) into bin/ (once)"; GOFLAGS= CGO_ENABLED=0 GOBIN=$(CURDIR)/bin $(GO) install github.com/sigstore/cosign/v2/cmd/cosign@$(COSIGN_VERSION); }
	@[ -x bin/helm ] || { echo "building helm $(HELM_VERSION) into bin/ (once)"; GOFLAGS= CGO_ENABLED=0 GOBIN=$(CURDIR)/bin $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION); }

STATICCHECK_VERSION ?= v0.8.0

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@[ -x bin/staticcheck ] || GOFLAGS= GOBIN=$(CURDIR)/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	./bin/staticcheck -tags $(TAGS) ./...

install:
	$(GO) install -trimpath $(PKG)

# Regenerates the CLI reference in docs/cli (a test fails when it is stale).
docs:
	$(GO) test ./cmd/microshift-compose -run "^TestDocsUpToDate$$" -count=1 -update-docs

bench: build
	./hack/bench.sh

# Runs each fuzz target for FUZZTIME (default 60s: every target must run
# 60 s clean). hack/fuzz.sh prints each target's wall time.
FUZZTIME ?= 60s
fuzz:
	./hack/fuzz.sh $(FUZZTIME)

tags:
	@echo $(TAGS)

clean:
	rm -rf bin out

GORELEASER_VERSION ?= v2.12.0
# Checks .goreleaser.yaml with goreleaser installed from the Go module proxy.
goreleaser-check:
	GOFLAGS= GOBIN=$(CURDIR)/bin $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	./bin/goreleaser check
