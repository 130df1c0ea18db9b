# The store (store/) and the grants in it (auth/tokenstore): the store
# contract on every backend (memory, file, PostgreSQL, Redis, the
# application's as Go, Python and Elixir answer it; each sealed too), the Manager's coordination against
# them, the pins' documents and the fleet's pins on every backend (hosts,
# and processes, sharing one pin store: an approval in one honoured in the
# others without a restart, two approving at once both kept), and the
# multi-process proof (tests/tokenstores: Go, C, Python and Elixir (one
# BEAM) processes and command-line runs sharing one grant against the
# strict authorization server, with random SIGKILLs, and with one DPoP
# key).
#   make test-tokenstores   starts a private PostgreSQL 15 cluster and a Redis
#                           server on free loopback ports (mk/tokenstore-servers.sh;
#                           redis-server is installed with apt-get when missing),
#                           runs the suite, and stops both by PID, also when a
#                           test fails or the run is interrupted
#   make bench-tokenstores  what the store costs, per backend (memory, file,
#                           PostgreSQL, Redis), sealed and not, with the same
#                           private servers: a token load and one refresh's
#                           store work (auth/tokenstore), a pinned list of 1,000
#                           tools refreshed and the time from an approval in one
#                           host to its effect in another sharing the store
#                           (host); TOKENSTORE_BENCH_RUNS runs (10), the file
#                           store in TOKENSTORE_BENCH_DIR (under build/: on the
#                           disk, as the temporary directory may be a tmpfs); the
#                           medians replace the section "Shared store" of
#                           tests/bench/RESULTS.md (benchtable -section); make
#                           bench runs it too and keeps that section

.PHONY: test-tokenstores bench-tokenstores
TEST_SUITES += test-tokenstores

TOKENSTORE_SERVERS := sh $(ROOT)/mk/tokenstore-servers.sh

# One shell: the trap stops the servers whatever happens after they start.
define with-tokenstore-servers
	@set -e; dir=$$(mktemp -d); trap '$(TOKENSTORE_SERVERS) stop '"$$dir" EXIT INT TERM; \
	$(TOKENSTORE_SERVERS) start "$$dir"; . "$$dir/env"; export LEMONMCP_REQUIRE_STORES=1; \
	$(1)
endef

test-tokenstores: lib python-dev elixir-nif
	$(call with-tokenstore-servers, \
	  set -o pipefail; { $(GO) test -race -count=1 -json ./store/... ./auth/tokenstore/ && \
	    $(GO) test -race -count=1 -json ./auth/ -run 'Test(SharedGrant|SharedDPoP|AppStore)' && \
	    $(GO) test -race -count=1 -json ./host/ -run 'TestPinDocs' && \
	    cd tests && $(GO) test -race -count=1 -json ./hosttests/ -run 'TestPinsFleet' && \
	    $(GO) vet -tags tokenstores ./tokenstores/ && \
	    PYTHON=$(PYTHON) $(GO) test -tags tokenstores -count=1 -timeout 20m -json ./tokenstores/; } | $(PYTHON) $(ROOT)/tests/tools/gotest_summary.py tokenstores)

# make bench runs the store rows too (as a prerequisite: bench.mk is untouched).
bench: bench-tokenstores

TOKENSTORE_BENCH_RUNS ?= 10
TOKENSTORE_BENCH_DIR  ?= $(BUILD)/bench-tokenstores
TOKENSTORE_BENCH_OUT  := $(BUILD)/bench/tokenstores.txt
TOKENSTORE_BENCH_NOTE := The file store is in $(patsubst $(ROOT)/%,%,$(TOKENSTORE_BENCH_DIR)) \
  ($$(findmnt -n -o FSTYPE -T $(TOKENSTORE_BENCH_DIR) 2>/dev/null || stat -f -c %T $(TOKENSTORE_BENCH_DIR))), \
  PostgreSQL 15 and Redis are private servers on loopback (mk/tokenstore-servers.sh); +sealed is the same store with \
  \"encryption\" (AES-256-GCM). RefreshCycle/load is one token load; RefreshCycle/refresh one refresh's store work: \
  two loads, the claim of the lease and the commit of new tokens that releases it (durable on the file store). \
  PinStore/refresh is a list of 1,000 pinned tools brought again (the pins' version read from the store; 300 per run: at 20 a run's warm-up and one collection of the lists' garbage made the cell); \
  PinStore/approval the time from an approval in one host to its effect in another host with its own store handle \
  (the re-read every 250 ms: half of it on average).
TOKENSTORE_BENCH_CMD := set -o pipefail; \
  { TOKENSTORE_BENCH_DIR=$(TOKENSTORE_BENCH_DIR) $(GO) test -run '^$$' -bench RefreshCycle -benchtime 300x -count $(TOKENSTORE_BENCH_RUNS) \
    ./auth/tokenstore/ && TOKENSTORE_BENCH_DIR=$(TOKENSTORE_BENCH_DIR) $(GO) test -run '^$$' -bench PinStore/refresh -benchtime 300x \
    -count $(TOKENSTORE_BENCH_RUNS) ./host/ && TOKENSTORE_BENCH_DIR=$(TOKENSTORE_BENCH_DIR) $(GO) test -run '^$$' -bench PinStore/approval \
    -benchtime 20x -count $(TOKENSTORE_BENCH_RUNS) ./host/; } | tee $(TOKENSTORE_BENCH_OUT); \
  $(BUILD)/bench/benchtable -section "Shared store: tokens and pins, per backend (make bench-tokenstores)" -gobench $(TOKENSTORE_BENCH_OUT) \
    -note "$(TOKENSTORE_BENCH_NOTE)" -out $(ROOT)/tests/bench/RESULTS.md

bench-tokenstores:
	@mkdir -p $(BUILD)/bench $(TOKENSTORE_BENCH_DIR)
	cd tests && $(GO) build -o $(BUILD)/bench/benchtable ./bench/benchtable
	$(call with-tokenstore-servers,$(TOKENSTORE_BENCH_CMD))
