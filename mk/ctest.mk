# C host tests (tests/c/): a C program links $(LIB) and drives the fixture
# server over stdio. The suite (lmcp_ctest) is split by area into
# tests/c/test_*.c (CTEST_SUITE_SRC); tests/c/test_main.c is its runner and
# registry, tests/c/suite.h declares every test, tests/c/harness.{c,h} hold
# the shared set-up.
#   make test-c           smoke program, main suite, C++17 and pedantic C99
#                         header checks, check-symbols
#   make test-c-memcheck  the main suite under valgrind memcheck (its closing
#                         line counts the memcheck steps: errors of the smoke
#                         program and of the suite, leaks, the two canaries)
#   make ctest-setup      installs valgrind when missing (idempotent)
#   make test-c CTEST_ONLY="cancel crash"   runs only tests whose name matches
#   make test-c-sandbox   escapes from a confined server, as root and as nobody
#
# The memcheck run uses its own build of the library, from the same sources
# and flags as $(LIB) except for three things valgrind needs (none changes the
# code that runs):
#   - not stripped (no -s -w), so reports and suppressions name Go functions;
#   - GOEXPERIMENT=norandomizedheapbase64: Go 1.26 puts its heap at a random
#     address; without randomization it starts at 0xc000000000, so
#     --ignore-ranges can exempt Go-managed memory (see CTEST_VG_GO_HEAP);
#   - GOEXPERIMENT=nodwarf5: valgrind 3.19 cannot read DWARF 5 line tables.
# Why Go's heap is exempt from addressability checks: goroutine stacks live in
# Go heap spans, and the runtime switches the thread's stack pointer between
# them. Memcheck models one stack per thread and marks memory "freed" when the
# stack pointer moves up, so every reuse of a goroutine stack (and every
# copystack) is reported as an invalid read or write in arbitrary Go code —
# thousands of reports, none real. C memory (malloc: our strings, the host's
# buffers, handle keys) lies outside that range and stays fully checked.
# Leaks are judged in a second pass without the exemption (see
# CTEST_VG_LEAKS), and a canary (lmcp_smoke with LMCP_SMOKE_CANARY=1: one
# deliberate overread, one deliberate leak) must be caught by both passes.
# Also note: valgrind 3.19 does not implement pidfd_open (syscall 434, it
# prints a warning); Go then reaps the server with wait4 instead, so the
# memcheck run covers that fallback path.

CTEST_SRC    := $(ROOT)/tests/c
CTEST_OUT    := $(BUILD)/ctest
CTEST_MC     := $(CTEST_OUT)/memcheck
CTEST_CC     ?= gcc
CTEST_CXX    ?= g++
CTEST_CFLAGS := -std=c99 -Wall -Wextra -Werror -pthread -g -I$(BUILD)/include \
                -DLMCP_FIXTURE_PATH='"$(BUILD)/fixtures/mcpfixture"'
CTEST_HARNESS := $(CTEST_SRC)/harness.c $(CTEST_SRC)/harness.h
# The main suite, one file per area; test_main.c runs them in its order.
CTEST_SUITE_SRC := $(addprefix $(CTEST_SRC)/,test_main.c test_lifecycle.c test_calls.c \
                   test_process.c test_callbacks.c test_bad_input.c \
                   test_telemetry.c test_host_query.c)
CTEST_SUITE_DEPS := $(CTEST_SUITE_SRC) $(CTEST_SRC)/suite.h $(CTEST_HARNESS)
CTEST_ONLY   ?=

# Deadlines that only bound waits are multiplied under valgrind (~20x slower);
# the stderr flood is smaller there (still far past the 64 KiB pipe buffer).
# The memcheck library is built apart from $(LIB), so the sandbox helper
# that make lib puts beside $(LIB) is named for it: servers then run under
# the helper there as everywhere else.
CTEST_VG_ENV  := LMCP_TEST_TIME_SCALE=10 LMCP_TEST_STDERR_FLOOD=300000 LMCP_TEST_PIPE_PAD=16384 LEMONMCP_SANDBOX_HELPER=$(HELPER)
# Go's heap starts at 0xc000000000 and grows upward in 64 MiB arenas; 4 GiB
# is far more than the suite uses (past it, reports would reappear, loudly).
# Valgrind prints "ERROR: --ignore-ranges: suspiciously large range" for any
# range over 64 MiB; that line is only a notice: the range is applied.
CTEST_VG_GO_HEAP := 0xc000000000-0xc0ffffffff
# Pass 1, memory errors: invalid reads and writes of C memory (our strings,
# the host's buffers and callbacks), invalid and double frees, overlapping
# copies, bad syscall buffers; any error fails the run (exit 99). Go's heap is
# exempt from addressability checks (see above), and definedness checking is
# off: memcheck marks memory undefined whenever it thinks a stack frame was
# pushed, and with goroutine stacks inside Go's heap that clobbers the
# definedness of live Go data, which then flows into everything the library
# produces (we saw "uninitialised" reports in the GC pacer, map lookups, and
# in our own strlen over result buffers the library had fully written). The
# few Go runtime false positives left are suppressed in tests/c/valgrind.supp,
# each explained there.
CTEST_VG_ERRORS := --error-exitcode=99 --leak-check=no --undef-value-errors=no --num-callers=40 \
                   --ignore-ranges=$(CTEST_VG_GO_HEAP) \
                   --suppressions=$(CTEST_SRC)/valgrind.supp $(CTEST_VG_EXTRA)
# Pass 2, leaks: memcheck's leak scan skips --ignore-ranges, so C memory that
# only the Go heap points to (handle keys kept as tombstones, cached kind
# strings) would be reported "definitely lost". This pass therefore runs
# without it, and checks only the LEAK SUMMARY (pass 1 judged the errors;
# here Go code floods the log with the stack false positives explained above).
# The tombstoned handle keys are suppressed by a file tests/c/memcheck.sh
# writes from the library's symbols (why is written there).
CTEST_VG_LEAKS  := --leak-check=full --show-leak-kinds=definite,indirect --num-callers=40 \
                   --undef-value-errors=no \
                   --suppressions=$(CTEST_MC)/tombstones.supp $(CTEST_VG_EXTRA)

.PHONY: test-c test-c-memcheck ctest-setup ctest-bins

$(CTEST_OUT)/lmcp_smoke: $(CTEST_SRC)/smoke.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/smoke.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

$(CTEST_OUT)/lmcp_ctest: $(CTEST_SUITE_DEPS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SUITE_SRC) $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

# The multi-server host's lifecycle (tests/c/test_host.c): its own suite,
# so that its count line is summed by `make test`.
$(CTEST_OUT)/lmcp_host_test: $(CTEST_SRC)/test_host.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -DLMCP_CONFIGS_DIR='"$(ROOT)/tests/configs"' \
		-o $@ $(CTEST_SRC)/test_host.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-host
TEST_SUITES += test-c-host
test-c-host: lib fixtures $(CTEST_OUT)/lmcp_host_test
	$(CTEST_OUT)/lmcp_host_test

# The gateway's C ABI (issue 36, tests/c/test_server.c): a host served
# over a pair of descriptors and over HTTP, stop, wait, misuse.
$(CTEST_OUT)/lmcp_server_test: $(CTEST_SRC)/test_server.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_server.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-server
TEST_SUITES += test-c-server
test-c-server: lib fixtures $(CTEST_OUT)/lmcp_server_test
	$(CTEST_OUT)/lmcp_server_test

# Tool search and deferred exposure through the host (issue 22).
$(CTEST_OUT)/lmcp_host_search_test: $(CTEST_SRC)/test_host_search.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_host_search.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-host-search
TEST_SUITES += test-c-host-search
test-c-host-search: lib fixtures $(CTEST_OUT)/lmcp_host_search_test
	$(CTEST_OUT)/lmcp_host_search_test

# Pinned definitions through the C ABI (issue 27): the rugpull fixture writes
# the table of cases and each case's definitions first (the test never forks).
CTEST_PINS := $(CTEST_OUT)/pins
$(CTEST_OUT)/lmcp_host_pins_test: $(CTEST_SRC)/test_host_pins.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -DLMCP_PINS_DIR='"$(CTEST_PINS)"' -o $@ $(CTEST_SRC)/test_host_pins.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-host-pins
TEST_SUITES += test-c-host-pins
test-c-host-pins: lib fixtures $(CTEST_OUT)/lmcp_host_pins_test
	@mkdir -p $(CTEST_PINS) && $(BUILD)/fixtures/rugpull -cases > $(CTEST_PINS)/cases.tsv \
		&& $(BUILD)/fixtures/rugpull -case base -defs $(CTEST_PINS)/base.json \
		&& cut -f1 $(CTEST_PINS)/cases.tsv | while read c; do $(BUILD)/fixtures/rugpull -case $$c -defs $(CTEST_PINS)/$$c.json || exit 1; done
	$(CTEST_OUT)/lmcp_host_pins_test

# Escapes from a confined server (issue 28, tests/c/test_sandbox.c): the
# shared escape script as the server, the program run as root and, through
# setpriv, as nobody, plus a control without sandbox or helper.
$(CTEST_OUT)/lmcp_sandbox_test: $(CTEST_SRC)/test_sandbox.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -DLMCP_ESCAPES_PATH='"$(ROOT)/tests/fixtures/escapes/escapes.sh"' \
		-o $@ $(CTEST_SRC)/test_sandbox.c $(CTEST_SRC)/harness.c -L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-sandbox
TEST_SUITES += test-c-sandbox
test-c-sandbox: lib fixtures $(CTEST_OUT)/lmcp_sandbox_test
	$(CTEST_OUT)/lmcp_sandbox_test $(CTEST_ONLY)

# lmcp_client_free and lmcp_host_free racing every other call on their
# handle, and no callback after free: one program, a table of operations
# per handle kind.
$(CTEST_OUT)/lmcp_free_race: $(CTEST_SRC)/test_free_race.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_free_race.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

# The interoperability corpus through the C ABI (tests/c/interop.c): servers
# writing JSON in other styles, and bytes that are not UTF-8.
$(CTEST_OUT)/lmcp_interop: $(CTEST_SRC)/interop.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -DLMCP_PYSERVER_PATH='"$(ROOT)/tests/fixtures/pyserver/server.py"' \
		-o $@ $(CTEST_SRC)/interop.c $(CTEST_SRC)/harness.c -L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

# Completion queues (the QUEUE section of the header): calls completing
# into a queue the host polls, the queue freed racing pops and pending calls.
$(CTEST_OUT)/lmcp_queue_test: $(CTEST_SRC)/test_queue.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_queue.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-queue
TEST_SUITES += test-c-queue
test-c-queue: lib fixtures $(CTEST_OUT)/lmcp_queue_test
	$(CTEST_OUT)/lmcp_queue_test

# The header is C++-clean: compiled, linked and run as C++17.
$(CTEST_OUT)/header_cxx: $(CTEST_SRC)/header_cxx.cpp $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CXX) -std=c++17 -pedantic -Wall -Wextra -Werror -I$(BUILD)/include -o $@ $< \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

# The header is strict ISO C99 (compile only).
$(CTEST_OUT)/header_pedantic.o: $(CTEST_SRC)/header_pedantic.c $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) -std=c99 -pedantic -Wall -Wextra -Werror -I$(BUILD)/include -c -o $@ $<

ctest-bins: $(CTEST_OUT)/lmcp_smoke $(CTEST_OUT)/lmcp_ctest $(CTEST_OUT)/lmcp_free_race $(CTEST_OUT)/lmcp_interop \
	$(CTEST_OUT)/header_cxx $(CTEST_OUT)/header_pedantic.o

# The smoke program runs first and records the idle goroutine baseline.
test-c: lib fixtures check-symbols ctest-bins
	$(CTEST_OUT)/lmcp_smoke $(CTEST_OUT)/baseline.txt
	$(CTEST_OUT)/header_cxx
	$(CTEST_OUT)/lmcp_ctest $(CTEST_OUT)/baseline.txt $(CTEST_ONLY)

# Its own suite, so that make test sums its count line with the others.
.PHONY: test-c-interop
TEST_SUITES += test-c-interop
test-c-interop: lib fixtures $(CTEST_OUT)/lmcp_interop
	$(CTEST_OUT)/lmcp_interop $(CTEST_ONLY)

# Trace context end to end to a Python-SDK server that traces (issue #21).
.PHONY: test-c-otel
TEST_SUITES += test-c-otel
$(CTEST_OUT)/lmcp_otel: $(CTEST_SRC)/test_otel.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(CTEST_OUT)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_otel.c $(CTEST_SRC)/harness.c \
	  -L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)
test-c-otel: lib fixtures otel-setup $(CTEST_OUT)/lmcp_otel
	$(CTEST_OUT)/lmcp_otel $(MODERN_PY)/bin/python $(ROOT)/tests/fixtures/pyotel/server.py

# Its own suite, so that make test sums its count line with the others.
.PHONY: test-c-free-race
TEST_SUITES += test-c-free-race
test-c-free-race: lib fixtures $(CTEST_OUT)/lmcp_free_race
	$(CTEST_OUT)/lmcp_free_race

# 2025-11-25 tasks through the C ABI (tests/c/test_tasks.c), against the
# fixture and the TypeScript SDK v1 server (make tsv1-fixture).
.PHONY: test-c-tasks
$(CTEST_OUT)/lmcp_tasks_test: $(CTEST_SRC)/test_tasks.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -DLMCP_TSV1_DIR='"$(TSV1_DIR)"' -o $@ $(CTEST_SRC)/test_tasks.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

TEST_SUITES += test-c-tasks
test-c-tasks: lib fixtures tsv1-fixture $(CTEST_OUT)/lmcp_tasks_test
	$(CTEST_OUT)/lmcp_tasks_test $(CTEST_ONLY)

# ---------------------------------------------------------------- memcheck

ctest-setup:
	@command -v valgrind >/dev/null 2>&1 || $(APT_GET) install -y valgrind \
		|| { $(APT_GET) update && $(APT_GET) install -y valgrind; }

# Same package, same link flags as mk/lib.mk, minus -s -w (see above). Always
# delegated to go build: its cache makes an unchanged rebuild cheap.
$(CTEST_MC)/liblemonmcp.so.1: $(LIB)
	@mkdir -p $(dir $@)
	GOEXPERIMENT=norandomizedheapbase64,nodwarf5 $(GO) build -buildmode=c-shared -trimpath \
		-ldflags "-extldflags '-Wl,-soname,$(SONAME) -Wl,-z,nodelete'" \
		-o $(CTEST_MC)/liblemonmcp.so.1.tmp ./capi
	rm -f $(CTEST_MC)/liblemonmcp.so.1.h
	mv $(CTEST_MC)/liblemonmcp.so.1.tmp $@
	ln -sf liblemonmcp.so.1 $(CTEST_MC)/liblemonmcp.so

$(CTEST_MC)/lmcp_smoke: $(CTEST_SRC)/smoke.c $(CTEST_HARNESS) $(CTEST_MC)/liblemonmcp.so.1 $(HEADER)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/smoke.c $(CTEST_SRC)/harness.c \
		-L$(CTEST_MC) -llemonmcp -Wl,-rpath,$(CTEST_MC)

$(CTEST_MC)/lmcp_ctest: $(CTEST_SUITE_DEPS) $(CTEST_MC)/liblemonmcp.so.1 $(HEADER)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SUITE_SRC) $(CTEST_SRC)/harness.c \
		-L$(CTEST_MC) -llemonmcp -Wl,-rpath,$(CTEST_MC)

$(CTEST_MC)/lmcp_free_race: $(CTEST_SRC)/test_free_race.c $(CTEST_HARNESS) $(CTEST_MC)/liblemonmcp.so.1 $(HEADER)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_free_race.c $(CTEST_SRC)/harness.c \
		-L$(CTEST_MC) -llemonmcp -Wl,-rpath,$(CTEST_MC)

$(CTEST_MC)/lmcp_serve: $(CTEST_SRC)/test_serve.c $(CTEST_HARNESS) $(CTEST_MC)/liblemonmcp.so.1 $(HEADER)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_serve.c $(CTEST_SRC)/harness.c \
		-L$(CTEST_MC) -llemonmcp -Wl,-rpath,$(CTEST_MC)

# The whole suite runs under memcheck twice (errors and leaks, side by side:
# valgrind keeps a program on one core; 20-40 s each), then a canary proves
# the checks are live; tests/c/memcheck.sh runs every step and keeps the
# logs in $(CTEST_MC)/*.vg.log.
test-c-memcheck: lib fixtures ctest-setup $(CTEST_MC)/lmcp_smoke $(CTEST_MC)/lmcp_ctest $(CTEST_MC)/lmcp_free_race $(CTEST_MC)/lmcp_serve
	MC_DIR=$(CTEST_MC) VG_ENV="$(CTEST_VG_ENV)" VG_ERRORS="$(CTEST_VG_ERRORS)" \
		VG_LEAKS="$(CTEST_VG_LEAKS)" CTEST_ONLY="$(CTEST_ONLY)" $(CTEST_SRC)/memcheck.sh

# `make test` runs every registered suite (each one even if another failed)
# and sums their closing "N passed, N failed" lines.
setup: ctest-setup
TEST_SUITES += test-c test-c-memcheck

# A C host serving itself as one MCP server to an lmcp_client front, with a
# server's sampling relayed (issue 36, tests/c/test_serve.c; the ABI's own
# surface is test-c-server's).
$(CTEST_OUT)/lmcp_serve_test: $(CTEST_SRC)/test_serve.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_serve.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-serve
TEST_SUITES += test-c-serve
test-c-serve: lib fixtures $(CTEST_OUT)/lmcp_serve_test
	$(CTEST_OUT)/lmcp_serve_test $(CTEST_ONLY)

# Blocking calls over Streamable HTTP, submitted to a library goroutine
# (tests/c/test_http_sync.c, issue 41): a host served over HTTP is the
# server.
$(CTEST_OUT)/lmcp_http_sync_test: $(CTEST_SRC)/test_http_sync.c $(CTEST_HARNESS) $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(CTEST_CC) $(CTEST_CFLAGS) -o $@ $(CTEST_SRC)/test_http_sync.c $(CTEST_SRC)/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

.PHONY: test-c-http-sync
TEST_SUITES += test-c-http-sync
test-c-http-sync: lib fixtures $(CTEST_OUT)/lmcp_http_sync_test
	$(CTEST_OUT)/lmcp_http_sync_test $(CTEST_ONLY)
