# The shared library and its public header.
#
# The cgo-generated header is a build artefact written to build/gen/ and
# never shipped: include/lemonmcp.h is the contract. The two are compiled
# together in capi (bridge.h includes lemonmcp.h, and cgo's export header
# includes the preamble), so a signature drift fails the build; check-symbols
# also compares the exported symbols with the header's declarations.

# Every Go package of the runtime module (tests/ is its own module).
GO_SOURCES := $(shell find . \( -path ./tests -o -path ./bindings -o -path ./build -o -path ./.cache -o -path ./.git \) -prune \
                -o -name '*.go' -not -name '*_test.go' -print) $(wildcard capi/*.c capi/*.h sandbox/*.txt) go.mod go.sum mk/build-lib.sh

lib: $(LIB) $(HEADER) $(BUILD)/lemonmcp.pc $(HELPER)

# The sandbox helper the stdio transport runs in a server's place; the
# library finds it next to itself (or in ../libexec once installed).
$(HELPER): $(GO_SOURCES)
	@mkdir -p $(BUILD)
	$(GO) build -trimpath -ldflags "-s -w" -o $@ ./cmd/lemonmcp-sandbox

$(BUILD)/$(SONAME): $(GO_SOURCES) include/lemonmcp.h
	@mkdir -p $(BUILD)/gen
	GO=$(GO) sh mk/build-lib.sh $(ROOT) $(BUILD)/gen/liblemonmcp.so
	mv $(BUILD)/gen/liblemonmcp.so $@

$(LIB): $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

$(HEADER): include/lemonmcp.h
	@mkdir -p $(dir $@)
	cp $< $@

.PHONY: check-symbols
# Every lmcp_ function the library exports is declared in the header, and
# every function the header declares is exported.
check-symbols: lib
	@nm -D --defined-only $(BUILD)/$(SONAME) | awk '$$2=="T" && $$3 ~ /^lmcp_/ {print $$3}' | sort > $(BUILD)/gen/exported.txt
	@sed -n 's/^[a-z0-9_ ]*[ *]\(lmcp_[a-z_]*\)(.*/\1/p' include/lemonmcp.h | sort -u > $(BUILD)/gen/declared.txt
	@if ! diff -u $(BUILD)/gen/declared.txt $(BUILD)/gen/exported.txt; then \
		echo "check-symbols: the header and the exported symbols differ (- header, + library)"; exit 1; fi
	@echo "check-symbols: $$(wc -l < $(BUILD)/gen/exported.txt) functions, header and library agree"
