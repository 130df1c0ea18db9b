# Release artefacts for x86_64 and arm64 Linux, built on this machine for
# glibc 2.17 (docs/install.md says how each user installs them).
#   make dist        writes into dist/ (V = LMCP_VERSION_STRING of include/lemonmcp.h):
#                      lemonmcp-V-py3-none-manylinux_2_17_{x86_64,aarch64}.manylinux2014_*.whl
#                      lemonmcp-V.tar.gz                      the Python sdist (builds with Go)
#                      lemonmcp-V-linux-{x86_64,aarch64}.tar.gz  C and C++: lib, libexec,
#                                                             include, lib/pkgconfig, LICENSE
#                      lemon_mcp-nif-V-{x86_64,aarch64}-linux-gnu.tar.gz  the Elixir NIF with
#                                                             its library and sandbox helper
#                      lemon_mcp-nif-V.sha256                 their checksums
#                      lemon_mcp-V.tar.gz                     the Elixir package (Hex's file set,
#                                                             with the checksum file)
#                    then checks every binary's glibc floor and reports sizes (mk/dist.py)
#   make test-dist   installs them as users do, by docs/install.md (tests/dist/check.py)
#   make zig-setup   zig (the `ziglang` package from PyPI, $(ZIG_VERSION)) into .cache/zig
#   make qemu-setup  qemu-user, libc6-arm64-cross and binutils-aarch64-linux-gnu (its objdump)
#                    with apt-get (idempotent)
#
# The C toolchain is `zig cc -target <arch>-linux-gnu.2.17`: it links
# against glibc 2.17's symbol versions whatever the build machine has, and
# cross-compiles cgo. Every binary is built once into $(DIST_CACHE) and
# rebuilt only when its sources change; packaging is cheap.

DIST          := $(ROOT)/dist
DIST_CACHE    := $(CACHE)/dist
DIST_ARCHS    := x86_64 aarch64
GLIBC_FLOOR   := 2.17
ZIG_VERSION   := 0.17.1
ZIG_DIR       := $(CACHE)/zig
ZIG           := $(ZIG_DIR)/ziglang/zig
# Reproducible archives: every file dated by the header's last change
# (given to mk/dist.py only; other suites' builds keep their own dates).
DIST_EPOCH    := $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct -- include/lemonmcp.h 2>/dev/null),0)
DIST_PY       := SOURCE_DATE_EPOCH=$(DIST_EPOCH) $(PYTHON) $(ROOT)/mk/dist.py

goarch = $(if $(filter x86_64,$(1)),amd64,arm64)
WHEEL_TAG  = manylinux_$(subst .,_,$(GLIBC_FLOOR))_$(1).manylinux2014_$(1)
WHEEL      = $(DIST)/lemonmcp-$(VERSION)-py3-none-$(call WHEEL_TAG,$(1)).whl
C_ARCHIVE  = $(DIST)/lemonmcp-$(VERSION)-linux-$(1).tar.gz
NIF_ARCHIVE = $(DIST)/lemon_mcp-nif-$(VERSION)-$(1)-linux-gnu.tar.gz
NIF_SUMS   := $(DIST)/lemon_mcp-nif-$(VERSION).sha256
EX_PACKAGE := $(DIST)/lemon_mcp-$(VERSION).tar.gz
SDIST      := $(DIST)/lemonmcp-$(VERSION).tar.gz
DIST_FILES := $(foreach a,$(DIST_ARCHS),$(call WHEEL,$(a)) $(call C_ARCHIVE,$(a)) $(call NIF_ARCHIVE,$(a))) \
              $(NIF_SUMS) $(EX_PACKAGE) $(SDIST)

.PHONY: dist dist-files zig-setup qemu-setup test-dist
TEST_SUITES += test-dist

zig-setup:
	@[ -x $(ZIG) ] && [ "$$($(ZIG) version)" = $(ZIG_VERSION) ] || { \
	  echo "dist: installing zig $(ZIG_VERSION) (ziglang from PyPI) into $(ZIG_DIR)"; rm -rf $(ZIG_DIR); \
	  $(PYTHON) -m pip install --quiet --disable-pip-version-check --target $(ZIG_DIR) ziglang==$(ZIG_VERSION); }

qemu-setup:
	@command -v qemu-aarch64 >/dev/null && command -v aarch64-linux-gnu-objdump >/dev/null && [ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || { \
	  echo "dist: installing qemu-user, libc6-arm64-cross and binutils-aarch64-linux-gnu"; \
	  $(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq qemu-user libc6-arm64-cross binutils-aarch64-linux-gnu >/dev/null; }

# The compiler for each target: a two-line script, since cgo and make want
# one word for CC. It lives at one path for every clone on the machine, and
# finds zig through LEMONMCP_ZIG: Go keys its build cache by the CC path, so
# a fresh clone reuses the packages another clone compiled (what sits above
# net, which is cgo, would otherwise all be compiled again, per clone).
DIST_CC_DIR := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/lemonmcp/zigcc-$(ZIG_VERSION)
DIST_CC      = $(DIST_CC_DIR)/$(1)-linux-gnu.$(GLIBC_FLOOR)-cc
DIST_ZIGENV := LEMONMCP_ZIG=$(ZIG)
$(DIST_CC_DIR)/%-linux-gnu.$(GLIBC_FLOOR)-cc: | zig-setup
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\n# zig cc for %s (mk/dist.mk); LEMONMCP_ZIG is the zig to run\nexec "$${LEMONMCP_ZIG:?set by make dist}" cc -target %s "$$@"\n' \
	  $*-linux-gnu.$(GLIBC_FLOOR) $*-linux-gnu.$(GLIBC_FLOOR) > $@.tmp.$$$$ && chmod +x $@.tmp.$$$$ && mv $@.tmp.$$$$ $@

DIST_GOENV = $(DIST_ZIGENV) CGO_ENABLED=1 GOOS=linux GOARCH=$(call goarch,$*) CC=$(call DIST_CC,$*)

# The library, by the repository's one recipe (mk/build-lib.sh).
$(DIST_CACHE)/%/liblemonmcp.so.$(ABI_VERSION): $(GO_SOURCES) include/lemonmcp.h | $(call DIST_CC,%)
	@echo "dist: building liblemonmcp for $*-linux-gnu.$(GLIBC_FLOOR) with zig cc (a first build takes minutes)"
	$(DIST_GOENV) GO=$(GO) sh mk/build-lib.sh $(ROOT) $@.tmp && rm -f $@.h $@.tmp.h && mv $@.tmp $@

$(DIST_CACHE)/%/lemonmcp-sandbox: $(GO_SOURCES) | $(call DIST_CC,%)
	@echo "dist: building lemonmcp-sandbox for $*"
	$(DIST_GOENV) $(GO) build -trimpath -ldflags "-s -w" -o $@.tmp ./cmd/lemonmcp-sandbox && mv $@.tmp $@

# The NIF shim against that library and this machine's ERTS headers (the
# NIF API is the same on both architectures; the NIF loads on this OTP
# release and later ones, see docs/install.md).
EX_CSRC := $(wildcard $(ROOT)/bindings/elixir_nif/c_src/*.c $(ROOT)/bindings/elixir_nif/c_src/*.h $(ROOT)/bindings/elixir_nif/c_src/Makefile)
$(DIST_CACHE)/%/nif/lmcp_nif.so: $(EX_CSRC) $(DIST_CACHE)/%/liblemonmcp.so.$(ABI_VERSION) $(DIST_CACHE)/%/lemonmcp-sandbox | elixir-setup $(call DIST_CC,%)
	@echo "dist: building the Elixir NIF for $*"
	$(DIST_ZIGENV) CFLAGS=-O2 LDFLAGS=-s $(MAKE) --no-print-directory -s -C $(ROOT)/bindings/elixir_nif/c_src CC=$(call DIST_CC,$*) \
	  LEMONMCP_LIB=$(DIST_CACHE)/$*/liblemonmcp.so.$(ABI_VERSION) LEMONMCP_INCLUDE=$(ROOT)/include \
	  PRIV=$(DIST_CACHE)/$*/nif OBJ_DIR=$(DIST_CACHE)/$*/nif-obj MIX_APP_PATH=

dist_bins = $(DIST_CACHE)/$(1)/liblemonmcp.so.$(ABI_VERSION) $(DIST_CACHE)/$(1)/lemonmcp-sandbox $(DIST_CACHE)/$(1)/nif/lmcp_nif.so

# The tracked tree, copied: the wheels and the sdist are built from it, so
# they never share bindings/python/build with test-python-package.
DIST_TREE := $(DIST_CACHE)/tree
$(DIST_TREE)/.stamp: $(GO_SOURCES) $(shell git ls-files bindings/python 2>/dev/null | grep -v ' ')
	@rm -rf $(DIST_TREE) && mkdir -p $(DIST_TREE)
	git ls-files -z | xargs -0 cp --parents -t $(DIST_TREE) 2>/dev/null; touch $@

define dist_wheel
$(call WHEEL,$(1)): $(DIST_CACHE)/$(1)/liblemonmcp.so.$(ABI_VERSION) $(DIST_CACHE)/$(1)/lemonmcp-sandbox $(DIST_TREE)/.stamp | python-setup pytools
	@mkdir -p $(DIST)
	$(DIST_PY) wheel --tree $(DIST_TREE) --lib $$< --tag $(call WHEEL_TAG,$(1)) --out $$@
endef
$(foreach a,$(DIST_ARCHS),$(eval $(call dist_wheel,$(a))))

$(SDIST): $(DIST_TREE)/.stamp | python-setup
	@mkdir -p $(DIST)
	$(DIST_PY) sdist --tree $(DIST_TREE) --out $@

$(DIST)/lemonmcp-$(VERSION)-linux-%.tar.gz: $(DIST_CACHE)/%/liblemonmcp.so.$(ABI_VERSION) $(DIST_CACHE)/%/lemonmcp-sandbox \
    include/lemonmcp.h include/lemonmcp.hpp mk/lemonmcp.pc.in LICENSE
	@mkdir -p $(DIST)
	$(DIST_PY) c-archive --lib $< --helper $(DIST_CACHE)/$*/lemonmcp-sandbox --version $(VERSION) --out $@

$(DIST)/lemon_mcp-nif-$(VERSION)-%-linux-gnu.tar.gz: $(DIST_CACHE)/%/nif/lmcp_nif.so
	@mkdir -p $(DIST)
	$(DIST_PY) nif-archive --nif-dir $(DIST_CACHE)/$*/nif --abi $(ABI_VERSION) --out $@

$(NIF_SUMS): $(foreach a,$(DIST_ARCHS),$(call NIF_ARCHIVE,$(a)))
	$(DIST_PY) checksums --out $@ $^

$(EX_PACKAGE): $(NIF_SUMS) $(shell git ls-files bindings/elixir_nif 2>/dev/null | grep -v ' ') include/lemonmcp.h
	$(DIST_PY) elixir-package --src $(ROOT)/bindings/elixir_nif --header include/lemonmcp.h --sums $(NIF_SUMS) \
	  --version $(VERSION) --out $@

dist-files: $(DIST_FILES) | pytools qemu-setup
	@$(DIST_PY) check --dist $(DIST) --version $(VERSION) --floor $(GLIBC_FLOOR) --pytools $(PYTOOLS)

# The size report reads the symbols of an unstripped link of the same
# library (the shipped one is stripped); only make dist pays for it.
$(DIST_CACHE)/x86_64/symbols/liblemonmcp.so: $(DIST_CACHE)/x86_64/liblemonmcp.so.$(ABI_VERSION)
	@mkdir -p $(dir $@)
	cd $(ROOT) && $(DIST_ZIGENV) CGO_ENABLED=1 GOOS=linux GOARCH=amd64 CC=$(call DIST_CC,x86_64) $(GO) build -buildmode=c-shared -trimpath \
	  -o $@.tmp ./capi && rm -f $@.tmp.h && mv $@.tmp $@

dist: dist-files $(DIST_CACHE)/x86_64/symbols/liblemonmcp.so
	@$(DIST_PY) sizes --dist $(DIST) --version $(VERSION) $(foreach a,$(DIST_ARCHS),--lib $(DIST_CACHE)/$(a)/liblemonmcp.so.$(ABI_VERSION)) \
	  --symbols $(DIST_CACHE)/x86_64/symbols/liblemonmcp.so --go $(GO)

# The arm64 fixture server and C host the qemu test runs (test-only builds).
DIST_ARM := $(DIST_CACHE)/arm64-test
$(DIST_ARM)/mcpfixture: $(shell find tests/fixtures/mcpfixture -name '*.go') tests/go.mod
	@mkdir -p $(dir $@)
	cd tests && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -o $@ ./fixtures/mcpfixture

# The C suite (tests/c, mk/ctest.mk) for arm64, linked against the arm64
# library of the release; tests/dist/check.py runs a part of it under qemu.
$(DIST_ARM)/lmcp_ctest: $(CTEST_SUITE_DEPS) $(DIST_CACHE)/aarch64/liblemonmcp.so.$(ABI_VERSION) | $(call DIST_CC,aarch64)
	@mkdir -p $(dir $@)
	$(DIST_ZIGENV) $(call DIST_CC,aarch64) -std=c99 -Wall -Wextra -Werror -pthread -I$(ROOT)/include -o $@ \
	  $(CTEST_SUITE_SRC) $(CTEST_SRC)/harness.c $(DIST_CACHE)/aarch64/liblemonmcp.so.$(ABI_VERSION) -Wl,-rpath,'$$ORIGIN/../aarch64'

test-dist: dist-files fixtures qemu-setup elixir-setup pytools $(DIST_ARM)/mcpfixture $(DIST_ARM)/lmcp_ctest
	@DIST=$(DIST) VERSION=$(VERSION) FIXTURE=$(BUILD)/fixtures/mcpfixture ARM=$(DIST_ARM) FLOOR=$(GLIBC_FLOOR) \
	  PYTOOLS=$(PYTOOLS) $(PYTHON) tests/dist/check.py

# Built through pattern rules, so intermediate to make: kept all the same.
.PRECIOUS: $(DIST_CC_DIR)/%-linux-gnu.$(GLIBC_FLOOR)-cc $(DIST_CACHE)/%/liblemonmcp.so.$(ABI_VERSION) $(DIST_CACHE)/%/lemonmcp-sandbox \
  $(DIST_CACHE)/%/nif/lmcp_nif.so
