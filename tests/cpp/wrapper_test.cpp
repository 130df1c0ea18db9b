// wrapper_test.cpp — include/lemonmcp.hpp end to end against the fixture
// server: RAII, exceptions carrying the error JSON, std::function callbacks,
// the blocking and the future-returning call, cancel, app requests, close.
//
// Usage: wrapper_test <path to mcpfixture>. Prints one line per test and a
// closing "N passed, N failed" line; exits non-zero on any failure. Each test
// has a watchdog: a hang fails the suite instead of blocking it.

#include <lemonmcp.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *g_fixture = nullptr;
int g_failed_checks = 0;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failed_checks;                                                              \
    }                                                                                 \
  } while (0)

bool contains(const std::string &hay, const char *needle) {
  return hay.find(needle) != std::string::npos;
}

std::string stdio_config(const char *extra = "") {
  std::string cfg = "{\"transport\":{\"type\":\"stdio\",\"command\":\"";
  cfg += g_fixture;
  cfg += "\"}";
  cfg += extra;
  cfg += "}";
  return cfg;
}

lemonmcp::Client ready_client(const char *extra = "") {
  lemonmcp::Client c(stdio_config(extra));
  c.connect();
  c.wait_ready(20000);
  return c;
}

// Collects events; waits for a kind to arrive.
struct EventLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> kinds;

  void add(std::string_view kind) {
    std::lock_guard<std::mutex> lk(mu);
    kinds.emplace_back(kind);
    cv.notify_all();
  }
  int count(const char *kind) {
    std::lock_guard<std::mutex> lk(mu);
    int n = 0;
    for (auto &k : kinds) n += k == kind;
    return n;
  }
  bool wait_for(const char *kind, int ms) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_for(lk, std::chrono::milliseconds(ms), [&] {
      for (auto &k : kinds)
        if (k == kind) return true;
      return false;
    });
  }
};

void test_features_and_version() {
  std::string f = lemonmcp::features();
  CHECK(contains(f, "\"transports\""));
  CHECK(lemonmcp::version() == LMCP_VERSION_STRING);
}

void test_invalid_config_throws_with_json() {
  try {
    lemonmcp::Client c("{\"transport\":{\"type\":\"stdio\",\"comand\":\"x\"}}");
    CHECK(!"constructor should have thrown");
  } catch (const lemonmcp::Error &e) {
    CHECK(e.status() == LMCP_E_INVALID_ARGUMENT);
    CHECK(contains(e.what(), "comand"));
    CHECK(contains(e.json(), "\"status\":-1"));
    CHECK(std::strcmp(e.status_name(), lmcp_status_string(LMCP_E_INVALID_ARGUMENT)) == 0);
  }
}

void test_blocking_call_and_server_info() {
  lemonmcp::Client c = ready_client();
  CHECK(c.state() == LMCP_STATE_READY);
  CHECK(contains(c.server_info(), "\"serverInfo\""));
  std::string r = c.call("tools/call", R"({"name":"echo","arguments":{"text":"héllo \"wrapper\""}})");
  CHECK(contains(r, "h\xc3\xa9llo"));
  // A tool error is a successful call whose result says isError.
  std::string failed = c.call("tools/call", R"({"name":"fail","arguments":{"message":"nope"}})");
  CHECK(contains(failed, "\"isError\":true"));
  c.close(5000);
  CHECK(c.state() == LMCP_STATE_CLOSED);
}

void test_server_error_is_an_exception() {
  lemonmcp::Client c = ready_client();
  try {
    c.call("tools/call", R"({"name":"no_such_tool"})");
    CHECK(!"call should have thrown");
  } catch (const lemonmcp::Error &e) {
    CHECK(e.status() == LMCP_E_PROTOCOL);
    CHECK(std::strlen(e.what()) > 0);
    CHECK(contains(e.json(), "\"code\""));
  }
  // A bad option is refused before anything is sent.
  try {
    c.call("tools/list", {}, R"({"timeout_ms":"soon"})");
    CHECK(!"call should have thrown");
  } catch (const lemonmcp::Error &e) {
    CHECK(e.status() == LMCP_E_INVALID_ARGUMENT);
    CHECK(contains(e.what(), "timeout_ms"));
  }
}

void test_future_call() {
  lemonmcp::Client c = ready_client();
  std::vector<std::future<std::string>> futures;
  for (int i = 0; i < 16; ++i) {
    futures.push_back(c.call_async("tools/call", R"({"name":"add","arguments":{"a":)" + std::to_string(i) +
                                                     R"(,"b":1000}})"));
  }
  for (int i = 0; i < 16; ++i) {
    std::string r = futures[i].get();
    CHECK(contains(r, std::to_string(1000 + i).c_str()));
  }
  auto bad = c.call_async("no/such/method");
  try {
    bad.get();
    CHECK(!"future should hold an exception");
  } catch (const lemonmcp::Error &e) {
    CHECK(e.status() == LMCP_E_PROTOCOL);
  }
}

void test_callback_call_and_cancel() {
  lemonmcp::Client c = ready_client();
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  lmcp_status got = LMCP_OK;
  lmcp_call_id id = c.call_async("tools/call", R"({"name":"slow","arguments":{"ms":60000,"steps":600}})", {},
                                 [&](lmcp_status st, std::string_view) {
                                   std::lock_guard<std::mutex> lk(mu);
                                   ++calls;
                                   got = st;
                                   cv.notify_all();
                                 });
  CHECK(id != 0);
  CHECK(c.cancel(id));
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait_for(lk, std::chrono::seconds(10), [&] { return calls > 0; });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::lock_guard<std::mutex> lk(mu);
  CHECK(calls == 1);
  CHECK(got == LMCP_E_CANCELLED);
  CHECK(!c.cancel(id)); // already completed
}

void test_events_progress_and_closed() {
  lemonmcp::Client c(stdio_config());
  EventLog log;
  c.on_event([&](std::string_view kind, std::string_view) { log.add(kind); });
  c.connect();
  c.wait_ready(20000);
  CHECK(log.wait_for("ready", 5000));
  c.call("tools/call", R"({"name":"slow","arguments":{"ms":30,"steps":3}})", R"({"progress":true})");
  CHECK(log.wait_for("progress", 5000));
  c.close(5000);
  CHECK(log.wait_for("closed", 5000));
  // A handler that throws is contained at the boundary.
  lemonmcp::Client d(stdio_config());
  std::atomic<int> seen{0};
  d.on_event([&](std::string_view, std::string_view) {
    ++seen;
    throw std::runtime_error("host bug");
  });
  d.connect();
  d.wait_ready(20000);
  CHECK(contains(d.call("tools/call", R"({"name":"echo","arguments":{"text":"still fine"}})"), "still fine"));
  CHECK(seen.load() > 0);
}

// on_telemetry: a call's record arrives through the std::function, with
// the trace context the call carried.
void test_telemetry_handler() {
  lemonmcp::Client c(stdio_config());
  std::mutex mu;
  std::condition_variable cv;
  std::string record;
  c.on_telemetry([&](std::string_view kind, std::string_view json) {
    std::lock_guard<std::mutex> lk(mu);
    if (kind == "call" && record.empty()) record.assign(json);
    cv.notify_all();
  });
  c.connect();
  c.wait_ready(20000);
  c.call("tools/call", R"({"name":"echo","arguments":{"text":"t"}})",
         R"({"trace":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})");
  std::unique_lock<std::mutex> lk(mu);
  CHECK(cv.wait_for(lk, std::chrono::seconds(10), [&] { return !record.empty(); }));
  CHECK(contains(record, R"("target":"echo")"));
  CHECK(contains(record, R"("traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")"));
  lk.unlock();
  c.on_telemetry(nullptr);
}

void test_app_requests() {
  lemonmcp::Client c(stdio_config(R"(,"handlers":{"roots":{}})"));
  std::atomic<int> asked{0};
  c.on_app_request([&](lemonmcp::Client &self, const lemonmcp::AppRequest &req) {
    ++asked;
    CHECK(req.kind == "roots");
    CHECK(contains(req.json, "roots/list"));
    self.respond(req.id, LMCP_OK, R"({"roots":[{"uri":"file:///from-cpp","name":"cpp"}]})");
  });
  c.connect();
  c.wait_ready(20000);
  std::string r = c.call("tools/call", R"({"name":"roots"})");
  CHECK(asked.load() == 1);
  CHECK(contains(r, "file:///from-cpp"));

  // A handler that throws still answers: the server gets an error, the call
  // completes instead of waiting for app_request_ms. A server request over
  // a session is legacy-era behaviour, so the era is pinned.
  lemonmcp::Client d(stdio_config(R"(,"protocol":{"mode":"legacy"},"handlers":{"roots":{}})"));
  d.on_app_request([&](lemonmcp::Client &, const lemonmcp::AppRequest &) { throw std::runtime_error("no"); });
  d.connect();
  d.wait_ready(20000);
  try {
    std::string out = d.call("tools/call", R"({"name":"roots"})", R"({"timeout_ms":10000})");
    CHECK(contains(out, "\"isError\":true"));
  } catch (const lemonmcp::Error &e) {
    CHECK(e.status() == LMCP_E_PROTOCOL);
  }
}

void test_move_semantics() {
  lemonmcp::Client a = ready_client();
  lmcp_client *raw = a.get();
  lemonmcp::Client b = std::move(a);
  CHECK(a.get() == nullptr); // NOLINT(bugprone-use-after-move): testing the moved-from state
  CHECK(b.get() == raw);
  CHECK(contains(b.call("tools/call", R"({"name":"echo","arguments":{"text":"moved"}})"), "moved"));
  try {
    a.state();
    CHECK(!"a moved-from client has no handle");
  } catch (const lemonmcp::Error &e) {
    CHECK(e.status() == LMCP_E_INVALID_HANDLE);
  }
  lemonmcp::Client c = ready_client();
  c = std::move(b); // frees c's own client first
  CHECK(c.get() == raw);
}

void write_file(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  CHECK(f != nullptr);
  if (f == nullptr) return;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  CHECK(std::rename(tmp.c_str(), path.c_str()) == 0);
}

std::string read_text(const std::string &path) {
  std::string out;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// The value of the first "key":"..." after from in json.
std::string string_after(const std::string &json, const std::string &from, const std::string &key) {
  size_t at = json.find(from);
  if (at == std::string::npos) return "";
  at = json.find("\"" + key + "\":\"", at);
  if (at == std::string::npos) return "";
  at += key.size() + 4;
  return json.substr(at, json.find('"', at) - at);
}

// Host and its pinned definitions: the rugpull fixture (beside mcpfixture)
// flips a tool's destructiveHint; the tool is held until the hash shown is
// approved, and a stale hash is refused. (No fork after loading the
// library: the test writes the definitions itself.)
void test_host_pins() {
  std::string fixture(g_fixture);
  std::string rugpull = fixture.substr(0, fixture.rfind('/')) + "/rugpull";
  char dir_template[] = "/tmp/lmcp-cxx-pins-XXXXXX";
  CHECK(mkdtemp(dir_template) != nullptr);
  std::string dir(dir_template), defs = dir + "/defs.json", pidfile = dir + "/pid", pins = dir + "/pins.json";
  auto tools = [](const char *hint) {
    return std::string(
               R"({"tools":[{"name":"echo","description":"Echoes.","annotations":{"destructiveHint":)") +
           hint + "}}]}";
  };
  write_file(defs, tools("true"));
  {
    lemonmcp::Host host("{\"pins\":{\"store\":{\"type\":\"file\",\"path\":\"" + pins +
                        "\"}},\"mcpServers\":{\"r\":{\"command\":\"" + rugpull + "\",\"args\":[\"-defs\",\"" +
                        defs + "\"],\"env\":{\"RUGPULL_PIDFILE\":\"" + pidfile +
                        "\"},\"timeouts\":{\"close_grace_ms\":300}}}}");
    host.connect();
    host.wait_ready(20000);
    CHECK(!contains(host.pins(), "\"held\":true"));
    CHECK(contains(host.call_tool("r__echo"), "called echo"));

    write_file(defs, tools("false"));
    CHECK(kill(static_cast<pid_t>(std::atol(read_text(pidfile).c_str())), SIGUSR1) == 0);
    std::string report;
    for (int i = 0; i < 500 && !contains(report, "\"status\":\"changed\""); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      report = host.pins();
    }
    CHECK(contains(report, "\"status\":\"changed\""));
    try {
      host.call_tool("r__echo");
      CHECK(!"a held tool is refused");
    } catch (const lemonmcp::Error &e) {
      CHECK(e.status() == LMCP_E_POLICY_DENIED);
      CHECK(contains(e.what(), "is held"));
    }
    CHECK(!contains(host.list_tools(), "r__echo"));
    std::string hash = string_after(report, "\"echo\":{", "hash");
    std::string pinned = string_after(report, "\"echo\":{", "pinned_hash");
    CHECK(hash.rfind("sha256:", 0) == 0 && pinned.rfind("sha256:", 0) == 0 && hash != pinned);
    try {
      host.approve("r", "echo", pinned);
      CHECK(!"a stale hash is refused");
    } catch (const lemonmcp::Error &e) {
      CHECK(e.status() == LMCP_E_INVALID_STATE);
    }
    host.approve("r", "echo", hash);
    CHECK(contains(host.call_tool("r__echo"), "called echo"));
    host.close(5000);
  }
  for (const std::string &f : {defs, pidfile, pins, pins + ".lock"}) std::remove(f.c_str());
  rmdir(dir.c_str());
}

struct Test {
  const char *name;
  void (*fn)();
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MCPFIXTURE\n", argv[0]);
    return 2;
  }
  g_fixture = argv[1];
  const Test tests[] = {
      {"features_and_version", test_features_and_version},
      {"invalid_config_throws_with_json", test_invalid_config_throws_with_json},
      {"blocking_call_and_server_info", test_blocking_call_and_server_info},
      {"server_error_is_an_exception", test_server_error_is_an_exception},
      {"future_call", test_future_call},
      {"callback_call_and_cancel", test_callback_call_and_cancel},
      {"events_progress_and_closed", test_events_progress_and_closed},
      {"app_requests", test_app_requests},
      {"telemetry_handler", test_telemetry_handler},
      {"move_semantics", test_move_semantics},
      {"host_pins", test_host_pins},
  };
  int passed = 0, failed = 0;
  for (const Test &t : tests) {
    g_failed_checks = 0;
    std::atomic<bool> done{false};
    std::thread watchdog([&] {
      for (int i = 0; i < 600 && !done.load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!done.load()) {
        std::fprintf(stderr, "  %s: still running after 60 s\n", t.name);
        std::printf("%d passed, %d failed\n", passed, failed + 1);
        std::fflush(stdout);
        std::_Exit(1);
      }
    });
    try {
      t.fn();
    } catch (const lemonmcp::Error &e) {
      std::fprintf(stderr, "  unexpected lemonmcp::Error %s: %s\n", e.status_name(), e.json().c_str());
      ++g_failed_checks;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "  unexpected exception: %s\n", e.what());
      ++g_failed_checks;
    }
    done = true;
    watchdog.join();
    if (g_failed_checks == 0) {
      ++passed;
      std::printf("ok   %s\n", t.name);
    } else {
      ++failed;
      std::printf("FAIL %s\n", t.name);
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
