# The header-only C++17 wrapper (include/lemonmcp.hpp).
#   make test-cxx   builds tests/cpp/wrapper_test.cpp with -Wall -Wextra -Werror
#                   and runs it against the fixture server

CXXTEST_OUT   := $(BUILD)/cxxtest
CXXTEST_FLAGS := -std=c++17 -Wall -Wextra -Wpedantic -Werror -pthread -g -I$(ROOT)/include

.PHONY: test-cxx
TEST_SUITES += test-cxx

$(CXXTEST_OUT)/wrapper_test: tests/cpp/wrapper_test.cpp include/lemonmcp.hpp include/lemonmcp.h $(LIB)
	@mkdir -p $(dir $@)
	$(CTEST_CXX) $(CXXTEST_FLAGS) $< -L$(BUILD) -Wl,-rpath,$(BUILD) -llemonmcp -o $@

test-cxx: lib fixtures $(CXXTEST_OUT)/wrapper_test
	$(CXXTEST_OUT)/wrapper_test $(BUILD)/fixtures/mcpfixture
