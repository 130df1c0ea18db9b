# The host served as one MCP server (`lemonmcp serve`, docs/gateway.md):
# the front clients its tests drive, each an official SDK's client.
#   make gateway-fronts-setup  the Python SDK 1.x client (the venv make bench
#                     uses for its anchor rows), the TypeScript SDK v2 client
#                     into .cache/front-ts; the Python SDK 2.x and TypeScript
#                     SDK v1 clients are the peers mk/fixtures.mk installs
#                     (modern-py-setup, tasks-peer-setup). Idempotent.
# The tests themselves are in the Python suite
# (bindings/python/tests/test_gateway_fronts.py, test_serve.py) and the
# Elixir and C suites (LemonMCP.Host.serve/2, tests/c/test_serve.c).

FRONT_TS     := $(CACHE)/front-ts
FRONT_PYSDK1 := 1.30.0
.PHONY: gateway-fronts-setup front-ts-setup front-pysdk1-setup
gateway-fronts-setup: front-ts-setup front-pysdk1-setup modern-py-setup tasks-peer-setup

front-ts-setup:
	@test -f $(FRONT_TS)/node_modules/@modelcontextprotocol/client/package.json || { \
	  mkdir -p $(FRONT_TS) && echo '{"name":"front-ts","private":true,"type":"module"}' > $(FRONT_TS)/package.json && \
	  npm install --silent --no-audit --no-fund --prefix $(FRONT_TS) @modelcontextprotocol/client@2.4.0 zod@4 >/dev/null; }

front-pysdk1-setup: uv-setup
	@$(CACHE)/pysdk-$(FRONT_PYSDK1)/bin/python -c "import mcp.client.session, mcp.client.streamable_http" 2>/dev/null || \
	  $(call uv_venv,$(CACHE)/pysdk-$(FRONT_PYSDK1),mcp==$(FRONT_PYSDK1))
