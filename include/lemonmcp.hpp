/*
 * lemonmcp.hpp — a header-only C++17 wrapper over lemonmcp.h.
 *
 * It adds no behaviour of its own: every method is one C call, and
 * lemonmcp.h stays the contract (threads, ownership, status codes). What the
 * wrapper gives a C++ host:
 *
 *  - RAII: lemonmcp::Client owns an lmcp_client and frees it in its
 *    destructor (lmcp_client_free never waits for the server; it waits out
 *    the client's running callbacks). Clients move, never copy.
 *  - Exceptions: a failed call throws lemonmcp::Error, which carries the
 *    status and the library's error JSON ({"status","message","code"?,
 *    "data"?}); what() is the message. A tool whose result has isError is
 *    not an exception: the call succeeded and the result says so.
 *  - std::function callbacks for events, app requests and completions. They
 *    run on library threads (see THREADS in lemonmcp.h). An exception that
 *    escapes a callback is caught at the boundary: an event is dropped, a
 *    app request is answered with LMCP_E_INTERNAL, a completion callback's
 *    exception is dropped. Nothing unwinds into the library.
 *  - call() blocks; call_async() returns a std::future, or takes a callback.
 *
 * Link as for lemonmcp.h: `pkg-config --cflags --libs lemonmcp`.
 */
#ifndef LEMONMCP_HPP
#define LEMONMCP_HPP

#include <lemonmcp.h>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace lemonmcp {

namespace detail {

// Owns one library-allocated buffer.
struct LibFree {
  void operator()(void *p) const noexcept { lmcp_free(p); }
};
using LibString = std::unique_ptr<char, LibFree>;

inline void append_utf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes the JSON string starting at s[i] == '"'; returns false when it is
// not a well-formed string.
inline bool decode_json_string(std::string_view s, size_t &i, std::string &out) {
  if (i >= s.size() || s[i] != '"') return false;
  for (++i; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      ++i;
      return true;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= s.size()) return false;
    switch (s[i]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        auto read4 = [&](size_t at, uint32_t &v) {
          if (at + 4 > s.size()) return false;
          v = 0;
          for (size_t k = 0; k < 4; ++k) {
            int h = hex_value(s[at + k]);
            if (h < 0) return false;
            v = v * 16 + static_cast<uint32_t>(h);
          }
          return true;
        };
        uint32_t cp;
        if (!read4(i + 1, cp)) return false;
        i += 4;
        uint32_t lo;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 2 < s.size() && s[i + 1] == '\\' &&
            s[i + 2] == 'u' && read4(i + 3, lo) && lo >= 0xDC00 && lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          i += 6;
        } else if (cp >= 0xD800 && cp < 0xE000) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default: return false;
    }
  }
  return false;
}

// The "message" member of the library's error object. The library writes
// that object itself (compact JSON, "message" a top-level string), so a
// scan of the top level is enough; anything unexpected gives "".
inline std::string error_message(std::string_view json) {
  int depth = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      std::string key;
      if (!decode_json_string(json, i, key)) return "";
      size_t j = i;
      while (j < json.size() && (json[j] == ' ' || json[j] == '\t' || json[j] == '\n' || json[j] == '\r')) ++j;
      bool is_key = j < json.size() && json[j] == ':';
      if (is_key && depth == 1 && key == "message") {
        ++j;
        while (j < json.size() && (json[j] == ' ' || json[j] == '\t' || json[j] == '\n' || json[j] == '\r')) ++j;
        std::string msg;
        return decode_json_string(json, j, msg) ? msg : "";
      }
      i -= 1;  // the loop's ++i lands on the character after the string
    }
  }
  return "";
}

}  // namespace detail

// Error is thrown for every status other than LMCP_OK.
class Error : public std::runtime_error {
 public:
  // json is the library's error object (may be empty when the library gave
  // none, e.g. a status without err_out).
  Error(lmcp_status status, std::string json)
      : std::runtime_error(make_what(status, json)), status_(status), json_(std::move(json)) {}

  lmcp_status status() const noexcept { return status_; }
  // The library's error JSON: {"status","message","code"?,"data"?}.
  const std::string &json() const noexcept { return json_; }
  // The status's name as lmcp_status_string gives it ("timeout", ...).
  const char *status_name() const noexcept { return lmcp_status_string(status_); }

 private:
  static std::string make_what(lmcp_status status, const std::string &json) {
    std::string msg = detail::error_message(json);
    return msg.empty() ? std::string(lmcp_status_string(status)) : msg;
  }
  lmcp_status status_;
  std::string json_;
};

namespace detail {

// Throws Error for a failed status, taking ownership of err (may be NULL).
inline void check(lmcp_status st, char *err) {
  LibString owned(err);
  if (st == LMCP_OK) return;
  throw Error(st, owned ? std::string(owned.get()) : std::string());
}

// Runs one C call that reports through err_out and throws Error when it
// fails. The call runs before err is read: a plain check(f(&err), err)
// would leave the order of the two arguments' evaluation to the compiler.
template <typename CallWithErr>
inline void call_checked(CallWithErr &&c_call) {
  char *err = nullptr;
  lmcp_status st = c_call(&err);
  check(st, err);
}

inline const char *data_or_null(std::string_view s) { return s.empty() ? nullptr : s.data(); }

}  // namespace detail

// The library's version text, e.g. "0.1.0".
inline std::string version() { return lmcp_version(); }

// lmcp_features as JSON.
inline std::string features() {
  char *json = nullptr;
  size_t len = 0;
  detail::check(lmcp_features(&json, &len), nullptr);
  detail::LibString owned(json);
  return std::string(json, len);
}

class Client;

// A app request from the server, answered with Client::respond (now or
// later, from any thread). kind and json are copied: they stay valid as long
// as the object lives.
struct AppRequest {
  lmcp_request_id id;
  std::string kind;
  std::string json;
};

class Client {
 public:
  using EventHandler = std::function<void(std::string_view kind, std::string_view json)>;
  using AppRequestHandler = std::function<void(Client &client, const AppRequest &request)>;
  // status is LMCP_OK with the result JSON, or an error status with the
  // library's error JSON.
  using DoneHandler = std::function<void(lmcp_status status, std::string_view json)>;
  // Receives telemetry records: kind is the record's kind ("call",
  // "restart", "failure"), json the record (see lmcp_telemetry_cb).
  using TelemetryHandler = std::function<void(std::string_view kind, std::string_view json)>;

  // Creates a client from its configuration JSON (see docs/ for the fields).
  // Throws Error (LMCP_E_INVALID_ARGUMENT naming the bad field, ...).
  explicit Client(std::string_view config_json) {
    lmcp_client *c = nullptr;
    detail::call_checked(
        [&](char **err) { return lmcp_client_new(config_json.data(), config_json.size(), &c, err); });
    handle_ = c;
  }

  // Frees the client: pending calls complete with LMCP_E_CANCELLED before
  // it returns, the server is torn down in the background. Never waits for
  // the server; it does wait for this client's callbacks running on other
  // threads (see lmcp_client_free).
  ~Client() { lmcp_client_free(handle_); }

  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;
  Client(Client &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Client &operator=(Client &&other) noexcept {
    if (this != &other) {
      lmcp_client_free(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  // The C handle, for functions this wrapper does not cover. Still owned by
  // this object.
  lmcp_client *get() const noexcept { return handle_; }

  // Sets (or, with an empty function, removes) the event handler. It runs on
  // a library thread; events of one client arrive one at a time, in order.
  void on_event(EventHandler handler) {
    if (!handler) {
      detail::call_checked(
          [&](char **err) { return lmcp_client_set_event_handler(handle_, nullptr, nullptr, nullptr, err); });
      return;
    }
    auto *boxed = new EventHandler(std::move(handler));
    // On failure the library runs destroy, which deletes boxed.
    detail::call_checked([&](char **err) {
      return lmcp_client_set_event_handler(handle_, &event_thunk, boxed, &destroy<EventHandler>, err);
    });
  }

  // Sets (or, with an empty function, removes) the telemetry handler (see
  // lmcp_client_set_telemetry_handler). It runs on the client's delivery
  // thread, one record at a time; an exception it throws drops the record.
  void on_telemetry(TelemetryHandler handler) {
    if (!handler) {
      detail::call_checked([&](char **err) {
        return lmcp_client_set_telemetry_handler(handle_, nullptr, nullptr, nullptr, err);
      });
      return;
    }
    auto *boxed = new TelemetryHandler(std::move(handler));
    // On failure the library runs destroy, which deletes boxed.
    detail::call_checked([&](char **err) {
      return lmcp_client_set_telemetry_handler(handle_, &event_thunk, boxed, &destroy<TelemetryHandler>, err);
    });
  }

  // Sets the app-request handler; must come before connect() when the
  // configuration lists "handlers". The handler receives this Client so it
  // can respond(); the Client must outlive the requests it answers.
  void on_app_request(AppRequestHandler handler) {
    auto *boxed = new AppRequestBox{this, std::move(handler)};
    // On failure the library runs destroy, which deletes boxed.
    detail::call_checked([&](char **err) {
      return lmcp_client_set_app_request_handler(handle_, &app_request_thunk, boxed, &destroy<AppRequestBox>,
                                                  err);
    });
  }

  // Starts the server (stdio) or connection and the handshake; returns at once.
  void connect() {
    detail::call_checked([&](char **err) { return lmcp_client_connect(handle_, err); });
  }

  // Blocks until ready; timeout_ms < 0 waits forever. Throws Error
  // (LMCP_E_TIMEOUT, or the handshake's failure).
  void wait_ready(int64_t timeout_ms = -1) {
    detail::call_checked([&](char **err) { return lmcp_client_wait_ready(handle_, timeout_ms, err); });
  }

  lmcp_state state() const {
    lmcp_state s = LMCP_STATE_NEW;
    detail::check(lmcp_client_state(handle_, &s), nullptr);
    return s;
  }

  // Sends a request and blocks for its result JSON (the JSON-RPC "result").
  // params and options are JSON objects; empty means absent.
  std::string call(std::string_view method, std::string_view params = {},
                   std::string_view options = {}) {
    std::string m(method);
    char *result = nullptr;
    size_t len = 0;
    detail::call_checked([&](char **err) {
      return lmcp_client_call_sync(handle_, m.c_str(), detail::data_or_null(params), params.size(),
                                   detail::data_or_null(options), options.size(), &result, &len, err);
    });
    detail::LibString owned(result);
    return std::string(result, len);
  }

  // Sends a request; done runs exactly once on a library thread. Returns the
  // call id (for cancel). Throws Error when the call is not accepted, and
  // then done never runs.
  lmcp_call_id call_async(std::string_view method, std::string_view params, std::string_view options,
                          DoneHandler done) {
    auto *boxed = new DoneHandler(std::move(done));
    try {
      return start_call(method, params, options, &done_thunk, boxed);
    } catch (...) {
      delete boxed;
      throw;
    }
  }

  // Sends a request; the future holds the result JSON or throws Error.
  std::future<std::string> call_async(std::string_view method, std::string_view params = {},
                                      std::string_view options = {}) {
    auto *promise = new std::promise<std::string>();
    std::future<std::string> future = promise->get_future();
    try {
      start_call(method, params, options, &promise_thunk, promise);
    } catch (...) {
      delete promise;
      throw;
    }
    return future;
  }

  // Cancels an accepted call; its completion carries LMCP_E_CANCELLED.
  // Returns false when the call had already completed (LMCP_E_NOT_FOUND).
  bool cancel(lmcp_call_id id) {
    lmcp_status st = lmcp_client_cancel(handle_, id);
    if (st == LMCP_E_NOT_FOUND) return false;
    detail::check(st, nullptr);
    return true;
  }

  // Sends a notification (a "notifications/..." method).
  void notify(std::string_view method, std::string_view params = {}) {
    std::string m(method);
    detail::call_checked([&](char **err) {
      return lmcp_client_notify(handle_, m.c_str(), detail::data_or_null(params), params.size(), err);
    });
  }

  // Answers a app request: status LMCP_OK with the answer JSON, or an
  // error status with an optional {"code","message","data"} object.
  void respond(lmcp_request_id id, lmcp_status status, std::string_view json) {
    detail::call_checked([&](char **err) {
      return lmcp_client_respond(handle_, id, status, detail::data_or_null(json), json.size(), err);
    });
  }

  // What the handshake learned: protocolVersion, capabilities, serverInfo, ...
  std::string server_info() const {
    char *json = nullptr;
    size_t len = 0;
    detail::call_checked([&](char **err) { return lmcp_client_server_info(handle_, &json, &len, err); });
    detail::LibString owned(json);
    return std::string(json, len);
  }

  // Graceful shutdown, blocking up to timeout_ms (negative: the library's
  // default). Throws Error (LMCP_E_TIMEOUT: teardown goes on).
  void close(int64_t timeout_ms = -1) {
    detail::call_checked([&](char **err) { return lmcp_client_close(handle_, timeout_ms, err); });
  }

 private:
  struct AppRequestBox {
    Client *client;
    AppRequestHandler handler;
  };

  template <typename T>
  static void destroy(void *p) {
    delete static_cast<T *>(p);
  }

  lmcp_call_id start_call(std::string_view method, std::string_view params, std::string_view options,
                          lmcp_done_cb cb, void *user_data) {
    std::string m(method);
    lmcp_call_id id = 0;
    detail::call_checked([&](char **err) {
      return lmcp_client_call(handle_, m.c_str(), detail::data_or_null(params), params.size(),
                              detail::data_or_null(options), options.size(), cb, user_data, &id, err);
    });
    return id;
  }

  static void event_thunk(void *user_data, const char *kind, const char *json, size_t len) {
    try {
      (*static_cast<EventHandler *>(user_data))(kind, std::string_view(json, len));
    } catch (...) {
      // Dropped: an exception must not unwind into the library.
    }
  }

  static void app_request_thunk(void *user_data, lmcp_request_id id, const char *kind, const char *json,
                                 size_t len) {
    auto *box = static_cast<AppRequestBox *>(user_data);
    try {
      box->handler(*box->client, AppRequest{id, kind, std::string(json, len)});
    } catch (...) {
      // Answer for the handler so the server is not left waiting; the
      // request may already have been answered, which is fine.
      static const char kFailed[] = "{\"message\":\"the host's request handler failed\"}";
      lmcp_client_respond(box->client->handle_, id, LMCP_E_INTERNAL, kFailed, sizeof kFailed - 1, nullptr);
    }
  }

  static void done_thunk(void *user_data, lmcp_call_id, lmcp_status status, const char *json, size_t len) {
    std::unique_ptr<DoneHandler> done(static_cast<DoneHandler *>(user_data));
    try {
      (*done)(status, std::string_view(json, len));
    } catch (...) {
      // Dropped: an exception must not unwind into the library.
    }
  }

  static void promise_thunk(void *user_data, lmcp_call_id, lmcp_status status, const char *json, size_t len) {
    std::unique_ptr<std::promise<std::string>> promise(static_cast<std::promise<std::string> *>(user_data));
    try {
      if (status == LMCP_OK) {
        promise->set_value(std::string(json, len));
      } else {
        promise->set_exception(std::make_exception_ptr(Error(status, std::string(json, len))));
      }
    } catch (...) {
      // set_value can only throw on a broken promise state or allocation
      // failure; nothing useful can be done here.
    }
  }

  lmcp_client *handle_ = nullptr;
};

namespace detail {

// s as a JSON string (quotes included).
inline std::string json_quote(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The JSON of a host function that fills (json_out, len_out, err_out).
template <typename CallWithOut> inline std::string json_out(CallWithOut &&c_call) {
  char *json = nullptr;
  size_t len = 0;
  call_checked([&](char **err) { return c_call(&json, &len, err); });
  LibString owned(json);
  return std::string(json, len);
}

} // namespace detail

// Host owns an lmcp_host: many named servers behind one handle (docs/host.md).
// This wrapper covers its lifecycle, listing, tool calls and the pinned
// definitions; get() gives the handle for the rest of the C API.
class Host {
public:
  // Creates a host from its configuration JSON (the mcpServers shape).
  // Throws Error (LMCP_E_INVALID_ARGUMENT naming the bad field, ...).
  explicit Host(std::string_view config_json) {
    lmcp_host *h = nullptr;
    detail::call_checked(
        [&](char **err) { return lmcp_host_new(config_json.data(), config_json.size(), &h, err); });
    handle_ = h;
  }

  // Frees the host (see lmcp_host_free).
  ~Host() {
    lmcp_host_free(handle_);
  }

  Host(const Host &) = delete;
  Host &operator=(const Host &) = delete;
  Host(Host &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Host &operator=(Host &&other) noexcept {
    if (this != &other) {
      lmcp_host_free(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  lmcp_host *get() const noexcept {
    return handle_;
  }

  void connect() {
    detail::call_checked([&](char **err) { return lmcp_host_connect(handle_, err); });
  }

  // Blocks until every enabled server is ready or failed; throws Error
  // (LMCP_E_TIMEOUT naming the servers still connecting).
  void wait_ready(int64_t timeout_ms = -1) {
    detail::call_checked([&](char **err) { return lmcp_host_wait_ready(handle_, timeout_ms, err); });
  }

  // lmcp_host_list_tools: {"tools": [...], "errors"?: {...}}.
  std::string list_tools() {
    return detail::json_out(
        [&](char **j, size_t *n, char **e) { return lmcp_host_list_tools(handle_, j, n, e); });
  }

  // Calls a tool by its host name and blocks for the result JSON; throws
  // Error (LMCP_E_POLICY_DENIED for a held or filtered tool, ...).
  std::string call_tool(const std::string &name, std::string_view args_json = {}) {
    return detail::json_out([&](char **j, size_t *n, char **e) {
      return lmcp_host_call_tool_sync(handle_, name.c_str(), detail::data_or_null(args_json),
                                      args_json.size(), nullptr, 0, j, n, e);
    });
  }

  // lmcp_host_pins: each server's pinned definitions and their status.
  // Throws Error (LMCP_E_INVALID_STATE without "pins").
  std::string pins() {
    return detail::json_out([&](char **j, size_t *n, char **e) { return lmcp_host_pins(handle_, j, n, e); });
  }

  // lmcp_host_approve: pins exactly hash for one definition of server
  // (kind "tool", "prompt", "resource" or "instructions", whose name is
  // ignored). Throws Error (LMCP_E_INVALID_STATE: the server no longer
  // offers that hash).
  void approve(std::string_view server, std::string_view name, std::string_view hash,
               std::string_view kind = "tool") {
    std::string approval = "{\"server\":" + detail::json_quote(server) +
                           ",\"kind\":" + detail::json_quote(kind) + ",\"name\":" + detail::json_quote(name) +
                           ",\"hash\":" + detail::json_quote(hash) + "}";
    detail::call_checked(
        [&](char **err) { return lmcp_host_approve(handle_, approval.data(), approval.size(), err); });
  }

  // Closes every server, blocking up to timeout_ms (negative: their own
  // bounds).
  void close(int64_t timeout_ms = -1) {
    detail::call_checked([&](char **err) { return lmcp_host_close(handle_, timeout_ms, err); });
  }

private:
  lmcp_host *handle_ = nullptr;
};

}  // namespace lemonmcp

#endif /* LEMONMCP_HPP */
