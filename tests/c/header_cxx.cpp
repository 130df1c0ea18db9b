// header_cxx.cpp — proves include/lemonmcp.h is C++-clean: it compiles with
// g++ -std=c++17 -Wall -Wextra -Werror, links, and a few calls behave.
#include "lemonmcp.h"

#include <cstdio>
#include <cstring>
#include <string>

static int failures = 0;
#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

namespace {
// Callbacks with C linkage-compatible signatures, as a C++ host writes them.
extern "C" void on_event(void *, const char *, const char *, size_t) {}
extern "C" void on_destroy(void *ud) {
  ++*static_cast<int *>(ud);
}
} // namespace

int main() {
  EXPECT(std::string(lmcp_version()) == LMCP_VERSION_STRING);
  EXPECT(lmcp_abi_version() == LMCP_ABI_VERSION);

  char *json = nullptr;
  size_t len = 0;
  EXPECT(lmcp_features(&json, &len) == LMCP_OK);
  EXPECT(json != nullptr && std::strlen(json) == len);
  EXPECT(json != nullptr && std::strstr(json, "\"stdio\"") != nullptr);
  lmcp_free(json);

  lmcp_client *client = nullptr;
  char *err = nullptr;
  const std::string bad = R"({"transport":{"type":"stdio","command":"x"},"nope":1})";
  lmcp_status st = lmcp_client_new(bad.data(), bad.size(), &client, &err);
  EXPECT(st == LMCP_E_INVALID_ARGUMENT);
  EXPECT(client == nullptr);
  EXPECT(err != nullptr && std::strstr(err, "nope") != nullptr);
  lmcp_free(err);

  int destroyed = 0;
  EXPECT(lmcp_client_set_event_handler(nullptr, on_event, &destroyed, on_destroy, nullptr) ==
         LMCP_E_INVALID_HANDLE);
  EXPECT(destroyed == 1);
  EXPECT(std::string(lmcp_status_string(LMCP_E_TIMEOUT)) == "timeout");
  lmcp_client_free(nullptr);

  std::printf("header_cxx: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
