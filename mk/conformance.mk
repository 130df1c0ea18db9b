# The official MCP conformance suite, client side (tests/conformance/).
#   make conformance       every client scenario of both suite versions, with the table
#   make test-conformance  the same, judged against the expected-failures baseline:
#                          fails on a regression or a stale baseline entry
# Node 22 (node22-setup, mk/fixtures.mk) and the suites are installed on first
# use into .cache/conformance/ (git-ignored); per-scenario output goes to tests/conformance/results/.
# CONFORMANCE_ARGS passes extra runner options (--scenario NAME, --suite VERSION,
# --jobs N, --timeout SECONDS, --verbose).

CONFORMANCE_BASELINE ?= $(ROOT)/tests/conformance/expected-failures.txt
CONFORMANCE_ARGS     ?=

.PHONY: conformance test-conformance
TEST_SUITES += test-conformance

conformance: lib python-dev node22-setup
	$(PYTHON) $(ROOT)/tests/conformance/run.py --verbose $(CONFORMANCE_ARGS)

test-conformance: lib python-dev node22-setup
	$(PYTHON) $(ROOT)/tests/conformance/run.py --baseline $(CONFORMANCE_BASELINE) $(CONFORMANCE_ARGS)
