# Go tests of the runtime module: vet, the unit tests under the race
# detector, and a short run of every fuzz target.

# Each target fuzzes for a number of executions (about what 2.5 s gave on
# the shared 2-core machine: make test is a smoke run, FUZZ_TIME=30s a real
# one), not for a time: with -fuzztime 5s Go 1.26's fuzz coordinator can
# report "context deadline exceeded" when its deadline passes while a
# worker is mid-call (go.dev/issue/75804), which a loaded machine makes
# likely; a count has no deadline to race. A target listed without its
# count gets FUZZ_DEFAULT_COUNT; FUZZ_TIME=30s (or =50000x) fuzzes every
# target for that instead.
FUZZ_TIME ?=
FUZZ_DEFAULT_COUNT := 5000x
FUZZ_TARGETS := ./core:FuzzDecodeEnvelope:25000x ./core:FuzzReceive:10000x ./core:FuzzRestyledMessages:10000x \
	./internal/frontmatter:FuzzParse:35000x ./internal/hostvalidate:FuzzChecks:12500x ./auth:FuzzParseBearer:12500x \
	./internal/canonjson:FuzzCanonicalize:9000x ./internal/hiddenchars:FuzzClean:10000x ./internal/toolsearch:FuzzSearch:17500x \
	./transport/stdio:FuzzLineReader:1000x ./transport/sseparse:FuzzParser:5000x \
	./gateway:FuzzFrontMessage:3000x
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
