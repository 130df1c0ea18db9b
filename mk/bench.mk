# Benchmarks, side by side with the peers on the same servers. Figures are
# for ratios within one run: the machines are shared and noisy, and no
# figure is ever asserted.
#   make bench        the table: floor, LemonMCP (Go core, C host, Python sync
#                     and async, Elixir), go-sdk and mcp-go clients; go-sdk and
#                     minimal servers; stdio and Streamable HTTP; plus a 10 MiB
#                     result and N simultaneous stdio clients. Printed and
#                     written to tests/bench/RESULTS.md, keeping the sections
#                     other targets write there (about 10 minutes on 2
#                     cores; BENCH_ROUNDS, BENCH_N, BENCH_PN, BENCH_MANY and
#                     BENCH_SKIP=python,elixir tune it).
#   make bench-pysdk-setup  the official Python SDK's client, 1.x and 2.x,
#                     each in its own venv under .cache (idempotent): the
#                     anchor rows of make bench (BENCH_SKIP=pysdk leaves them out)
#   make bench-go     the Go micro-benchmarks (go test -bench)
#   make bench-search the tool search on real catalogues (recorded tools/list
#                     results of widely used servers and the live fixture,
#                     tests/searcheval): recall at 1, 3, 5 on its query set,
#                     list_tools bytes with every tool against deferred_tools,
#                     and one search of 1,000 tools; make bench ends with it
#   make bench-search-python  search latency through Python (Host.search_tools),
#                     p50/p99, on a host of 39 tools (two of its servers
#                     2026-07-28 without ttlMs) and one of 1,000 tools
#                     (tests/bench/clients/pysearch.py; BENCH_SEARCH_RUNS
#                     searches of each query); make bench ends with it too
#   make bench-gateway  what `lemonmcp serve` adds to a call (docs/gateway.md):
#                     p50 added, the gateway's CPU per call against a C host's
#                     own, 16-way calls/s, stdio and Streamable HTTP fronts, the
#                     same clients directly and through it
#                     (tests/bench/clients/pygateway.py); its own section of
#                     RESULTS.md, which make bench keeps and ends with
#   make bench-pins   the cost of pinning a list of 1,000 tools per refresh (host
#                     "pins": an unchanged list, one tool changed, every tool new),
#                     wall and CPU time; make bench runs it after bench-search
.PHONY: bench bench-go bench-tools bench-search bench-search-python bench-pins bench-pysdk-setup bench-gateway
BENCH_COUNT  ?= 3
BENCH_ROUNDS ?= 3
BENCH_N      ?= 2000
BENCH_PN     ?= 4000
BENCH_MANY   ?= 1,100,1000
BENCH_LARGE  ?= 2
BENCH_SKIP   ?=
BENCH_SEARCH_RUNS ?= 20
BENCH_BIN    := $(BUILD)/bench
BENCH_CFLAGS := -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -I$(BUILD)/include

# The Elixir client needs the NIF built; the Python one the library copied
# into the package. Both are skipped with BENCH_SKIP.
BENCH_DEPS := lib bench-tools $(if $(findstring python,$(BENCH_SKIP)),,python-dev fixtures) $(if $(findstring elixir,$(BENCH_SKIP)),,elixir-nif) \
	$(if $(findstring pysdk,$(BENCH_SKIP)),,bench-pysdk-setup)

# The Python SDK releases the anchor rows run (pinned: the newest 1.x and
# 2.x on PyPI), each in a venv of its own.
BENCH_PYSDKS := 1.30.0 2.3.0
bench-pysdk-setup: uv-setup
	@for v in $(BENCH_PYSDKS); do \
	  $(CACHE)/pysdk-$$v/bin/python -c "import mcp.client.session, mcp.client.streamable_http" 2>/dev/null || \
	    $(call uv_venv,$(CACHE)/pysdk-$$v,mcp==$$v) || exit 1; \
	done

bench-tools: lib
	@mkdir -p $(BENCH_BIN)
	cd tests && $(GO) build -o $(BENCH_BIN)/benchserver ./bench/benchserver && $(GO) build -o $(BENCH_BIN)/benchclient ./bench/benchclient \
		&& $(GO) build -o $(BENCH_BIN)/benchtable ./bench/benchtable
	gcc $(BENCH_CFLAGS) -o $(BENCH_BIN)/bench_host tests/bench/clients/bench_host.c -L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)
	gcc $(BENCH_CFLAGS) -o $(BENCH_BIN)/tinyserver tests/bench/clients/tinyserver.c

bench: $(BENCH_DEPS)
	$(BENCH_BIN)/benchtable -bin $(BENCH_BIN) -python $(PYTHON) -pypath $(PY_DIR) -exdir $(EX_DIR) -lib $(BUILD)/$(SONAME) \
		-rounds $(BENCH_ROUNDS) -n $(BENCH_N) -pn $(BENCH_PN) -large $(BENCH_LARGE) -many $(BENCH_MANY) -skip '$(BENCH_SKIP)' \
		-out tests/bench/RESULTS.md $(foreach v,$(BENCH_PYSDKS),-pysdk $(v)=$(CACHE)/pysdk-$(v)/bin/python) \
		$(if $(findstring python,$(BENCH_SKIP)),,-pybench 'cd $(PY_DIR) && $(PY_ENV) BENCH_N=1000 BENCH_ROUNDS=3 LEMONMCP_FIXTURE=$(PY_FIXTURE) $(PYTHON) bench/bench_call.py')
	@$(MAKE) --no-print-directory bench-search
	$(if $(findstring python,$(BENCH_SKIP)),,@$(MAKE) --no-print-directory bench-search-python)
	@$(MAKE) --no-print-directory bench-pins
	$(if $(findstring python,$(BENCH_SKIP)),,@$(MAKE) --no-print-directory bench-gateway)

bench-search: lib fixtures
	cd tests && $(GO) run ./searcheval/searchreport -fixture $(BUILD)/fixtures/mcpfixture

bench-search-python: python-dev
	@mkdir -p $(BENCH_BIN)
	cd tests && $(GO) build -o $(BENCH_BIN)/replayserver ./searcheval/replayserver
	cd $(PY_DIR) && $(PY_ENV) $(PYTHON) $(ROOT)/tests/bench/clients/pysearch.py -replay $(BENCH_BIN)/replayserver \
		-catalogues $(ROOT)/tests/searcheval/catalogues -queries $(ROOT)/tests/searcheval/queries.json -runs $(BENCH_SEARCH_RUNS)

bench-go: lib fixtures
	cd tests && $(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./bench/
	$(GO) test -run '^$$' -bench . -benchmem ./transport/stdio/
	$(GO) test -run '^$$' -bench . -benchmem ./internal/toolsearch/
	cd tests && $(GO) test -run '^$$' -bench . -benchmem ./searcheval/

bench-pins:
	$(GO) test -run '^$$' -bench 'BenchmarkPinList1000|BenchmarkHeldReason' -benchtime 2s ./host

bench-gateway: bench-tools python-dev
	$(PYTHON) tests/bench/clients/pygateway.py -bin $(BENCH_BIN) -python $(PYTHON) -pypath $(PY_DIR) \
		-rounds $(BENCH_ROUNDS) -n $(BENCH_N) -pn $(BENCH_PN) -out tests/bench/RESULTS.md
