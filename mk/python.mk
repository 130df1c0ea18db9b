# Python binding and the `lemonmcp` command line (bindings/python/).
#   make python-setup   installs pytest, mypy and wheel when missing (quiet, idempotent)
#   make python-dev     copies $(LIB) into the package so `import lemonmcp` works in-tree
#   make test-python    mypy --strict on the package, then pytest against the fixture server
#                       (make test runs it as test-python-1 and test-python-2, side by side)
#   make python-wheel   (mk/pypackage.mk) a manylinux wheel with the .so inside, and an sdist
#   make python-bench   µs per call_tool through the binding, against the fixture
#   make demo           the command line against the fixture: info, tools, one call

PY_DIR     := $(ROOT)/bindings/python
PY_PKG     := $(PY_DIR)/lemonmcp
PY_LIB     := $(PY_PKG)/liblemonmcp.so
PY_FIXTURE := $(BUILD)/fixtures/mcpfixture
PY_ENV     := PYTHONPATH=$(PY_DIR)
PY_RUN     := $(PY_ENV) $(PYTHON) -m lemonmcp --stdio $(PY_FIXTURE)

.PHONY: python-setup python-dev test-python python-bench python-bench-cli demo

python-setup:
	@for mod in pytest mypy wheel; do \
	  $(PYTHON) -c "import $$mod" 2>/dev/null || \
	    $(PYTHON) -m pip install --quiet --disable-pip-version-check $$mod || exit 1; \
	done

# Copy through a temporary name and rename: a running Python that has the
# old copy mapped keeps it intact.
python-dev: lib
	@if ! cmp -s $(LIB) $(PY_LIB); then \
	  cp $(LIB) $(PY_LIB).tmp && chmod 0755 $(PY_LIB).tmp && mv -f $(PY_LIB).tmp $(PY_LIB); \
	  echo "copied $(LIB) into bindings/python/lemonmcp/"; \
	fi
	@if ! cmp -s $(HELPER) $(PY_DIR)/lemonmcp/lemonmcp-sandbox; then \
	  cp $(HELPER) $(PY_DIR)/lemonmcp/lemonmcp-sandbox.tmp && mv -f $(PY_DIR)/lemonmcp/lemonmcp-sandbox.tmp $(PY_DIR)/lemonmcp/lemonmcp-sandbox; \
	  echo "copied the sandbox helper beside it"; \
	fi

PY_TEST_DEPS := lib fixtures python-dev python-setup tasks-peer-setup otel-setup everything-setup node22-setup gateway-fronts-setup
# (recursive: OTEL_ENV is defined in mk/otel.mk, read after this file)
PY_PYTEST     = cd $(PY_DIR) && $(PY_ENV) $(OTEL_ENV) LEMONMCP_FIXTURE=$(PY_FIXTURE) LEMONMCP_REQUIRE_PEERS=1 \
	  $(PY_SHARD_ENV) $(PYTHON) -m pytest -q -rs -p no:cacheprovider --durations=10 tests
PY_MYPY      := cd $(PY_DIR) && $(PY_ENV) $(PYTHON) -m mypy --strict --cache-dir $(CACHE)/mypy lemonmcp

test-python: $(PY_TEST_DEPS)
	$(PY_MYPY)
	$(PY_PYTEST)

# make test runs pytest as PY_SHARDS suites side by side (its tests mostly
# wait on servers and subprocesses), test-python-1 of 2 and test-python-2 of
# 2; each test runs in exactly one (tests/conftest.py deals them out), and
# mypy runs in the first.
PY_SHARDS := 2
define py_shard
.PHONY: test-python-$(1)
TEST_SUITES += test-python-$(1)
test-python-$(1): $$(PY_TEST_DEPS)
	$(if $(filter 1,$(1)),$$(PY_MYPY))
	$$(PY_PYTEST)
test-python-$(1): PY_SHARD_ENV = LEMONMCP_PYTEST_SHARD=$(1)/$(PY_SHARDS)
endef
$(foreach i,$(shell seq $(PY_SHARDS)),$(eval $(call py_shard,$(i))))

python-bench: lib fixtures python-dev
	cd $(PY_DIR) && $(PY_ENV) LEMONMCP_FIXTURE=$(PY_FIXTURE) $(PYTHON) bench/bench_call.py

python-bench-cli: lib fixtures
	cd $(PY_DIR) && $(PY_ENV) LEMONMCP_FIXTURE=$(PY_FIXTURE) $(PYTHON) bench/bench_cli_config.py

demo: lib fixtures python-dev
	$(PY_RUN) info
	$(PY_RUN) tools
	$(PY_RUN) call echo text="hello from lemonmcp"

setup: python-setup
