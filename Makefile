# `make test` runs every test: vet, the Go tests with the race detector (the
# store suite runs on SQLite, and on PostgreSQL when
# BOTPLATFORM_TEST_DATABASE_URL is set; the crash test kills the freshly
# built binary five times on each), then the Node compatibility suite
# against a server it starts with the freshly built binary, and
# @botpress/chat's own end-to-end suite (compat/chat-e2e/run.mjs, vitest)
# against another. Each fuzz target also runs a few thousand inputs
# (fuzz-short); `make fuzz` runs each for FUZZTIME.
GO ?= go
FUZZTIME ?= 2m
# A count, not a duration: with a duration, Go 1.26's fuzzing coordinator
# can fail a target with "context deadline exceeded" as the time runs out
# on a busy machine (golang/go#75804, fixed in Go 1.27).
FUZZTIME_SHORT ?= 3000x

# The version `botplatform version` prints: the checkout's git describe.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# Versity's S3 gateway for the object-storage tests (internal/blob/s3/s3test
# names the same version).
VERSITYGW_MODULE := github.com/versity/versitygw/cmd/versitygw@v1.8.0
VERSITYGW ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/botplatform/bin/versitygw
# What `make release` builds (static: no cgo).
RELEASE_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: build versitygw serve test test-go test-compat test-chat-e2e embeddings-server bench crash soak fmt fuzz fuzz-short release

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/botplatform ./cmd/botplatform

# Static binaries for every RELEASE_TARGETS in dist/, and dist/SHA256SUMS.
release:
	rm -rf dist && mkdir -p dist
	@set -e; for t in $(RELEASE_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		out=dist/botplatform-$(VERSION)-$$os-$$arch$$ext; echo "$$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $$out ./cmd/botplatform; \
	done
	cd dist && sha256sum botplatform-* > SHA256SUMS

serve:
	$(GO) run ./cmd/botplatform serve

# After the Go tests, the short fuzz run (one worker, one core) goes side by
# side with the Node suites, which mostly wait on servers; -O keeps each
# one's output together.
test: build test-go
	$(MAKE) -j2 -O fuzz-short test-compat

# Four parallel tests at a time (GOMAXPROCS, the default, is two here): the
# end-to-end tests of cmd/botplatform spend most of their time waiting on
# servers, bot processes and browsers. Under the race detector that package
# takes about half an hour on a slow two-core machine: the timeout is a hang
# guard above it.
test-go: build versitygw
	@test -z "$$(gofmt -l cmd internal)" || (echo "gofmt needed:"; gofmt -l cmd internal; exit 1)
	$(GO) vet ./...
	BOTPLATFORM_BIN=$(CURDIR)/bin/botplatform BOTPLATFORM_VERSITYGW=$(VERSITYGW) $(GO) test -race -count=1 -parallel 4 -timeout 60m ./...

# The S3-compatible gateway the object-storage tests run against, built once
# (a few minutes) into the user's cache, outside the checkout, and reused.
versitygw: $(VERSITYGW)
$(VERSITYGW):
	mkdir -p $(dir $@) && GOBIN=$(dir $@) CGO_ENABLED=0 $(GO) install $(VERSITYGW_MODULE)

# node --test gets explicit files, so that it never picks up the vitest suite
# that chat-e2e/run.mjs copies into compat/.chat-e2e/. compat/llm-bot has
# its own dependencies (@botpress/zai and the SDK ask for different majors
# of @bpinternal/zui), compat/agent-bot too (llmz 0.0.37 and its
# @botpress/cognitive 0.3.3); compat/integrations has the packages of CLI 0.8.59's
# generation (SDK 0.10.10), which its integration templates build with;
# compat/upstream the dependencies of the public repository's integrations
# of that time (test/upstream.test.js builds them from ../shared/upstream).
test-compat: build embeddings-server
	cd compat && npm ci --no-audit --no-fund --loglevel=error && (cd llm-bot && npm ci --no-audit --no-fund --loglevel=error) && (cd agent-bot && npm ci --no-audit --no-fund --loglevel=error) && (cd integrations && npm ci --no-audit --no-fund --loglevel=error) && (cd upstream && npm ci --no-audit --no-fund --loglevel=error) && (cd webchat-page && npm ci --no-audit --no-fund --loglevel=error) && (cd ../scripts/webchat-official && npm ci --no-audit --no-fund --loglevel=error) && BOTPLATFORM_BIN=$(CURDIR)/bin/botplatform node --test --test-concurrency=1 test/*.test.js && BOTPLATFORM_BIN=$(CURDIR)/bin/botplatform node chat-e2e/run.mjs

# The local embeddings model of docs/indexing.md (its test is in compat/).
embeddings-server:
	cd scripts/embeddings-server && npm ci --no-audit --no-fund --loglevel=error

# Only @botpress/chat's own end-to-end suite.
test-chat-e2e: build
	cd compat && npm ci --no-audit --no-fund --loglevel=error && BOTPLATFORM_BIN=$(CURDIR)/bin/botplatform node chat-e2e/run.mjs

bench: build versitygw
	$(GO) test -run '^$$' -bench 'ListBots|UpsertFile' -benchtime 3s -count 3 ./internal/httpapi/
	$(GO) test -run '^$$' -bench ColdStart -benchtime 20x ./cmd/botplatform/
	$(GO) test -run '^$$' -bench 'LargeTransfer|ConcurrentUploads' -benchtime 1x -count 5 -timeout 30m ./cmd/botplatform/
	BOTPLATFORM_VERSITYGW=$(VERSITYGW) BOTPLATFORM_BENCH_MIB=256 $(GO) test -run '^$$' -bench ObjectStorageTransfer -benchtime 1x -count 3 -timeout 20m ./cmd/botplatform/
	$(GO) test -run '^$$' -bench SequentialRoundTrip -benchtime 1000x ./cmd/botplatform/
	cd compat && npm ci --no-audit --no-fund --loglevel=error && BOTPLATFORM_BIN=$(CURDIR)/bin/botplatform node bench/sequential.mjs 1000
	cd compat && BOTPLATFORM_BIN=$(CURDIR)/bin/botplatform node bench/sdk-echo.mjs 1000

# The fuzz targets, one at a time (scripts/fuzz.sh lists them): each for
# FUZZTIME, or for FUZZTIME_SHORT in `make test`.
fuzz:
	GO=$(GO) scripts/fuzz.sh $(FUZZTIME)

fuzz-short:
	FUZZPARALLEL=$${FUZZPARALLEL:-1} GO=$(GO) scripts/fuzz.sh $(FUZZTIME_SHORT)

# Crash consistency, benchmark-style (docs/reliability.md): 100 kill-and-
# restart cycles on SQLite, then 30 on PostgreSQL when
# BOTPLATFORM_TEST_DATABASE_URL is set. Each run prints its seed.
crash: build
	@status=0; \
	$(GO) run ./cmd/crashtest --bin bin/botplatform --cycles 100 --keep-going --database sqlite || status=1; \
	if [ -n "$$BOTPLATFORM_TEST_DATABASE_URL" ]; then \
		$(GO) run ./cmd/crashtest --bin bin/botplatform --cycles 30 --keep-going --database "$$BOTPLATFORM_TEST_DATABASE_URL" || status=1; \
	else echo "crash: BOTPLATFORM_TEST_DATABASE_URL is not set, PostgreSQL skipped"; fi; \
	exit $$status

# Soak (docs/reliability.md): 30 minutes of mixed load at 60 operations a
# second on SQLite, sampling the server's memory, goroutines, open files,
# CPU and database size every 30 s. SOAK_FLAGS adds flags, e.g.
# SOAK_FLAGS='--duration 10m' or SOAK_FLAGS="--database $$BOTPLATFORM_TEST_DATABASE_URL".
soak: build
	$(GO) run ./cmd/loadtest --bin bin/botplatform --soak --rate 60 --duration 30m --sample-every 30s --warmup 2m $(SOAK_FLAGS)

fmt:
	gofmt -w cmd internal
