# Real-server tests against the reference server @modelcontextprotocol/server-everything
# (pinned in tests/everything/everything.py; installed from npm into .cache/everything/
# on first use), over stdio, legacy HTTP+SSE and Streamable HTTP.
#   make test-everything   the C host test (tests/c/everything.c, reusing tests/c/harness.[ch]);
#                          tests/everything/everything.py starts both HTTP servers on
#                          127.0.0.1 and kills their process groups afterwards
#   make everything-setup  installs the server (idempotent)
# The Python twin, bindings/python/tests/test_everything.py, runs inside test-python;
# LEMONMCP_SKIP_EVERYTHING=1 opts out of it (and of nothing else).
#   make test-everything EVERYTHING_ONLY="sse/ progress"   runs only matching tests

EVERYTHING_OUT    := $(BUILD)/ctest
EVERYTHING_CC     ?= gcc
EVERYTHING_CFLAGS := -std=c99 -Wall -Wextra -Werror -pthread -g -I$(BUILD)/include \
                     -DLMCP_FIXTURE_PATH='"$(BUILD)/fixtures/mcpfixture"'
EVERYTHING_ONLY   ?=

.PHONY: test-everything everything-setup
TEST_SUITES += test-everything

$(EVERYTHING_OUT)/lmcp_everything: $(ROOT)/tests/c/everything.c $(ROOT)/tests/c/harness.c $(ROOT)/tests/c/harness.h $(LIB) $(HEADER)
	@mkdir -p $(dir $@)
	$(EVERYTHING_CC) $(EVERYTHING_CFLAGS) -o $@ $(ROOT)/tests/c/everything.c $(ROOT)/tests/c/harness.c \
		-L$(BUILD) -llemonmcp -Wl,-rpath,$(BUILD)

everything-setup:
	$(PYTHON) $(ROOT)/tests/everything/everything.py install

test-everything: lib everything-setup $(EVERYTHING_OUT)/lmcp_everything
	$(PYTHON) $(ROOT)/tests/everything/everything.py run --timeout 600 -- \
		$(EVERYTHING_OUT)/lmcp_everything $(EVERYTHING_ONLY)
