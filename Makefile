# LemonMCP build. `make` builds build/liblemonmcp.so and the public header;
# `make test` runs every test suite (`make lint` among them); `make demo`
# runs the command-line client against the bundled fixture server; `make
# bench` runs the benchmarks.
# Each area keeps its rules in mk/*.mk; a fragment adds its suites to
# TEST_SUITES, and `make test` runs them all, in order, and sums their counts.

SHELL := /bin/bash
.DEFAULT_GOAL := all

ROOT        := $(abspath .)
BUILD       := $(ROOT)/build
CACHE       := $(ROOT)/.cache
ABI_VERSION := $(shell sed -n 's/^\#define LMCP_ABI_VERSION \([0-9]*\)$$/\1/p' include/lemonmcp.h)
VERSION     := $(shell sed -n 's/^\#define LMCP_VERSION_STRING "\(.*\)"$$/\1/p' include/lemonmcp.h)
SONAME      := liblemonmcp.so.$(ABI_VERSION)
LIB         := $(BUILD)/liblemonmcp.so
HEADER      := $(BUILD)/include/lemonmcp.h
HELPER      := $(BUILD)/lemonmcp-sandbox
GO          ?= go
PYTHON      ?= python3
PREFIX      ?= /usr/local
RESULTS     := $(BUILD)/test-results
export GOFLAGS := -buildvcs=false

.PHONY: all lib test demo bench install clean setup
TEST_SUITES :=

all: lib

include mk/lib.mk
include mk/install.mk
include mk/gotest.mk
include mk/fixtures.mk
include mk/ctest.mk
include mk/cxx.mk
include mk/python.mk
include mk/otel.mk
include mk/pypackage.mk
include mk/conformance.mk
include mk/everything.mk
include mk/elixir.mk
include mk/readme.mk
include mk/bench.mk
include mk/lint.mk
include mk/tokenstores.mk

# Every suite runs even when an earlier one fails, so one run shows every
# failure; the closing line sums them all and the exit status is non-zero if
# any suite failed.
test: lib
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	@status=0; i=0; for s in $(TEST_SUITES); do \
		i=$$((i+1)); log=$(RESULTS)/$$(printf '%02d' $$i)-$$s.log; \
		echo "=== $$s"; \
		$(MAKE) --no-print-directory $$s 2>&1 | tee $$log; rc=$${PIPESTATUS[0]}; \
		echo $$rc > $${log%.log}.status; \
		if [ $$rc -ne 0 ]; then echo "=== $$s FAILED (exit $$rc)"; status=1; fi; \
	done; \
	echo "=== summary"; $(PYTHON) tests/tools/summary.py $(RESULTS) || status=1; \
	exit $$status

clean:
	rm -rf $(BUILD)
