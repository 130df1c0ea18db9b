# Linters and formatters, one check per language.
#   make lint         gofmt and go vet (both Go modules), clang-format (.clang-format) on the C and C++
#                     sources, `mix format --check-formatted` on the Elixir project, ruff (ruff.toml) on
#                     the Python; ends with "lint: N passed, N failed"
#   make format       rewrites what lint would refuse: gofmt -w, clang-format -i, mix format, ruff --fix
#   make lint-setup   installs the pinned ruff and clang-format from PyPI into .cache/lint/ (idempotent)
# mypy --strict runs in test-python. clang-format comes from PyPI, pinned, rather than from apt: the
# distribution's version formats differently from one release to the next. include/ is not formatted:
# the public headers are documentation, laid out by hand for reading.

LINT_PY       := $(CACHE)/lint/py
RUFF_VERSION  := 0.17.6
CLANG_FORMAT_VERSION := 21.1.8
RUFF          := $(LINT_PY)/bin/ruff
CLANG_FORMAT  := $(LINT_PY)/clang_format/data/bin/clang-format
LINT_GO_FILES  = $(shell find $(ROOT) -name '*.go' -not -path '$(CACHE)/*' -not -path '$(BUILD)/*' -not -path '*/_build/*')
LINT_C_FILES   = $(shell find $(ROOT)/capi $(ROOT)/bindings/elixir_nif/c_src $(ROOT)/tests/c $(ROOT)/tests/cpp \
                   -name '*.[ch]' -o -name '*.cpp' -o -name '*.hpp')
LINT_CHECKS   := lint-gofmt lint-govet lint-clang-format lint-mix-format lint-ruff

.PHONY: lint format lint-setup $(LINT_CHECKS)
TEST_SUITES += lint

lint-setup:
	@if [ "$$($(RUFF) --version 2>/dev/null)" != "ruff $(RUFF_VERSION)" ] || \
	    ! $(CLANG_FORMAT) --version 2>/dev/null | grep -q "version $(CLANG_FORMAT_VERSION)"; then \
	  echo "installing ruff $(RUFF_VERSION) and clang-format $(CLANG_FORMAT_VERSION) into .cache/lint/"; \
	  rm -rf $(LINT_PY) && $(PYTHON) -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
	    --target $(LINT_PY) ruff==$(RUFF_VERSION) clang-format==$(CLANG_FORMAT_VERSION) || exit 1; \
	fi

# Every check runs even when an earlier one fails, so one run shows every finding.
lint: lint-setup elixir-setup
	@p=0; f=0; for c in $(LINT_CHECKS); do \
	  if $(MAKE) --no-print-directory $$c; then p=$$((p+1)); else echo "$$c FAILED"; f=$$((f+1)); fi; \
	done; echo "lint: $$p passed, $$f failed"; [ $$f -eq 0 ]

lint-gofmt:
	@out=$$(gofmt -l $(LINT_GO_FILES)); if [ -n "$$out" ]; then echo "gofmt: not formatted (make format):"; echo "$$out"; exit 1; fi

lint-govet:
	$(GO) vet ./...
	cd tests && $(GO) vet ./...

lint-clang-format:
	@echo "clang-format --dry-run (the C and C++ sources)" && $(CLANG_FORMAT) --style=file --dry-run -Werror $(LINT_C_FILES)

lint-mix-format:
	cd $(EX_DIR) && mix format --check-formatted

lint-ruff:
	$(RUFF) check --cache-dir $(CACHE)/ruff $(ROOT)

# Quiet about the file lists (hundreds of paths); the tools name what they change or refuse.
format: lint-setup elixir-setup
	@echo "gofmt -w (the Go files)" && gofmt -w $(LINT_GO_FILES)
	@echo "clang-format -i (the C and C++ sources)" && $(CLANG_FORMAT) --style=file -i $(LINT_C_FILES)
	cd $(EX_DIR) && mix format
	$(RUFF) check --cache-dir $(CACHE)/ruff --fix $(ROOT)
