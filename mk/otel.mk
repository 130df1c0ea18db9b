# OpenTelemetry for the tests (test-only, pinned, from PyPI; never a runtime
# dependency: lemonmcp[otel] only names opentelemetry-api as an extra).
#   make otel-setup        the OpenTelemetry SDK into .cache/otel-py (a
#                          --target the Python tests put on their path) and
#                          into the Python SDK server's venv .cache/modern-py
#                          (tests/fixtures/pyotel/server.py). Idempotent.
#   make test-python-otel  the Python OpenTelemetry tests alone
OTEL_PY  := $(CACHE)/otel-py
OTEL_SDK := opentelemetry-sdk==1.45.2
OTEL_ENV := LEMONMCP_OTEL_PATH=$(OTEL_PY) LEMONMCP_MODERN_PY=$(MODERN_PY)/bin/python \
	LEMONMCP_PYOTEL_SERVER=$(ROOT)/tests/fixtures/pyotel/server.py
.PHONY: otel-setup otel-py-setup modern-py-otel-setup test-python-otel

# Two installs, side by side under make -j; the second needs the venv only.
otel-setup: peers-setup otel-py-setup modern-py-otel-setup

otel-py-setup: uv-setup
	@test -f $(OTEL_PY)/opentelemetry/sdk/trace/__init__.py || \
	  $(UV) pip install --quiet --python $(PYTHON) --target $(OTEL_PY) $(OTEL_SDK)

modern-py-otel-setup: modern-py-setup
	@$(MODERN_PY)/bin/python -c "import opentelemetry.sdk.trace" 2>/dev/null || \
	  $(UV) pip install --quiet --python $(MODERN_PY)/bin/python $(OTEL_SDK)

test-python-otel: lib fixtures python-dev python-setup otel-setup
	cd $(PY_DIR) && $(PY_ENV) $(OTEL_ENV) LEMONMCP_FIXTURE=$(PY_FIXTURE) \
	  $(PYTHON) -m pytest -q -p no:cacheprovider tests/test_otel.py
