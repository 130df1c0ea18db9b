# LemonMCP build. `make` builds build/liblemonmcp.so and the public header;
# `make test` runs every test suite (`make lint` among them); `make demo`
# runs the command-line client against the bundled fixture server; `make
# bench` runs the benchmarks.
# Each area keeps its rules in mk/*.mk; a fragment adds its suites to
# TEST_SUITES, and `make test` runs them all (side by side, tests/tools/
# runsuites.py) and sums their counts.

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
# The interpreter, resolved once. python3 on PATH may be a version
# manager's shim (pyenv's is a shell script that costs ~0.1 s of CPU per
# start, and make test starts Python by name hundreds of times: scripts
# with #!/usr/bin/env python3, test peers): its directory then goes first
# on PATH, as the shim itself would put it for the program it runs.
PYTHON_EXE  := $(shell $(PYTHON) -c 'import sys; print(sys.executable)' 2>/dev/null)
ifneq ($(PYTHON_EXE),)
ifneq ($(dir $(PYTHON_EXE)),$(dir $(shell command -v python3 2>/dev/null)))
export PATH := $(dir $(PYTHON_EXE)):$(PATH)
endif
PYTHON      := $(PYTHON_EXE)
endif
PREFIX      ?= /usr/local
RESULTS     := $(BUILD)/test-results
# -trimpath: a package's build is then cached whatever directory the clone
# is in (without it the directory is part of every compile's cache key, and
# a fresh clone compiles the module's packages again, race builds and vet
# included: about 40 s of CPU in test-go alone).
export GOFLAGS := -buildvcs=false -trimpath
# Every Python process the build and the tests start (hundreds of command
# line runs) keeps its bytecode here, out of the tree, compiled once
# instead of at every start.
export PYTHONPYCACHEPREFIX := $(BUILD)/pycache
# PYTHONDONTWRITEBYTECODE, which some environments set (this machine
# among them), would defeat that: every start compiled the standard library
# and the package again, 0.4 s of CPU out of a command-line run's 0.55.
unexport PYTHONDONTWRITEBYTECODE
# Suites run side by side (see test:), and two apt-gets at once fail on
# dpkg's lock: every setup target installs through this, which waits its turn.
APT_GET     := flock /tmp/lemonmcp-apt.lock apt-get

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
include mk/gateway.mk
include mk/otel.mk
include mk/pypackage.mk
include mk/conformance.mk
include mk/everything.mk
include mk/elixir.mk
include mk/readme.mk
include mk/bench.mk
include mk/lint.mk
include mk/tokenstores.mk
include mk/dist.mk

# Every suite runs even when an earlier one fails, so one run shows every
# failure; the closing line sums them all and the exit status is non-zero if
# any suite failed. tests/tools/runsuites.py builds what two or more suites
# need once, first, then runs TEST_JOBS suites at a time, each with its own
# log, and the longest first (timed by the previous run, or on a fresh clone
# by tests/tools/suite-times.txt). TEST_JOBS=1 runs them one by one.
TEST_JOBS ?= 5
test:
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	@$(PYTHON) tests/tools/runsuites.py --make "$(MAKE)" --results $(RESULTS) --jobs $(TEST_JOBS) \
		--times $(BUILD)/test-times.txt --hints tests/tools/suite-times.txt $(TEST_SUITES)

clean:
	rm -rf $(BUILD)
