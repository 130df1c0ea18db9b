# Fixture MCP servers (tests/ is its own Go module, so the go-sdk and other
# test-only dependencies never reach the runtime module).
#   make fixtures       builds $(BUILD)/fixtures/mcpfixture, the server every test drives,
#                       rawecho, and oauthfixture (the OAuth-protected HTTP server)
#   make test-fixtures  vets and tests the fixtures themselves

.PHONY: fixtures test-fixtures
TEST_SUITES += test-fixtures

# Always delegate to go build: its cache makes a no-op rebuild cheap, and
# make cannot see the module's real dependency graph.
fixtures:
	cd tests && $(GO) build -o $(BUILD)/fixtures/mcpfixture ./fixtures/mcpfixture && $(GO) build -o $(BUILD)/fixtures/rawecho ./fixtures/rawecho \
		&& $(GO) build -o $(BUILD)/fixtures/oauthfixture ./fixtures/oauthfixture

test-fixtures:
	cd tests && $(GO) vet ./...
	set -o pipefail; cd tests && $(GO) test -race -count=1 -json ./... | $(PYTHON) $(ROOT)/tests/tools/gotest_summary.py tests-module
