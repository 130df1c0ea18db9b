# Shared OAuth token stores (auth/tokenstore): the store contract on the
# file, PostgreSQL and Redis stores, the Manager's coordination against
# them, and the multi-process proof (tests/tokenstores: Go, C, Python and
# Elixir (one BEAM) processes and command-line runs sharing one grant
# against the strict authorization server, with random SIGKILLs, and with
# one DPoP key).
#   make test-tokenstores   starts a private PostgreSQL 15 cluster and a Redis
#                           server on free loopback ports (mk/tokenstore-servers.sh;
#                           redis-server is installed with apt-get when missing),
#                           runs the suite, and stops both by PID, also when a
#                           test fails or the run is interrupted
#   make bench-tokenstores  the cost of one refresh through each store (file,
#                           PostgreSQL, Redis, against memory), with the same
#                           private servers; make bench runs it too

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
	  set -o pipefail; { $(GO) test -race -count=1 -json ./auth/tokenstore/ ./auth/ -run 'Test(Contract|Concurrent|FileStore|OpenErrors|Closed|ServerStore|PostgresConcurrent|RecordPrints|SharedGrant|SharedDPoP|AppStore)' && \
	    cd tests && $(GO) vet -tags tokenstores ./tokenstores/ && \
	    PYTHON=$(PYTHON) $(GO) test -tags tokenstores -count=1 -timeout 20m -json ./tokenstores/; } | $(PYTHON) $(ROOT)/tests/tools/gotest_summary.py tokenstores)

# make bench runs the store rows too (as a prerequisite: bench.mk is untouched).
bench: bench-tokenstores

bench-tokenstores:
	$(call with-tokenstore-servers, \
	  $(GO) test -run '^$$' -bench RefreshCycle -benchtime 300x ./auth/tokenstore/)
