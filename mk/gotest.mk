# Go tests of the runtime module: vet, the unit tests under the race
# detector, and a short run of every fuzz target.

# Each target fuzzes for a number of executions (about what 5 s gave on
# the shared 2-core machine), not for a time: with -fuzztime 5s Go 1.26's
# fuzz coordinator can report "context deadline exceeded" when its deadline
# passes while a worker is mid-call (go.dev/issue/75804), which a loaded
# machine makes likely; a count has no deadline to race. A target listed
# without its count gets FUZZ_DEFAULT_COUNT; FUZZ_TIME=30s (or =50000x)
# fuzzes every target for that instead.
FUZZ_TIME ?=
FUZZ_DEFAULT_COUNT := 10000x
FUZZ_TARGETS := ./core:FuzzDecodeEnvelope:50000x ./core:FuzzReceive:20000x ./core:FuzzRestyledMessages:20000x \
	./internal/frontmatter:FuzzParse:70000x ./internal/hostvalidate:FuzzChecks:25000x ./auth:FuzzParseBearer:25000x \
	./internal/canonjson:FuzzCanonicalize:18000x ./internal/hiddenchars:FuzzClean:20000x ./internal/toolsearch:FuzzSearch:35000x \
	./transport/stdio:FuzzLineReader:2000x ./transport/sseparse:FuzzParser:10000x
# One fuzzing worker per target: make test runs this suite beside others on
# a 2-core machine, where a second worker takes its core from them
# (FUZZ_PARALLEL=N for more workers).
FUZZ_PARALLEL ?= 1

.PHONY: test-go test-go-fuzz
TEST_SUITES += test-go test-go-fuzz

test-go:
	$(GO) vet ./...
	set -o pipefail; $(GO) test -race -count=1 -json ./... | $(PYTHON) tests/tools/gotest_summary.py go

test-go-fuzz:
	@set -e; n=0; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; count=$${rest#$$fn}; count=$${count#:}; \
		ft=$(or $(FUZZ_TIME),$${count:-$(FUZZ_DEFAULT_COUNT)}); \
		echo "fuzz $$pkg $$fn for $$ft"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $$ft -parallel $(FUZZ_PARALLEL) $$pkg; n=$$((n+1)); \
	done; echo "fuzz: $$n passed, 0 failed"
