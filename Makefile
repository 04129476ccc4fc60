# The two set-up commands are `make run` and `make test`; see README.md.

PROGRAM ?= examples/hello
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 10s
# Nested modules (their own go.mod, for dependencies the main module does not take): make test
# vets and tests each of them too.
NESTED_MODULES := wait/jetstream examples/chatcluster

.PHONY: build run test fuzz bench bench-quick clean

build:
	go build ./...

# Starts an example: make run PROGRAM=examples/chat ARGS="-loops 2"
run:
	go run ./$(PROGRAM) $(ARGS)

# Formatting, vet, staticcheck, the race-enabled suite, then the allocation tests, which only
# count true allocations in a build without the race detector.
test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	go vet ./...
	go run $(STATICCHECK) ./...
	go test -race ./...
	go test -count=1 -run 'Alloc' ./...
	@set -e; for m in $(NESTED_MODULES); do \
		echo "== $$m"; \
		(cd $$m && go vet ./... && go run $(STATICCHECK) ./... && go test -race ./...); \
	done

# Every fuzz target for a bounded time each (FUZZTIME, default 10s).
fuzz:
	@set -e; for pkg in $$(go list ./...); do \
		for target in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target"; \
			go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg; \
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
