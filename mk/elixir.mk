# Elixir NIF binding (bindings/elixir_nif/): LemonMCP.Client on the BEAM.
#   make elixir-setup   installs Elixir and the ERTS headers with apt-get when missing (idempotent)
#   make elixir-nif     builds the NIF shim into bindings/elixir_nif/priv/ (with a copy of the library)
#   make test-elixir    builds it and runs the ExUnit suite against the fixture server
#   make elixir-bench   per-call overhead of LemonMCP.Client.call_tool/4, and JSON decoding vs binary_to_term

EX_DIR     := $(ROOT)/bindings/elixir_nif
EX_FIXTURE := $(BUILD)/fixtures/mcpfixture
EX_ENV     := LEMONMCP_LIB=$(BUILD)/$(SONAME) LEMONMCP_FIXTURE=$(EX_FIXTURE) LEMONMCP_TSV1_DIR=$(BUILD)/tsv1tasks MIX_ENV=test
ERTS_HEADER = $(shell erl -noshell -eval 'io:format("~ts/erts-~ts/include/erl_nif.h", [code:root_dir(), erlang:system_info(version)]), halt().' 2>/dev/null)

.PHONY: elixir-setup elixir-nif test-elixir elixir-bench
TEST_SUITES += test-elixir

elixir-setup:
	@if ! command -v mix >/dev/null 2>&1 || ! command -v erl >/dev/null 2>&1 || [ ! -f "$(ERTS_HEADER)" ]; then \
	  echo "installing elixir and erlang-dev"; \
	  $(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq elixir erlang-dev >/dev/null || exit 1; \
	fi

elixir-nif: lib elixir-setup
	cd $(EX_DIR) && $(EX_ENV) mix compile

# elixir-nif as a prerequisite: another suite that needs the NIF
# (test-tokenstores) then shares one build of it rather than racing this
# suite's mix over _build/test.
test-elixir: lib fixtures tsv1-fixture elixir-setup otel-setup elixir-nif
	cd $(EX_DIR) && $(EX_ENV) $(OTEL_ENV) mix test --color=false

elixir-bench: lib fixtures elixir-setup
	cd $(EX_DIR) && $(EX_ENV) mix run bench/bench.exs
