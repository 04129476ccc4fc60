# The two set-up commands are `make run` and `make test`; see README.md.

PROGRAM ?= examples/hello
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 10s
# Nested modules (their own go.mod, for dependencies the main module does not take): make test
# vets and tests each of them too.
NESTED_MODULES := wait/jetstream promdwell oteldwell examples/todo examples/chatcluster examples/autocert examples/grpc interop core/internal/h2/xnettest

.PHONY: build run test test-browser fuzz bench bench-quick clean

build:
	go build ./...

# Starts an example: make run PROGRAM=examples/chat ARGS="-loops 2"
run:
	cd $(PROGRAM) && go run . $(ARGS)

# Formatting, vet, staticcheck, the race-enabled suite, the allocation tests (which only count
# true allocations in a build without the race detector) and the WebSocket footprint test, the
# builds for other systems and architectures (and, where qemu-user is installed, the goroutine
# checks run on riscv64), the suite once more on the portable poller (the one other systems
# use) and once more on io_uring (where the kernel refuses it, the loops poll with epoll and say
# so), then the nested modules, each with the race detector and once more on io_uring.
test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	go vet ./...
	go vet -tags dwell_portable ./...
	go run $(STATICCHECK) ./...
	go test -race ./...
	go test -count=1 -run 'Alloc' ./...
	go test -count=1 -run 'Footprint' ./websocket/ ./core/...
	@set -e; for os in darwin freebsd windows; do \
		echo "== GOOS=$$os go build ./..."; GOOS=$$os go build ./...; \
	done
	@set -e; for arch in 386 riscv64 s390x; do \
		echo "== GOARCH=$$arch go build ./..."; GOARCH=$$arch go build ./...; \
	done
	@set -e; for arch in 386 arm arm64 loong64 mips mipsle mips64 mips64le ppc64 ppc64le riscv64 s390x; do \
		GOARCH=$$arch go vet ./core/internal/gid/; \
	done; GOOS=wasip1 GOARCH=wasm go vet ./core/internal/gid/
	@if command -v qemu-riscv64 >/dev/null; then \
		echo "== riscv64 under qemu-riscv64: goroutine identity, OnLoop, the kept-Ctx checks"; \
		GOARCH=riscv64 go test -c -o bin/gid.riscv64 ./core/internal/gid/ && qemu-riscv64 bin/gid.riscv64 -test.count=1 && \
		GOARCH=riscv64 go test -c -o bin/core.riscv64 ./core/ && (cd core && qemu-riscv64 ../bin/core.riscv64 -test.count=1 \
			-test.run 'Kept') && \
		GOARCH=riscv64 go test -c -o bin/http1.riscv64 ./core/internal/http1/ && (cd core/internal/http1 && \
			qemu-riscv64 ../../../bin/http1.riscv64 -test.count=1 \
			-test.run 'OnLoop|TimersOnly|GoroutineRefused|OtherRequestsCode|Kept|HooksAndResponder|ZeroLoops'); \
	fi
	go test -count=1 -tags dwell_portable ./...
	DWELL_POLLER=io_uring go test -count=1 ./...
	@set -e; for m in $(NESTED_MODULES); do \
		echo "== $$m"; \
		(cd $$m && go vet ./... && go run $(STATICCHECK) ./... && go test -race ./... && \
			DWELL_POLLER=io_uring go test -count=1 ./...); \
	done

# The chat page in headless Chromium: examples/chat/browser, a module of its own (chromedp).
# Installs the Debian package chromium first when no browser is found (CHROME names another).
BROWSER_TESTS := examples/chat/browser
CHROMIUM = $${CHROME:-$$(command -v chromium || command -v chromium-browser || command -v google-chrome)}

test-browser:
	@if [ -z "$(CHROMIUM)" ]; then \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		echo "== installing chromium"; \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@[ -n "$(CHROMIUM)" ] || { echo "no Chromium: install the Debian package chromium"; exit 1; }
	cd $(BROWSER_TESTS) && go vet ./... && go run $(STATICCHECK) ./... && CHROME="$(CHROMIUM)" go test -race -count=1 ./... && \
		DWELL_POLLER=io_uring CHROME="$(CHROMIUM)" go test -count=1 ./...

# Every fuzz target for a bounded time each (FUZZTIME, default 10s): the main module's, and
# those of the module that drives HTTP/2 connections with golang.org/x/net's encoder.
FUZZ_MODULES := . core/internal/h2/xnettest

fuzz:
	@set -e; for m in $(FUZZ_MODULES); do \
		for pkg in $$(cd $$m && go list ./...); do \
			for target in $$(cd $$m && go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
				echo "== $$pkg $$target"; \
				(cd $$m && go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg); \
			done; \
		done; \
	done

# Side-by-side measurements against net/http, fasthttp, nbio and nginx; writes docs/performance.md.
bench:
	$(MAKE) -C bench bench

bench-quick:
	$(MAKE) -C bench bench-quick

clean:
	go clean ./...
	rm -rf bin
