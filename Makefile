# microshift-compose. `make run` runs the main job on the embedded catalog;
# `make test` installs what the tests need and runs them.

GO      ?= go
BIN     := bin/microshift-compose
PKG     := ./cmd/microshift-compose
# osbuild/images pulls in containers/image and containers/storage; these tags
# select their pure-Go code paths (no gpgme, btrfs or devicemapper headers).
TAGS    := containers_image_openpgp,exclude_graphdriver_btrfs,exclude_graphdriver_devicemapper
# -trimpath for everything, tests too: `make build`, the image and a
# release are built -trimpath (reproducible), and a package compiled with
# other flags is compiled again. With one set of flags the first `make
# test` after `make run` compiles none of the ~1,100 dependencies again, and
# a fresh machine's first `make test` compiles them for amd64 once, not
# twice (the tests' e2e binary, `make image` and the snapshot share them).
export GOFLAGS := -buildvcs=false -trimpath -tags=$(TAGS)
export CGO_ENABLED ?= 0

ARGS ?= build --profile full --arch x86_64 --output out/

.PHONY: all build run test test-deps test-tools bench-smoke lint install docs man completions release-assets image image-rootfs bench fuzz clean tags goreleaser-tool goreleaser-check goreleaser-snapshot knowledge knowledge-pinned

# What `microshift-compose version` says (hack/version.sh): the tag or a
# pseudo-version, the commit, and the commit's date (not the build's, so
# that one commit builds the same bytes). Expanded only by the targets
# that stamp a binary.
VERSION_INFO = $(shell ./hack/version.sh)
VERSION ?= $(word 1,$(VERSION_INFO))
COMMIT  ?= $(word 2,$(VERSION_INFO))
DATE    ?= $(word 3,$(VERSION_INFO))
LDFLAGS  = -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

all: lint build test

# hack/build.sh runs go build and, when the build takes more than a few
# seconds (the first on a machine compiles every dependency), says so and
# how far it is.
build:
	@GO=$(GO) ./hack/build.sh $(BIN) $(PKG) "$(LDFLAGS)"

# The main job: compose the full profile for x86_64 from the embedded catalog.
run: build
	./$(BIN) $(ARGS)

# The conformance suite (compose/conformance_test.go) writes its table
# (release x arch x selection) to bin/conformance.txt; it is printed after
# the tests. Without ../shared (a user's clone) the suite is skipped. The
# tests keep their osbuild definitions cache in bin/cache, not the user's.
CONFORMANCE := $(CURDIR)/bin/conformance.txt
# The packages to test (TEST_PACKAGES=./compose/... for some). The slowest
# come first, so that they start as soon as they are compiled instead of
# ending the run alone; go test lists each package once.
TEST_PACKAGES ?= ./cmd/microshift-compose ./internal/repo ./...
# go test -json runs through hack/testprogress, which prints go test's
# line per package and the output of failed tests, says every 30 s which
# packages and tests are running (or that packages are compiling), lists
# the skipped tests with their reasons and the slowest tests, and writes
# every package's full output to bin/test.log.
# -timeout 60m: the command tests drive real registries, podman builds and
# the binary; on a loaded 2-core machine they can pass the default 10
# minutes; and on a fresh machine a package's test builds a pinned tool
# first (TestGoreleaser goreleaser, the signature tests cosign: helm alone
# took 15 minutes cold on a loaded 2-core machine), which counts against
# its package's timeout.
# -parallel TEST_PARALLEL: how many tests of one package that call
# t.Parallel() run at once (go test's default is the number of cores). The
# end-to-end tests that do spend much of their time waiting on registries,
# podman and cosign, so more of them than cores keep the cores busy.
TEST_PARALLEL ?= 4
test: test-deps
	@mkdir -p bin && rm -f $(CONFORMANCE)
	@$(GO) build -o bin/testprogress ./hack/testprogress
	CONFORMANCE_REPORT=$(CONFORMANCE) MICROSHIFT_COMPOSE_CACHE=$(CURDIR)/bin/cache MICROSHIFT_GIT_DIR=$(MICROSHIFT) ./bin/testprogress -log bin/test.log -- $(GO) test -json -count=1 -timeout 60m -parallel $(TEST_PARALLEL) $(TEST_PACKAGES)
	@if [ -f $(CONFORMANCE) ]; then cat $(CONFORMANCE); else echo "conformance: skipped (needs the upstream reference files in ../shared)"; fi

# The release data, generated from a MicroShift git directory (bare or not,
# read with git's plumbing): `make knowledge MICROSHIFT=<git dir>` moves the
# pins of releases/knowledge/upstream/pins.toml to their branches' heads
# (adding new release-X.Y branches) and regenerates releases/data and
# releases/knowledge/data; knowledge-pinned regenerates at the pinned
# commits. Rebuild afterwards: the binary embeds the data. With MICROSHIFT
# set, `make test` also checks the checked-in data against the pins.
MICROSHIFT ?=
knowledge:
	@[ -n "$(MICROSHIFT)" ] || { echo "usage: make knowledge MICROSHIFT=<MicroShift git dir>"; exit 2; }
	$(GO) run ./hack/knowledge -git-dir "$(MICROSHIFT)" -refresh

knowledge-pinned:
	@[ -n "$(MICROSHIFT)" ] || { echo "usage: make knowledge-pinned MICROSHIFT=<MicroShift git dir>"; exit 2; }
	$(GO) run ./hack/knowledge -git-dir "$(MICROSHIFT)"

# Runs every Go benchmark once, so that `make bench` cannot rot unseen
# (CI runs it; nothing is timed).
bench-smoke: test-deps
	@mkdir -p bin && $(GO) build -o bin/testprogress ./hack/testprogress
	MICROSHIFT_COMPOSE_CACHE=$(CURDIR)/bin/cache ./bin/testprogress -log bin/bench-smoke.log -slowest 0 -- $(GO) test -json -count=1 -run '^$$' -bench . -benchtime 1x ./...

# Installs the real tools tests use (Debian packages); CI runs on fresh
# machines. The pinned Go tools -- cosign (the signature tests sign and
# verify with it), helm (the chart tests compare with helm template; the
# same Helm the build renders with), goreleaser (internal/repo runs
# `goreleaser check` and a snapshot release) and opm (the operators tests
# check filtered catalogs with it) -- are built by the first test
# that needs each (testutil.PinnedTool, at the versions below, which
# `make test` exports), from the Go module proxy, once per machine into a
# shared cache (hack/tool.sh: ~/.cache/microshift-compose/tools, or
# $$MICROSHIFT_COMPOSE_TOOL_CACHE; one directory per Go version): on a
# fresh machine they build while the other packages test, not before all
# of them, and a fresh clone does not build them again.
# `make test-tools` (or `make test-deps PREBUILD_TOOLS=1`) builds them
# up front and links them into bin/ (hack/bench.sh signs with bin/cosign).
# MICROSHIFT_COMPOSE_SKIP_RELEASE=1 skips the release tests (the goreleaser
# snapshot, the container image) outside CI, and with them building
# goreleaser; with CI=true it changes nothing.
COSIGN_VERSION ?= v2.5.3
HELM_VERSION ?= v3.19.0
GORELEASER_VERSION ?= v2.12.0
# opm (operator-registry) checks the operators tests' filtered catalogs as
# OLM reads them: opm validate and opm render. Built with its own tags.
OPM_VERSION ?= v1.64.0
OPM_TAGS := json1,netgo,osusergo,containers_image_openpgp
export COSIGN_VERSION HELM_VERSION GORELEASER_VERSION OPM_VERSION
# $(call go-tool,PACKAGE,VERSION,NAME[,TAGS]): bin/NAME, a link into the cache.
go-tool = mkdir -p bin && p=$$(./hack/tool.sh go $(1) $(2) $(4)) && ln -sfn "$$p" bin/$(3)
SKIP_RELEASE_LOCALLY := $(if $(CI),,$(MICROSHIFT_COMPOSE_SKIP_RELEASE))
PREBUILD_TOOLS ?=
test-deps: $(if $(PREBUILD_TOOLS),test-tools)
	./hack/install-test-deps.sh

test-tools:
	@$(call go-tool,github.com/sigstore/cosign/v2/cmd/cosign,$(COSIGN_VERSION),cosign)
	@$(call go-tool,helm.sh/helm/v3/cmd/helm,$(HELM_VERSION),helm)
	@$(call go-tool,github.com/operator-framework/operator-registry/cmd/opm,$(OPM_VERSION),opm,$(OPM_TAGS))
	@$(if $(SKIP_RELEASE_LOCALLY),echo "MICROSHIFT_COMPOSE_SKIP_RELEASE is set: not building goreleaser; the release tests skip",$(call go-tool,github.com/goreleaser/goreleaser/v2,$(GORELEASER_VERSION),goreleaser))

STATICCHECK_VERSION ?= v0.8.0

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(call go-tool,honnef.co/go/tools/cmd/staticcheck,$(STATICCHECK_VERSION),staticcheck)
	./bin/staticcheck -tags $(TAGS) ./...

install:
	$(GO) install -trimpath -ldflags "$(LDFLAGS)" $(PKG)

# Regenerates the CLI reference in docs/cli (a test fails when it is stale).
docs:
	$(GO) test ./cmd/microshift-compose -run "^(TestDocsUpToDate|TestCompositionSchemaUpToDate)$$" -count=1 -update-docs

# Man pages (cobra/doc, gzipped) into manpages/ and shell completions into
# completions/, for the release archives and the RPM and DEB
# (.goreleaser.yaml runs `make release-assets VERSION=<its version>` first).
# The command's test binary writes both (TestManPages with -man-dir,
# TestCompletionScripts with -completions-dir: what `microshift-compose
# completion SHELL` prints), so a release links the command once for
# them, not a test binary and the binary. The man pages' date is the
# commit's (SOURCE_DATE_EPOCH), so a release is reproducible; their footer
# names VERSION (the test binary is not the stamped binary, so it is told).
# -trimpath: the test binary compiled in another copy of the source (the
# goreleaser snapshot test's) comes from the build cache.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# $(call assets,TESTS,FLAGS): run those tests of the command to write assets.
assets = SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) test -trimpath ./cmd/microshift-compose -run '^($(1))$$' -count=1 $(2)
MAN_FLAGS = -man-dir=$(CURDIR)/manpages -man-version=$(VERSION)
COMPLETIONS_FLAGS = -completions-dir=$(CURDIR)/completions
man:
	rm -rf manpages && mkdir -p manpages
	$(call assets,TestManPages,$(MAN_FLAGS))
	gzip -n -9 manpages/*.1

completions:
	rm -rf completions && mkdir -p completions
	$(call assets,TestCompletionScripts,$(COMPLETIONS_FLAGS))

release-assets:
	rm -rf manpages completions && mkdir -p manpages completions
	$(call assets,TestManPages|TestCompletionScripts,$(MAN_FLAGS) $(COMPLETIONS_FLAGS))
	gzip -n -9 manpages/*.1

# The container image (Containerfile): the binary on scratch, built offline
# with podman, no base image pulled. image-rootfs is the part that is not
# the binary, which goreleaser's dockers take too: a tar of the host's CA
# bundle (CA_BUNDLE; /etc/pki/tls/certs/ca-bundle.crt on Fedora and RHEL)
# and an empty /tmp (1777), owned by root, dated SOURCE_DATE_EPOCH, in name
# order (GNU tar), so that it is the same bytes for the same bundle.
IMAGE     ?= localhost/microshift-compose:$(VERSION)
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
PODMAN    ?= podman
image-rootfs:
	rm -rf bin/image && mkdir -p bin/image/rootfs/etc/ssl/certs bin/image/rootfs/tmp
	cp $(CA_BUNDLE) bin/image/rootfs/etc/ssl/certs/ca-certificates.crt
	chmod 0644 bin/image/rootfs/etc/ssl/certs/ca-certificates.crt
	chmod 0755 bin/image/rootfs/etc bin/image/rootfs/etc/ssl bin/image/rootfs/etc/ssl/certs
	chmod 1777 bin/image/rootfs/tmp
	tar --create --file bin/image/rootfs.tar --directory bin/image/rootfs --sort=name --format=gnu \
		--owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) etc tmp

image: build image-rootfs
	rm -rf bin/image/context && mkdir -p bin/image/context/bin/image
	cp $(BIN) bin/image/context/microshift-compose
	cp bin/image/rootfs.tar bin/image/context/bin/image/rootfs.tar
	$(PODMAN) build --file Containerfile --tag $(IMAGE) \
		--label org.opencontainers.image.version=$(VERSION) --label org.opencontainers.image.revision=$(COMMIT) \
		bin/image/context

# make bench runs every section of hack/bench.sh; make bench rss (or any
# other section names after bench: make bench day2) runs those.
BENCH_SECTIONS := resolve render scale validate matrix verify mirror registry rss rss_inputs day2 day2_bundles day2_split attest operators deps
bench: build
	./hack/bench.sh $(filter build $(BENCH_SECTIONS),$(filter-out bench,$(MAKECMDGOALS)))
ifneq ($(filter bench,$(MAKECMDGOALS)),)
$(filter $(BENCH_SECTIONS),$(MAKECMDGOALS)):
	@:
endif

# Runs each fuzz target for FUZZTIME (default 60s: every target must run
# 60 s clean). hack/fuzz.sh prints each target's wall time.
FUZZTIME ?= 60s
fuzz:
	./hack/fuzz.sh $(FUZZTIME)

tags:
	@echo $(TAGS)

clean:
	rm -rf bin out dist manpages completions

# goreleaser, built pinned from the Go module proxy once per machine
# (hack/tool.sh) and linked into bin/.
goreleaser-tool:
	@$(call go-tool,github.com/goreleaser/goreleaser/v2,$(GORELEASER_VERSION),goreleaser)

goreleaser-check: goreleaser-tool
	./bin/goreleaser check

# A local release without publishing: archives, RPM, DEB and checksums in dist/.
goreleaser-snapshot: goreleaser-tool
	./bin/goreleaser release --snapshot --clean --skip=publish
