# Go tests of the runtime module: vet, the unit tests under the race
# detector, and a short run of every fuzz target.

FUZZ_TIME ?= 5s
# One fuzzing worker per target: make test runs this suite beside others on
# a 2-core machine, where a second worker takes its core from them (each
# target still fuzzes for FUZZ_TIME; FUZZ_PARALLEL=N for more workers).
FUZZ_PARALLEL ?= 1
FUZZ_TARGETS := ./core:FuzzDecodeEnvelope ./core:FuzzReceive ./core:FuzzRestyledMessages ./internal/frontmatter:FuzzParse ./internal/hostvalidate:FuzzChecks ./auth:FuzzParseBearer ./internal/canonjson:FuzzCanonicalize ./internal/toolsearch:FuzzSearch ./transport/stdio:FuzzLineReader ./transport/sseparse:FuzzParser

.PHONY: test-go test-go-fuzz
TEST_SUITES += test-go test-go-fuzz

test-go:
	$(GO) vet ./...
	set -o pipefail; $(GO) test -race -count=1 -json ./... | $(PYTHON) tests/tools/gotest_summary.py go

test-go-fuzz:
	@set -e; n=0; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "fuzz $$pkg $$fn for $(FUZZ_TIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZ_TIME) -parallel $(FUZZ_PARALLEL) $$pkg; n=$$((n+1)); \
	done; echo "fuzz: $$n passed, 0 failed"
