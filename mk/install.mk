# Installing the library for C and C++ hosts.
#   make install PREFIX=…     library (with its SONAME link), lemonmcp.h, lemonmcp.hpp, lemonmcp.pc,
#                             the sandbox helper in libexec/
#   make uninstall PREFIX=…   removes exactly what install put there
#   make test-install         installs into a scratch prefix and into /usr/local and builds a host
#                             with `pkg-config --cflags --libs lemonmcp` alone, run without LD_LIBRARY_PATH,
#                             and builds the Elixir NIF against it (tests/install/check.sh)
#
# A host must run without LD_LIBRARY_PATH. Under a system prefix (/usr,
# /usr/local) the dynamic loader finds the library once ldconfig has indexed
# it, which install does when it writes to the live system (no DESTDIR, root).
# Anywhere else the loader would never look, so the .pc file's Libs carry an
# rpath to the prefix's lib directory.

SYSTEM_PREFIXES := /usr /usr/local
PC_RPATH = $(if $(filter $(patsubst %/,%,$(PREFIX)),$(SYSTEM_PREFIXES)),,-Wl,-rpath,$${libdir} )
PC_SED   = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@RPATH@|$(PC_RPATH)|g'

$(BUILD)/lemonmcp.pc: mk/lemonmcp.pc.in include/lemonmcp.h mk/install.mk
	$(PC_SED) $< > $@

.PHONY: install uninstall test-install
install: lib
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/libexec
	install -m 0755 $(BUILD)/$(SONAME) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	install -m 0755 $(HELPER) $(DESTDIR)$(PREFIX)/libexec/lemonmcp-sandbox
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/liblemonmcp.so
	install -m 0644 include/lemonmcp.h $(DESTDIR)$(PREFIX)/include/lemonmcp.h
	install -m 0644 include/lemonmcp.hpp $(DESTDIR)$(PREFIX)/include/lemonmcp.hpp
	$(PC_SED) mk/lemonmcp.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lemonmcp.pc
	@if [ -z "$(DESTDIR)" ] && [ -z "$(PC_RPATH)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	  ldconfig; echo "install: ldconfig indexed $(PREFIX)/lib"; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/$(SONAME) $(DESTDIR)$(PREFIX)/lib/liblemonmcp.so $(DESTDIR)$(PREFIX)/libexec/lemonmcp-sandbox \
	  $(DESTDIR)$(PREFIX)/include/lemonmcp.h $(DESTDIR)$(PREFIX)/include/lemonmcp.hpp \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/lemonmcp.pc
	@if [ -z "$(DESTDIR)" ] && [ -z "$(PC_RPATH)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

TEST_SUITES += test-install
test-install: lib fixtures elixir-setup
	@command -v pkg-config >/dev/null || { $(APT_GET) update -qq && $(APT_GET) install -y -qq pkg-config >/dev/null; }
	@MAKE="$(MAKE)" SONAME=$(SONAME) FIXTURE=$(BUILD)/fixtures/mcpfixture bash tests/install/check.sh
