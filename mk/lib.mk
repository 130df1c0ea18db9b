# The shared library and its public header.
#
# The cgo-generated header is a build artefact written to build/gen/ and
# never shipped: include/lemonmcp.h is the contract. The two are compiled
# together in capi (bridge.h includes lemonmcp.h, and cgo's export header
# includes the preamble), so a signature drift fails the build; check-symbols
# also compares the exported symbols with the header's declarations.

GO_SOURCES := $(shell find core config transport internal capi -name '*.go' -not -name '*_test.go') $(wildcard capi/*.c capi/*.h) go.mod go.sum

lib: $(LIB) $(HEADER) $(BUILD)/lemonmcp.pc

$(BUILD)/$(SONAME): $(GO_SOURCES) include/lemonmcp.h
	@mkdir -p $(BUILD)/gen
	$(GO) build -buildmode=c-shared -trimpath \
		-ldflags "-s -w -extldflags '-Wl,-soname,$(SONAME) -Wl,-z,nodelete'" \
		-o $(BUILD)/gen/liblemonmcp.so ./capi
	mv $(BUILD)/gen/liblemonmcp.so $@

$(LIB): $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(HEADER): include/lemonmcp.h
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/lemonmcp.pc: mk/lemonmcp.pc.in include/lemonmcp.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

.PHONY: check-symbols
# Every lmcp_ function the library exports is declared in the header, and
# every function the header declares is exported.
check-symbols: lib
	@nm -D --defined-only $(BUILD)/$(SONAME) | awk '$$2=="T" && $$3 ~ /^lmcp_/ {print $$3}' | sort > $(BUILD)/gen/exported.txt
	@sed -n 's/^[a-z0-9_ ]*[ *]\(lmcp_[a-z_]*\)(.*/\1/p' include/lemonmcp.h | sort -u > $(BUILD)/gen/declared.txt
	@if ! diff -u $(BUILD)/gen/declared.txt $(BUILD)/gen/exported.txt; then \
		echo "check-symbols: the header and the exported symbols differ (- header, + library)"; exit 1; fi
	@echo "check-symbols: $$(wc -l < $(BUILD)/gen/exported.txt) functions, header and library agree"

install: lib
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(BUILD)/$(SONAME) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/liblemonmcp.so
	install -m 0644 include/lemonmcp.h $(DESTDIR)$(PREFIX)/include/lemonmcp.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' mk/lemonmcp.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lemonmcp.pc

.PHONY: test-install
TEST_SUITES += test-install
# Installs into a scratch prefix and builds a host with pkg-config alone.
test-install: lib
	@command -v pkg-config >/dev/null || { apt-get update -qq && apt-get install -y -qq pkg-config >/dev/null; }
	@set -e; prefix=$$(mktemp -d); trap 'rm -rf $$prefix' EXIT; \
	$(MAKE) --no-print-directory install PREFIX=$$prefix >/dev/null; \
	flags=$$(PKG_CONFIG_PATH=$$prefix/lib/pkgconfig pkg-config --cflags --libs lemonmcp); \
	printf '#include <lemonmcp.h>\n#include <stdio.h>\nint main(void){char *j=0; if (lmcp_features(&j,0)!=LMCP_OK) return 1; puts(j); lmcp_free(j); return lmcp_abi_version()==LMCP_ABI_VERSION?0:1;}\n' > $$prefix/host.c; \
	cc -std=c99 -Wall -Wextra -Werror $$prefix/host.c $$flags -Wl,-rpath,$$prefix/lib -o $$prefix/host; \
	$$prefix/host >/dev/null; \
	test "$$(readelf -d $$prefix/lib/$(SONAME) | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" = "$(SONAME)"; \
	echo "install: 1 passed, 0 failed"
