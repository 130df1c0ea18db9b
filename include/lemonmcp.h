/*
 * lemonmcp.h — the public C interface of liblemonmcp, a Model Context
 * Protocol (MCP) client library.
 *
 * This header is the contract. It is C99 and C++ compatible and is the only
 * header an application needs. Everything below states who owns what, which thread
 * calls back, and which status codes a function returns.
 *
 * ---------------------------------------------------------------------------
 * GLOSSARY (one meaning per word, here, in docs/ and in every binding)
 *
 *  - application: the program that loads liblemonmcp and calls these
 *    functions (a C or C++ program, or the Python and Elixir bindings on
 *    behalf of theirs). The MCP specification calls it the "host"; this
 *    library does not.
 *  - client (lmcp_client): one connection to one MCP server.
 *  - host (lmcp_host): the multi-server object only: named, supervised
 *    clients behind one aggregated, searchable catalogue of tools, prompts
 *    and resources.
 *  - server: an MCP server, reached by a client over a transport.
 *  - app request: a question the library asks the application and waits
 *    for an answer to (lmcp_app_request_cb, answered with
 *    lmcp_client_respond or lmcp_host_respond): a server's sampling,
 *    elicitation or roots request, or the library's own OAuth
 *    authorization, token load, token save and review steps.
 *
 * ---------------------------------------------------------------------------
 * CONVENTIONS
 *
 *  - Names: functions lmcp_<object>_<verb>, types lmcp_*, macros LMCP_*.
 *  - Parameters: the handle first, then inputs, then *_out outputs, then an
 *    optional `char **err_out` last.
 *  - Status: every fallible function returns an lmcp_status. LMCP_OK (0) is
 *    success; errors are negative and never renumbered.
 *  - Errors: when err_out is not NULL and the call fails, *err_out receives a
 *    library-allocated, NUL-terminated UTF-8 JSON object
 *        {"status": <int>, "message": "<text>", "type": "<error.type>",
 *         "code": <int>?, "data": <any>?}
 *    ("code" and "data" are the server's JSON-RPC error fields when the status
 *    is LMCP_E_PROTOCOL; "type" is the error's OpenTelemetry error.type, as
 *    telemetry records name it: the server's JSON-RPC error code, else the
 *    status's name, "timeout", "denied_by_policy", ...). A definition the
 *    host's pins hold is refused with LMCP_E_POLICY_DENIED and "data":
 *    {"held": {"server", "kind", "name", "status"}}. A server that could not be started has "data":
 *    {"cause": "<code>"}, a machine-readable reason to branch on (never
 *    branch on "message", whose wording may change): "executable_not_found"
 *    (LMCP_E_TRANSPORT: the command, or its interpreter, does not exist),
 *    "not_executable" (LMCP_E_INVALID_ARGUMENT: it exists but may not be
 *    run), "working_directory_not_found" (LMCP_E_INVALID_ARGUMENT),
 *    "sandbox_unavailable" (LMCP_E_TRANSPORT: a sandbox layer the server's
 *    policy asks for could not be set up; the message names the layer and
 *    why); a later
 *    call to that client (LMCP_E_INVALID_STATE) keeps the same "data".
 *    Free it with lmcp_free(). On success *err_out is set
 *    to NULL. There is no per-thread "last error". Messages never contain raw
 *    subprocess output, tokens, secrets or authorization codes.
 *  - Memory: every input buffer is copied before the call returns. Every
 *    output pointer is library-allocated C memory that the caller frees with
 *    lmcp_free(). Pointers handed to callbacks are borrowed: valid only until
 *    the callback returns. JSON is passed as pointer plus length; buffers the
 *    library produces are also NUL-terminated as a courtesy. A NULL JSON input
 *    with length 0 means "absent".
 *  - Callbacks: user_data is always the first parameter. Every registration
 *    takes (cb, user_data, destroy); destroy(user_data), when not NULL, runs
 *    exactly once: when the registration is replaced, when the client is
 *    freed, or when the registration call itself fails. It runs on the
 *    thread of that call (inside it) when no callback of the registration is
 *    running, else on the library thread that finishes the last one.
 *    user_data is never dereferenced: any value, including small integers,
 *    is passed back as given.
 *  - Encoding: every JSON buffer and string the library hands the application is valid
 *    UTF-8. Each run of bytes in a server message that is not UTF-8 becomes
 *    one U+FFFD (the call does not fail for it), and a "log" event with level
 *    "warning" says so. Server JSON in any valid spelling is accepted (white
 *    space, member order, \u escapes); payloads keep the server's spelling.
 *
 * THREADS
 *
 *  - Every function may be called from any thread, concurrently, on the same
 *    client, lmcp_client_free() included. A call that starts after free (or
 *    loses the race with it) returns LMCP_E_INVALID_HANDLE; a call already
 *    under way when free runs returns normally or with the status the free
 *    caused (a pending lmcp_client_call_sync: LMCP_E_CANCELLED). Handle
 *    values are never reused, so a stale handle never reaches another
 *    client, and no call ever touches freed memory. A host (lmcp_host_*)
 *    has the same guarantees with lmcp_host_free (see the host section).
 *  - Callbacks run on threads owned by the library, never on the caller's
 *    thread inside the call that started the operation, and never while a
 *    library lock is held. Completion (lmcp_done_cb) and event callbacks of
 *    one client are delivered one at a time, in order; app-request callbacks
 *    may run concurrently with them. Callbacks should return promptly.
 *  - A callback may call any lmcp_ function, lmcp_client_free() on its own
 *    client or another included (see lmcp_client_free for what free waits
 *    for; a callback must not wait for a thread that is freeing its client).
 *
 * PROCESS RULES FOR APPLICATIONS
 *
 *  - The library embeds a Go runtime: load at most one Go c-shared library per
 *    process, do not fork() after loading it (Python multiprocessing must use
 *    "spawn" or "forkserver"), use glibc, and never unload it (it is linked
 *    NODELETE).
 *  - Loading the library starts nothing: no thread of the library's own, no
 *    child process, no network activity happens before lmcp_client_new().
 *
 * REFERENCE (docs/, one page per topic)
 *
 *  - docs/configuration.md: the JSON object given to lmcp_client_new, every
 *    field and its default. Unknown fields and invalid values are
 *    LMCP_E_INVALID_ARGUMENT with a message that names the field by its path
 *    ("config.transport.comand: is not a known field") and never its value.
 *  - docs/call-options.md: the options_json of lmcp_client_call.
 *  - docs/events.md: the kinds and payloads of lmcp_event_cb ("ready",
 *    "failed", "closed", "notification", "progress", "sampling_denied",
 *    "log").
 *  - docs/app-requests.md: the kinds and payloads of lmcp_app_request_cb
 *    ("roots", "sampling", "review", "elicitation", "authorize",
 *    "store_load", "store_save") and the answers lmcp_client_respond takes.
 *  - docs/errors.md: the statuses, the error object, and how the bindings
 *    name them.
 *  - docs/telemetry.md: the records of lmcp_telemetry_cb (kinds, fields and
 *    their MCP semantic-convention names) and lmcp_diagnostics' duration
 *    histograms.
 *
 * RESULTS
 *
 *  - A tool that fails is not an error: tools/call answered with a result
 *    whose "isError" is true completes with LMCP_OK and that result, like any
 *    other. An error status means the call itself failed (the server's
 *    JSON-RPC error, a broken protocol, a timeout, a lost connection, ...).
 */
#ifndef LEMONMCP_H
#define LEMONMCP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- versions */

#define LMCP_VERSION_MAJOR 0
#define LMCP_VERSION_MINOR 1
#define LMCP_VERSION_PATCH 0
#define LMCP_VERSION_STRING "0.1.0"

/* The ABI version. It changes only when an existing function's signature or
 * meaning changes; the SONAME is liblemonmcp.so.<LMCP_ABI_VERSION>. Bindings
 * compare lmcp_abi_version() with the value they were written for and refuse
 * to load on a mismatch. */
#define LMCP_ABI_VERSION 1

/* lmcp_version returns the library version as static text, e.g. "0.1.0".
 * Never fails; the caller must not free the result. */
const char *lmcp_version(void);

/* lmcp_abi_version returns LMCP_ABI_VERSION as the library was built. */
int32_t lmcp_abi_version(void);

/* ------------------------------------------------------------ status codes */

typedef int32_t lmcp_status;

#define LMCP_OK 0
/* An argument or configuration field is invalid; the message names it. */
#define LMCP_E_INVALID_ARGUMENT (-1)
/* The handle is NULL, unknown, or already freed. */
#define LMCP_E_INVALID_HANDLE (-2)
/* The client is not in a state that allows the call (not ready, closed). */
#define LMCP_E_INVALID_STATE (-3)
/* No such call id or app request id (finished, answered, or expired). */
#define LMCP_E_NOT_FOUND (-4)
/* A deadline passed. */
#define LMCP_E_TIMEOUT (-5)
/* The operation was cancelled (lmcp_client_cancel, lmcp_client_free,
 * lmcp_host_cancel or lmcp_host_free). */
#define LMCP_E_CANCELLED (-6)
/* The connection is closed or was lost; the message says why. */
#define LMCP_E_CLOSED (-7)
/* An I/O or spawn failure in the transport. */
#define LMCP_E_TRANSPORT (-8)
/* The server answered with a JSON-RPC error (see "code" and "data"), or
 * broke the protocol. */
#define LMCP_E_PROTOCOL (-9)
/* The server did not declare the capability the method needs, or this build
 * does not support the feature. */
#define LMCP_E_UNSUPPORTED (-10)
/* The server requires authorization that could not be obtained. */
#define LMCP_E_AUTH_REQUIRED (-11)
/* A local policy refused the request (e.g. the sampling policy). */
#define LMCP_E_POLICY_DENIED (-12)
/* A binding was written for another ABI version. */
#define LMCP_E_ABI_MISMATCH (-13)
/* A bug in the library. A recovered Go panic while serving a client (a
 * host) poisons it: every later call on it returns LMCP_E_INTERNAL with a
 * message saying an earlier internal error poisoned it and where
 * (lmcp_client_free, lmcp_host_free still release it), and the panic is
 * reported as an "error" "log" event with the panic value and a short stack
 * summary. */
#define LMCP_E_INTERNAL (-14)

/* lmcp_status_string returns a static, human-readable name for a status
 * ("ok", "invalid argument", ...); unknown values give "unknown status".
 * These names are the library's one table of them (the Go core's), which
 * the bindings read through this function. Never fails; the caller must not
 * free the result. */
const char *lmcp_status_string(lmcp_status status);

/* lmcp_free releases memory the library allocated (err_out, json_out, ...).
 * NULL is a no-op. Never pass memory from another allocator. */
void lmcp_free(void *ptr);

/* lmcp_features describes this build as JSON:
 *   {"version", "abi_version", "transports": [..], "protocol_versions": [..],
 *    "protocol_modes": ["legacy","auto","modern"], "client_capabilities": [..],
 *    "auth_flows": [..] ("refresh_token", "client_credentials",
 *      "authorization_code", "jwt_bearer", "token_exchange"),
 *    "auth_token_binding": [..] ("dpop"),
 *    "resource_verify": [..] (the checks of the "verify" call option:
 *      "size", "sha256", "frontmatter"),
 *    "result_formats": [..],
 *    "legacy": [..] (the optional 2025-11-25 features: "tasks" as
 *      requestor, "tasks_receiver" for task-augmented sampling and
 *      elicitation; docs/tasks.md),
 *    "modern": [..] (the 2026-07-28 features: "server_discover", "mrtr",
 *      "http_standard_headers", "subscriptions_listen", "result_cache",
 *      "tasks"; docs/modern.md),
 *    "sandbox": {..} (what a confined stdio server can get on this machine,
 *      in the form of lmcp_host_servers' "sandbox", with "missing" naming
 *      each layer the machine lacks and why; absent without the sandbox
 *      helper; docs/sandbox.md)}
 * *json_out is library-allocated (free with lmcp_free); *len_out (may be NULL)
 * receives its length. Starts nothing but, once per process, the sandbox
 * helper's probe (a few milliseconds).
 * Returns LMCP_OK, or LMCP_E_INVALID_ARGUMENT when json_out is NULL. */
lmcp_status lmcp_features(char **json_out, size_t *len_out);

/* lmcp_diagnostics reports the library's live resources as JSON:
 *   {"goroutines": <int>, "live_clients": <int>, "live_hosts": <int>,
 *    "pending_calls": <int>, "result_cache": {"hits": <int>, "misses": <int>},
 *    "live_queues": <int>,
 *    "durations": {"bounds_ms": [..], "methods": {"<method>": {"count",
 *      "sum_ms", "buckets": [..]}}}}
 * "durations" holds per-method call-duration histograms a host can scrape:
 * buckets[i] counts the calls of at most bounds_ms[i] (and more than the
 * bound before), the last bucket the rest. Only calls of clients and hosts
 * with a telemetry handler are measured; at most 64 method names get their
 * own histogram, the rest count under "other".
 * "live_clients" and "live_hosts" count the handles of lmcp_client_new and
 * lmcp_host_new not yet freed (a host's servers' clients are not counted).
 * "result_cache" counts the cacheable 2026-07-28 calls answered from the
 * result cache and those sent to the server, across clients.
 * "live_queues" counts the completion queues of lmcp_queue_new not yet
 * freed. "pending_calls" counts requests in flight, the library's own
 * included: a handshake, and in the 2026-07-28 era the subscriptions/listen
 * request a ready client keeps open (docs/modern.md).
 * "goroutines" counts the library's goroutines (the Go runtime's own system
 * goroutines excluded): an application or test can compare it before creating and
 * after freeing clients and hosts to detect leaks; right after loading it is the
 * baseline of an idle library. *json_out is library-allocated (free with
 * lmcp_free); *len_out (may be NULL) receives its length.
 * Returns LMCP_OK, or LMCP_E_INVALID_ARGUMENT when json_out is NULL. */
lmcp_status lmcp_diagnostics(char **json_out, size_t *len_out);

/* lmcp_validate_answer checks an application's answer to a server request
 * with the validator the client applies when the answer is given (see
 * lmcp_client_set_app_request_handler), so that an application asking a
 * person (a form on a terminal) can refuse a wrong answer up front, field by
 * field, and no answer passes there only to be refused here. kind (UTF-8,
 * NUL-terminated) is "elicitation" (request_json: the elicitation/create
 * params, whose "requestedSchema" the answer's "content" is checked
 * against, defaults applied; answer_json: {"action", "content"?}),
 * "sampling" (answer_json: a CreateMessageResult; request_json unused, may
 * be NULL) or "roots" (answer_json: {"roots": [...]}). Pure: no handle,
 * never blocks, starts nothing; callable from any thread.
 * Returns LMCP_OK (valid), or LMCP_E_INVALID_ARGUMENT with a message naming
 * the problem ("content.when is not a date-time (RFC 3339)"), an unknown
 * kind, or a request that is itself invalid. */
lmcp_status lmcp_validate_answer(const char *kind, const char *request_json,
                                 size_t request_len, const char *answer_json,
                                 size_t answer_len, char **err_out);

/* ------------------------------------------------------------------ client */

/* An MCP client: one connection to one server. Opaque. */
typedef struct lmcp_client lmcp_client;

/* Identifies one accepted call on a client; never 0, never reused. */
typedef uint64_t lmcp_call_id;

/* Identifies one pending app request on a client; never 0, never reused. */
typedef uint64_t lmcp_request_id;

/* Client states, as reported by lmcp_client_state. */
typedef int32_t lmcp_state;
#define LMCP_STATE_NEW 0        /* created, connect not yet called */
#define LMCP_STATE_CONNECTING 1 /* handshake in progress (also while a supervised client restarts its server: see "restart" in docs/host.md) */
#define LMCP_STATE_READY 2      /* calls allowed */
#define LMCP_STATE_CLOSING 3    /* lmcp_client_close in progress */
#define LMCP_STATE_CLOSED 4     /* closed or connection lost */
#define LMCP_STATE_FAILED 5     /* the handshake failed */

/* Receives an event. kind is static text, one of the kinds of docs/events.md
 * ("ready", "failed", "closed", "notification", "progress",
 * "sampling_denied", "log"); json (len bytes, NUL-terminated) is its payload,
 * a JSON object, borrowed until the callback returns. Runs on a library
 * thread; events of one client arrive one at a time, in order. */
typedef void (*lmcp_event_cb)(void *user_data, const char *kind,
                              const char *json, size_t len);

/* Receives a request from the server (or the library's own OAuth questions)
 * that the application must answer with lmcp_client_respond(), during the callback
 * or later, from any thread. kind is static text, one of the kinds of
 * docs/app-requests.md ("roots", "sampling", "review", "elicitation",
 * "authorize", "store_load", "store_save"); json is its payload, borrowed
 * until the callback returns. May run concurrently with event and
 * completion callbacks. An
 * unanswered request expires after timeouts.app_request_ms and the server
 * is told so; a later answer gets LMCP_E_NOT_FOUND. */
typedef void (*lmcp_app_request_cb)(void *user_data, lmcp_request_id request_id,
                                     const char *kind, const char *json,
                                     size_t len);

/* Receives the completion of an accepted call, exactly once. On LMCP_OK json
 * is the JSON-RPC "result" value (for tools/call, also when the tool failed:
 * the result then has "isError": true; see RESULTS); otherwise it is an
 * error object (see CONVENTIONS). json is borrowed until the callback
 * returns. */
typedef void (*lmcp_done_cb)(void *user_data, lmcp_call_id call_id,
                             lmcp_status status, const char *json, size_t len);

/* Releases a registration's user_data. */
typedef void (*lmcp_destroy_cb)(void *user_data);

/* lmcp_client_new validates config_json (len bytes; the configuration of
 * docs/configuration.md) and creates a client in LMCP_STATE_NEW. Nothing is
 * started: no process, no connection.
 * On success *client_out owns a new handle, released with lmcp_client_free.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (bad JSON, unknown or invalid field:
 * the message names it; NULL client_out); LMCP_E_UNSUPPORTED (a transport or
 * mode this build lacks). */
lmcp_status lmcp_client_new(const char *config_json, size_t len,
                            lmcp_client **client_out, char **err_out);

/* lmcp_client_set_event_handler registers the event callback (NULL cb removes
 * it). Replacing a handler runs the previous destroy. May be called at any
 * time; events before registration are not replayed.
 * Returns LMCP_OK or LMCP_E_INVALID_HANDLE (destroy still runs). */
lmcp_status lmcp_client_set_event_handler(lmcp_client *client, lmcp_event_cb cb,
                                          void *user_data,
                                          lmcp_destroy_cb destroy,
                                          char **err_out);

/* lmcp_client_set_app_request_handler registers the app-request callback
 * (NULL cb removes it). It must be set before lmcp_client_connect when the
 * configuration lists any "handlers". Returns LMCP_OK, LMCP_E_INVALID_HANDLE (destroy still runs), or
 * LMCP_E_INVALID_STATE once connect was called (destroy still runs). */
lmcp_status lmcp_client_set_app_request_handler(lmcp_client *client,
                                                 lmcp_app_request_cb cb,
                                                 void *user_data,
                                                 lmcp_destroy_cb destroy,
                                                 char **err_out);

/* Receives one telemetry record (docs/telemetry.md): kind is static text,
 * the record's kind ("call": a call completed, whatever its status;
 * "restart": a supervised client restarts its server; "failure": the
 * handshake failed or the connection was lost for good; "session": a
 * ready session ended, closed or lost, its duration_ns how long it lasted;
 * for a host also "list_changed"); json (len bytes, NUL-terminated) is the record, a JSON
 * object (method, target, server, protocol_version, session_id, request_id,
 * status, error_type, start_unix_nano, duration_ns, bytes_in, bytes_out,
 * retries, restarts, traceparent, front_session: the gateway's front
 * session a call served), borrowed until the callback returns.
 * Runs on the client's (or host's) delivery thread, one record at a time,
 * in order with its events and completions (a call's record before its
 * completion). */
typedef void (*lmcp_telemetry_cb)(void *user_data, const char *kind,
                                  const char *json, size_t len);

/* lmcp_client_set_telemetry_handler registers the telemetry callback (NULL
 * cb removes it). Without one the library measures nothing (a call pays one
 * atomic load). Replacing a handler runs the previous destroy once none of
 * its callbacks runs. May be called at any time, from any thread; records
 * of operations finished before registration are not replayed. Calls
 * measured also feed lmcp_diagnostics' "durations".
 * Returns LMCP_OK or LMCP_E_INVALID_HANDLE (destroy still runs). */
lmcp_status lmcp_client_set_telemetry_handler(lmcp_client *client,
                                              lmcp_telemetry_cb cb,
                                              void *user_data,
                                              lmcp_destroy_cb destroy,
                                              char **err_out);

/* lmcp_client_connect starts the transport (for stdio: spawns the server,
 * without a shell) and begins the handshake in the background. It returns as
 * soon as the process is started; readiness arrives as a "ready" event (or
 * "failed"), and lmcp_client_wait_ready bounds the wait.
 * Returns LMCP_OK; LMCP_E_INVALID_HANDLE; LMCP_E_INVALID_STATE (connect was
 * already called); LMCP_E_INVALID_ARGUMENT (not an executable file, working
 * directory missing, or handlers configured, or auth.token_store "app",
 * without a app-request handler); LMCP_E_TRANSPORT (the server cannot be
 * started: executable not found, or the spawn failed). */
lmcp_status lmcp_client_connect(lmcp_client *client, char **err_out);

/* lmcp_client_wait_ready blocks the calling thread until the client is ready,
 * the handshake fails, or timeout_ms passes (negative: wait forever).
 * Returns LMCP_OK (ready); LMCP_E_TIMEOUT (still connecting; the handshake
 * goes on); the failure's status (LMCP_E_PROTOCOL for an initialize error,
 * LMCP_E_UNSUPPORTED for a protocol version mismatch, LMCP_E_CLOSED when the
 * server went away, LMCP_E_TIMEOUT when timeouts.ready_ms ran out);
 * LMCP_E_INVALID_STATE (connect not called, or closed); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_client_wait_ready(lmcp_client *client, int64_t timeout_ms,
                                   char **err_out);

/* lmcp_client_state stores the current state in *state_out.
 * Returns LMCP_OK, LMCP_E_INVALID_HANDLE, or LMCP_E_INVALID_ARGUMENT. */
lmcp_status lmcp_client_state(lmcp_client *client, lmcp_state *state_out);

/* Call options: options_json is a JSON object, every member optional:
 * timeout_ms, reset_timeout_on_progress, max_total_ms, all_pages, progress,
 * wait_ready, fail_if_restarting, no_cache, task, _meta, verify. Their
 * meanings and defaults are in docs/call-options.md (one place, not repeated
 * here). A bad option fails the call with LMCP_E_INVALID_ARGUMENT naming it.
 * A timeout sends notifications/cancelled to the server (2026-07-28 over
 * HTTP: the request's response stream is closed instead; a task-augmented
 * call sends tasks/cancel instead). A tools/call whose params_json already
 * carries "task" is the application's own task: it is sent as written, its
 * CreateTaskResult is the result, and the application follows the task
 * (tasks/get, tasks/result, tasks/list, tasks/cancel; docs/tasks.md). */

/* lmcp_client_call sends a request asynchronously. method is NUL-terminated;
 * params_json (params_len bytes) is a JSON object or absent. On LMCP_OK,
 * *call_id_out (may be NULL) receives the call id and done(user_data, ...)
 * will run exactly once, on a library thread (success, server error, timeout,
 * LMCP_E_CLOSED, or LMCP_E_CANCELLED after lmcp_client_cancel or
 * lmcp_client_free). On any other status done never runs.
 * Returns LMCP_OK; LMCP_E_INVALID_HANDLE; LMCP_E_INVALID_ARGUMENT (empty
 * method, params not a JSON object, bad options, NULL done);
 * LMCP_E_INVALID_STATE (not ready and wait_ready not set, or closed);
 * LMCP_E_UNSUPPORTED (the server did not declare the capability the method
 * needs: no request is sent); LMCP_E_TIMEOUT (stdio: the queue for a server
 * that stopped reading is full); LMCP_E_CLOSED or LMCP_E_TRANSPORT (the
 * request could not be handed to the connection).
 * Never blocks: over HTTP the request is handed to a library goroutine; over
 * stdio it is written to the server's stdin with one non-blocking write, and
 * when the pipe is full (the server stopped reading) what did not fit waits
 * in a bounded per-client queue (64 MiB) that a library goroutine writes in
 * order. A queued request whose deadline passes before it is written is
 * dropped and completes with LMCP_E_TIMEOUT; a full queue makes this call
 * fail at once with LMCP_E_TIMEOUT. So the call returns in microseconds
 * whatever the server does, and BEAM schedulers may call it directly. */
lmcp_status lmcp_client_call(lmcp_client *client, const char *method,
                             const char *params_json, size_t params_len,
                             const char *options_json, size_t options_len,
                             lmcp_done_cb done, void *user_data,
                             lmcp_call_id *call_id_out, char **err_out);

/* lmcp_client_call_sync is lmcp_client_call that blocks the calling thread
 * until the call completes. On LMCP_OK *result_out receives the result JSON
 * (library-allocated; free with lmcp_free) and *result_len_out (may be NULL)
 * its length (a tool's error result is LMCP_OK too: see RESULTS).
 * Returns LMCP_OK, the statuses of lmcp_client_call, or the completion's
 * status (LMCP_E_PROTOCOL with the server's error in err_out,
 * LMCP_E_TIMEOUT, LMCP_E_CLOSED, LMCP_E_CANCELLED). The thread waits
 * outside the Go runtime: it spins up to 50 microseconds when its previous
 * blocking call was that fast, then sleeps on a futex; while as many
 * blocking calls are under way as the Go runtime has processors
 * (GOMAXPROCS), it waits in the Go scheduler instead (docs/abi-cost.md).
 * Over Streamable HTTP (and type "http" once the server speaks it) the
 * thread makes the exchange itself: it writes the POST and sleeps in
 * read(2) on a connection kept for such calls, and the kernel wakes it
 * when the server answers (a reply streamed as SSE is followed by a
 * library goroutine while the thread waits in Go). Over legacy HTTP+SSE
 * the thread makes the request's POST itself in the same way, then waits
 * outside Go for the reply, which comes on the server's stream; a POST the
 * server does not answer ends with the call (its timeout, a free). With a
 * host-given HTTP client a library goroutine makes the call in the
 * thread's stead (the thread hands it over without entering Go, and the
 * arguments are read in place while it waits); over stdio the thread
 * writes the request itself. Either way callbacks never run on the calling
 * thread. The lmcp_host_*_sync calls wait the same way. */
lmcp_status lmcp_client_call_sync(lmcp_client *client, const char *method,
                                  const char *params_json, size_t params_len,
                                  const char *options_json, size_t options_len,
                                  char **result_out, size_t *result_len_out,
                                  char **err_out);

/* A blocking call in two steps, for a caller that must run code of its own
 * while it waits, such as an interpreter that takes signals (Ctrl-C)
 * between slices of the wait: lmcp_client_call_begin (lmcp_host_call_begin,
 * lmcp_host_call_tool_begin) starts the call, whose outcome goes to *call,
 * and lmcp_sync_call_wait waits for it outside the Go runtime, exactly as
 * lmcp_client_call_sync does, for at most a slice of time. The caller owns
 * *call (its fields are the library's) and keeps it in place from begin
 * until a wait reports the call done; it may then reuse it. To give up,
 * cancel the call (lmcp_client_cancel with the id begin returned) and wait
 * for it: a cancelled call completes at once. */
typedef struct lmcp_sync_call {
  uint32_t state;     /* private: 0 while the call runs, then done */
  lmcp_status status; /* private */
  char *json;         /* private */
  size_t len;         /* private */
} lmcp_sync_call;

/* lmcp_client_call_begin starts a call as lmcp_client_call does, with the
 * same arguments and statuses, but its outcome goes to *call, collected
 * with lmcp_sync_call_wait; *call_id_out (may be NULL) receives its id.
 * Nothing is stored in *call when it fails. */
lmcp_status lmcp_client_call_begin(lmcp_client *client, const char *method,
                                   const char *params_json, size_t params_len,
                                   const char *options_json,
                                   size_t options_len, lmcp_sync_call *call,
                                   lmcp_call_id *call_id_out, char **err_out);

/* lmcp_sync_call_wait waits up to timeout_ms (negative: without limit) for
 * the outcome of a call begun with *call, spinning up to 50 microseconds
 * when the thread's previous blocking call was that fast, then asleep on a
 * futex; a signal handled by the thread ends the wait early when
 * timeout_ms is not negative. While the call runs it returns LMCP_OK with
 * *done_out 0. Once the call is done, *done_out is 1 and it returns as
 * lmcp_client_call_sync would have: LMCP_OK with *result_out (free with
 * lmcp_free) and *result_len_out (may be NULL), or the completion's status
 * with its error in *err_out. LMCP_E_INVALID_ARGUMENT when call, done_out
 * or result_out is NULL (err_out is then left alone). */
lmcp_status lmcp_sync_call_wait(lmcp_sync_call *call, int32_t timeout_ms,
                                int *done_out, char **result_out,
                                size_t *result_len_out, char **err_out);

/* lmcp_client_cancel cancels an accepted call: its done callback runs with
 * LMCP_E_CANCELLED and the server receives notifications/cancelled (in the
 * 2026-07-28 era over HTTP, the request's stream is closed instead; a
 * task-augmented call sends tasks/cancel). Safe from any thread, including
 * from callbacks. Returns LMCP_OK, LMCP_E_NOT_FOUND (already completed,
 * unknown, or an id the application never received: the library's own requests,
 * such as its subscriptions/listen, task polls and lookups, are not the
 * host's to cancel), or LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_client_cancel(lmcp_client *client, lmcp_call_id call_id);

/* lmcp_client_notify sends a notification to the server (e.g.
 * "notifications/roots/list_changed"). params_json is a JSON object or absent.
 * May block, unlike lmcp_client_call: over HTTP (streamable_http, sse, http)
 * it returns once the server has accepted the POST, which takes a round trip
 * and at most timeouts.call_ms (one minute when call_ms is 0; then
 * LMCP_E_TIMEOUT), and lmcp_client_close or lmcp_client_free end the wait
 * (LMCP_E_CLOSED). Over stdio it does not block: it is written like a request
 * (see lmcp_client_call). Do not call it from a BEAM scheduler or an event
 * loop thread over HTTP.
 * Returns LMCP_OK, LMCP_E_INVALID_HANDLE, LMCP_E_INVALID_ARGUMENT (empty, or
 * not a notifications/ method), LMCP_E_INVALID_STATE (not ready; or
 * notifications/roots/list_changed without handlers.roots.list_changed, which
 * the client did not declare), LMCP_E_UNSUPPORTED (in the 2026-07-28 era,
 * notifications/roots/list_changed and notifications/initialized, which do
 * not exist there), LMCP_E_TIMEOUT (the bound above, or stdio's full send
 * queue), LMCP_E_AUTH_REQUIRED (HTTP 401/403), LMCP_E_CLOSED or
 * LMCP_E_TRANSPORT. */
lmcp_status lmcp_client_notify(lmcp_client *client, const char *method,
                               const char *params_json, size_t params_len,
                               char **err_out);

/* lmcp_client_respond answers a app request. With status LMCP_OK, json is
 * the answer docs/app-requests.md describes for the request's kind. With an error status, json is
 * optional: {"code": <int>?, "message": ".."?, "data": <any>?}; the server
 * receives that JSON-RPC error (code defaults to -1 for LMCP_E_POLICY_DENIED
 * and -32603 otherwise). For a "review", an error status refuses the request
 * (review_failed).
 * Returns LMCP_OK; LMCP_E_NOT_FOUND (unknown, already answered, or expired
 * request id); LMCP_E_INVALID_ARGUMENT when json is not a JSON object (the
 * request stays pending: answer again) or when it is not a valid answer
 * (the request is consumed: the server gets -32603, the message says what
 * was wrong, and a "log" event reports it); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_client_respond(lmcp_client *client, lmcp_request_id request_id,
                                lmcp_status status, const char *json,
                                size_t len, char **err_out);

/* lmcp_client_server_info returns what the handshake learned:
 *   {"protocolVersion", "capabilities", "serverInfo", "instructions"?,
 *    "transport": "stdio"|.., "era": "legacy"|"modern", "sandbox"?}
 * "sandbox", for a stdio transport given a "sandbox" object, says what
 * the sandbox helper set up for this start of the server (docs/sandbox.md):
 * {"namespaces", "landlock" (the ABI applied, 0: none), "landlockRights"?,
 * "scoped"?, "network", "proc", "noNewPrivs", "limits", "reaper",
 * "unixSockets", "missing"? (with "required": false, each layer that did
 * not hold and why)}.
 * In the modern era it comes from server/discover (serverInfo from its
 * _meta io.modelcontextprotocol/serverInfo).
 * *json_out is library-allocated (free with lmcp_free).
 * Returns LMCP_OK, LMCP_E_INVALID_STATE (not ready), LMCP_E_INVALID_HANDLE, or
 * LMCP_E_INVALID_ARGUMENT. */
lmcp_status lmcp_client_server_info(lmcp_client *client, char **json_out,
                                    size_t *len_out, char **err_out);

/* lmcp_client_close shuts the client down gracefully, blocking up to
 * timeout_ms (negative: timeouts.close_grace_ms x 3 + 1000). Every pending
 * call completes with LMCP_E_CLOSED; the session ends; a stdio server's stdin
 * is closed, then after close_grace_ms its process group gets SIGTERM, then
 * SIGKILL, and the child is reaped. A "closed" event follows. Idempotent.
 * Returns LMCP_OK; LMCP_E_TIMEOUT (teardown goes on in the background);
 * LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_client_close(lmcp_client *client, int64_t timeout_ms,
                              char **err_out);

/* lmcp_client_free releases the handle. It never waits for the server: the
 * connection is torn down (subprocess reaped) in the background. It may race
 * any other call on the handle (see THREADS); calls after it return
 * LMCP_E_INVALID_HANDLE.
 *
 * When it returns, no callback of the client is running or will start:
 * every pending call's done has run, with LMCP_E_CANCELLED (on a library
 * thread, or on this thread when it is the client's delivery thread); every
 * event and app-request callback that had started has returned, and no
 * other will start; every registration's destroy has run. The application
 * may release everything its callbacks use. So free waits for application code only:
 * the client's callbacks already running on other threads, and the
 * cancelled completions it delivers. A callback that blocks therefore
 * delays free, and two callbacks that free each other's clients at the same
 * time deadlock.
 *
 * Called from inside one of the client's own callbacks (detected per
 * thread), free does not wait for those callbacks: they finish after it
 * returns, and the destroy of a registration whose callback is among them
 * runs when that callback returns.
 *
 * Safe from finalizers and BEAM resource destructors (they wait only as
 * described above). NULL is a no-op; freeing a freed or unknown handle is
 * harmless and returns at once. */
void lmcp_client_free(lmcp_client *client);

/* ------------------------------------------------------------------- queue */

/* A completion queue: the polling alternative to lmcp_done_cb. A call made
 * with lmcp_client_call_queued completes by appending an lmcp_completion to
 * a queue the application drains with lmcp_queue_pop; the library never calls into
 * the application for it. With the queue comes a file descriptor that is readable
 * exactly while completions are waiting, so the application waits for completions
 * in its own event loop or with poll()/select() on its own thread (a Python
 * main thread stays interruptible by Ctrl-C; asyncio registers it with
 * loop.add_reader; an Elixir NIF can enif_select it). One pop takes every
 * waiting completion in one allocation: a burst of completions costs the
 * host one wake-up and one call, not one callback (and one thread hand-off)
 * each. Events and app requests keep their callbacks. docs/queue.md has
 * examples and the batch layout for bindings.
 *
 * A queue may serve any number of clients and calls; completions from many
 * library threads are queued in the order they finish. Every function here
 * may be called from any thread, concurrently; lmcp_queue_free may race the
 * others (a later call gets LMCP_E_INVALID_HANDLE; handle values are never
 * reused). Opaque. */
typedef struct lmcp_queue lmcp_queue;

/* One completion, as lmcp_queue_pop returns it. json (len bytes, also
 * NUL-terminated) is what lmcp_done_cb would receive: on LMCP_OK the
 * JSON-RPC "result" value (also for a tool's error result: see RESULTS),
 * otherwise an error object (see CONVENTIONS). It points into the batch and
 * is valid until the batch is freed. */
typedef struct lmcp_completion {
  uint64_t tag;         /* the tag given to the *_call_queued function */
  lmcp_call_id call_id; /* the call's id, as *call_id_out received it */
  lmcp_status status;   /* LMCP_OK or the call's error status */
  uint32_t reserved;    /* 0 */
  const char *json;
  size_t len;
} lmcp_completion;

/* lmcp_queue_new creates an empty queue. *queue_out owns a new handle,
 * released with lmcp_queue_free. *fd_out (may be NULL) receives its file
 * descriptor: non-blocking, close-on-exec, readable while completions wait
 * (the library reads and writes it: only poll it; never read, write or
 * close it). It stays open until lmcp_queue_free, which closes it.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (NULL queue_out);
 * LMCP_E_INTERNAL (no descriptor could be created, e.g. the process is out
 * of file descriptors: the message says why). */
lmcp_status lmcp_queue_new(lmcp_queue **queue_out, int *fd_out,
                           char **err_out);

/* lmcp_client_call_queued is lmcp_client_call whose completion goes to
 * queue instead of a done callback: same method, params, options, call id
 * and statuses, and it never blocks either. On LMCP_OK exactly one
 * completion with this tag (any value; the library never interprets it)
 * and *call_id_out's id is queued when the call finishes (success, server
 * error, timeout, LMCP_E_CLOSED, or LMCP_E_CANCELLED after
 * lmcp_client_cancel or lmcp_client_free); it may already be there when
 * this returns, so choose the tag, not the call id, to find the caller. On
 * any other status nothing is queued. A completion is queued where and when
 * a done callback would run: on the client's delivery thread, in order with
 * its events, so it follows the callbacks of the client's earlier events
 * (e.g. the call's last "progress") once they have returned. Queueing never
 * calls application code and does not wait for anything the application does.
 * If the queue is freed first, the completion is dropped and freed by the
 * library (the call still completes: cancel, timeouts and close apply as
 * usual). When lmcp_client_free returns, the completion of every call the
 * client had accepted is queued (LMCP_E_CANCELLED for those still pending);
 * completions stay in the queue, valid, after their client is freed.
 * While more calls to networked servers (HTTP transports) are in flight
 * this way than the Go runtime has processors by default, the library runs
 * with twice as many, as it does for many blocking calls (docs/abi-cost.md,
 * "Many threads blocking at once"); a GOMAXPROCS set in the environment is
 * kept. The lmcp_host_*_queued calls count alike.
 * Returns the statuses of lmcp_client_call (without "NULL done"), and
 * LMCP_E_INVALID_HANDLE when the client or the queue is NULL, unknown or
 * freed (the message says which). */
lmcp_status lmcp_client_call_queued(lmcp_client *client, const char *method,
                                    const char *params_json, size_t params_len,
                                    const char *options_json,
                                    size_t options_len, lmcp_queue *queue,
                                    uint64_t tag, lmcp_call_id *call_id_out,
                                    char **err_out);

/* lmcp_client_hold_sends and lmcp_client_release_sends bracket a burst of
 * calls started together (an event loop resuming the tasks whose calls just
 * completed): the requests the client sends between them go to the server
 * in one write at the release, so the server is woken once, not once per
 * call. Only the stdio transport holds; on the others both do nothing (and
 * return LMCP_OK). Holds nest: the last release writes. A hold delays the
 * requests of every thread using this client, so release it at once, in
 * the same thread, after starting the calls with the never-blocking forms
 * (lmcp_client_call, lmcp_client_call_queued): a blocking call made between
 * them would wait for its own held request until its timeout. Neither
 * blocks; any thread. Returns LMCP_OK; LMCP_E_INVALID_HANDLE (NULL, unknown
 * or freed client: a hold is then released by the free). */
lmcp_status lmcp_client_hold_sends(lmcp_client *client);
lmcp_status lmcp_client_release_sends(lmcp_client *client);

/* lmcp_queue_pop takes up to max waiting completions (max 0: all of them),
 * oldest first, without blocking. *batch_out receives an array of *count_out
 * lmcp_completion, library-allocated in one block with the JSON texts it
 * points to: free it with one lmcp_free(*batch_out). *size_out (may be
 * NULL) receives the block's size in bytes (a binding may copy the block
 * whole and read json as an offset from *batch_out). With no completion
 * waiting it returns LMCP_OK with *count_out 0 and *batch_out NULL. The
 * descriptor stops being readable when a pop leaves the queue empty; after
 * a pop limited by max it stays readable.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (NULL batch_out or count_out);
 * LMCP_E_INVALID_HANDLE (NULL, unknown or freed queue, or freed while this
 * call was on its way in). */
lmcp_status lmcp_queue_pop(lmcp_queue *queue, size_t max,
                           lmcp_completion **batch_out, size_t *count_out,
                           size_t *size_out);

/* lmcp_queue_free releases the queue: completions still waiting are dropped
 * and freed, later completions of calls made with it are dropped, and its
 * descriptor is closed (first made readable, so a thread already blocked
 * polling it wakes up and then gets LMCP_E_INVALID_HANDLE from
 * lmcp_queue_pop). Stop watching the descriptor before calling it (e.g.
 * loop.remove_reader): once it returns the number may be reused by any new
 * descriptor of the process. Never blocks, never runs application code. Batches
 * already popped stay valid until lmcp_free. May race any other call on the
 * queue; NULL, freed or unknown handles are harmless. */
void lmcp_queue_free(lmcp_queue *queue);

/* -------------------------------------------------------------------- host */

/* A host: many named MCP servers, each a supervised client, behind one
 * handle. Configuration (the common "mcpServers" shape plus per-server
 * "restart", "timeouts", "protocol", "auth", "sampling_policy", "handlers",
 * "enabled", "tools": {"allow","deny"} globs; "tool_prefix"; "defaults";
 * "deferred_tools"; ${VAR} and ${VAR:-default} expansion) and the host's
 * events are described in docs/host.md. Every event and request payload is a JSON object whose
 * first member is "server": the server's name (null in the host's own
 * "log" events, which report a library panic). Opaque.
 *
 * Threading, as for clients (see THREADS): every lmcp_host_ function may be
 * called from any thread, concurrently, on the same host, lmcp_host_free()
 * included; a call that starts after free (or loses the race with it)
 * returns LMCP_E_INVALID_HANDLE, one already under way returns normally or
 * with the status the free caused, and no call touches freed memory. The
 * host's event, app-request and done callbacks run on a library thread,
 * one at a time and in order for one host (across all its servers; a
 * call's "progress" events precede its done), never on the caller's thread
 * inside the call that started the operation and never while a library lock
 * is held. A callback may call any lmcp_ function, lmcp_host_free() on its
 * own host or another included (see lmcp_host_free).
 *
 * A recovered panic while serving a host poisons it, as a client (see
 * LMCP_E_INTERNAL): every later lmcp_host_ call on it returns
 * LMCP_E_INTERNAL naming the earlier failure, and the panic is reported as
 * an "error" "log" event of the host. */
typedef struct lmcp_host lmcp_host;

/* lmcp_host_new validates config_json (len bytes) and creates a host with one
 * client per enabled server. Nothing is started. On success *host_out owns a
 * new handle, released with lmcp_host_free. The text may be any application's
 * config file (Claude Desktop, Claude Code, Cursor, VS Code with comments,
 * Cline, Roo Code, Windsurf): members the host does not use are ignored with
 * one warning each (lmcp_host_warnings), or refused when the config says
 * "strict": true.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (bad JSON, with its line and
 * column; invalid field, bad server name, an unresolvable ${VAR}, ${env:VAR}
 * or ${input:id}: the message names the field as the file spells it,
 * config.mcpServers.<name>.<field> or config.servers.<name>.<field>, never a
 * value; NULL host_out); LMCP_E_UNSUPPORTED (a transport this build lacks). */
lmcp_status lmcp_host_new(const char *config_json, size_t len,
                          lmcp_host **host_out, char **err_out);

/* lmcp_host_new_file is lmcp_host_new for the config file at path (a
 * NUL-terminated path, read on the calling thread). options_json
 * (options_len bytes; NULL or 0: none) is {"strict": bool [false],
 * "inputs": {"<id>": "<value>"} (the values of ${input:id}: the library never
 * prompts), "workspace_folder": path [the parent of the file's .vscode or
 * .cursor directory, else the file's directory] (${workspaceFolder}, and
 * where a relative envFile is found), "start": "eager"|"lazy" [the file's],
 * "override": {top-level members laid over the file's, such as "tool_prefix"
 * or "defaults"}, "only": [server names] (the host runs only these servers
 * of the file, with the file's pins, filters and other host options),
 * "stdio": {"env"?: {name: value} (added to each server's env, winning),
 * "cwd"?: dir, "env_inherit"?: "all"} (laid over every server kept; a server
 * reached by URL refuses it: LMCP_E_INVALID_ARGUMENT)}.
 * Every message and warning starts with the path.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (NULL path or host_out, no such
 * file, unreadable, malformed or invalid config, unknown option: the message
 * names the file; a server "only" names that the file does not have);
 * LMCP_E_UNSUPPORTED, as lmcp_host_new. */
lmcp_status lmcp_host_new_file(const char *path, const char *options_json,
                               size_t options_len, lmcp_host **host_out,
                               char **err_out);

/* lmcp_host_file_server reads the config file at path as lmcp_host_new_file
 * does (the same reader: every dialect, comments, "servers", "serverUrl" /
 * "httpUrl", ${VAR} and ${input:id}, envFile; the same options_json) and
 * returns one server's client configuration, for an application that talks
 * to that server alone through lmcp_client_new:
 *   {"name": "<server>", "enabled": bool, "config": {<the lmcp_client_new
 *    configuration the host would give it: "transport", and "timeouts",
 *    "restart", ... when the file sets them>}, "warnings": ["<file>: ...", ..],
 *    "host_guards": ["pins"?, "tool_filters"?]}
 * host_guards names what the host would apply to this server and a lone
 * client does not (the file's pins; the server's tools.allow/tools.deny):
 * when it is not empty, talk to the server through a host (lmcp_host_new_file
 * with "only": [name]) to keep them.
 * name (NUL-terminated; NULL or "": the file's only server) selects it; its
 * configuration is checked as lmcp_client_new would (the message names the
 * member as the file spells it). Starts nothing.
 * *json_out is library-allocated (free with lmcp_free); *len_out (may be
 * NULL) receives its length.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (NULL path or json_out; a file
 * lmcp_host_new_file refuses; several servers and no name: the message lists
 * them); LMCP_E_NOT_FOUND (no server of that name: the message lists them). */
lmcp_status lmcp_host_file_server(const char *path, const char *options_json,
                                  size_t options_len, const char *name,
                                  char **json_out, size_t *len_out,
                                  char **err_out);

/* lmcp_host_warnings returns the configuration's warnings as a JSON array of
 * strings, one per member the host ignored ("<file>: config.<path>: ignored:
 * <what it is>", or "... is not a member LemonMCP knows; ignored (did you mean
 * \"command\"?)"); [] when none. *json_out is library-allocated (free with
 * lmcp_free); *len_out (may be NULL) receives its length. Never blocks.
 * Returns LMCP_OK, LMCP_E_INVALID_HANDLE, or LMCP_E_INVALID_ARGUMENT (NULL
 * json_out). */
lmcp_status lmcp_host_warnings(lmcp_host *host, char **json_out,
                               size_t *len_out, char **err_out);

/* lmcp_host_set_event_handler registers the host's event callback (NULL cb
 * removes it); replacing a handler runs the previous destroy once none of its
 * callbacks is running. Events: each server's client events ("ready",
 * "restarting", "failed", "closed", "notification", "progress", "log") with
 * "server" added, and "list_changed" {"server","list"} when what the server
 * contributes to the aggregated "tools", "prompts" or "resources" list
 * really changed (never for a refetch that found the same list).
 * Returns LMCP_OK or LMCP_E_INVALID_HANDLE (destroy still runs). */
lmcp_status lmcp_host_set_event_handler(lmcp_host *host, lmcp_event_cb cb,
                                        void *user_data,
                                        lmcp_destroy_cb destroy,
                                        char **err_out);

/* lmcp_host_set_telemetry_handler registers the host's telemetry callback
 * (NULL cb removes it; see lmcp_telemetry_cb). While one is set, every
 * server's client measures its calls: each record names its "server", and a
 * call's "call_id" is the host's. Restarts, failures and ended sessions
 * of a server are records too, and "list_changed" records {"server","list"} come from the
 * host itself. Records run on the host's delivery thread, one at a time, in
 * order with its events and completions. Without a handler no server
 * measures anything. Replacing a handler runs the previous destroy once none
 * of its callbacks is running.
 * Returns LMCP_OK or LMCP_E_INVALID_HANDLE (destroy still runs). */
lmcp_status lmcp_host_set_telemetry_handler(lmcp_host *host,
                                            lmcp_telemetry_cb cb,
                                            void *user_data,
                                            lmcp_destroy_cb destroy,
                                            char **err_out);

/* lmcp_host_set_app_request_handler registers the callback that receives
 * every server's requests (sampling, elicitation, roots, authorization, as
 * for a client), with host-wide request ids and "server" in the payload;
 * answer with lmcp_host_respond. Without a handler such requests are refused
 * with LMCP_E_UNSUPPORTED. May be called at any time.
 * Returns LMCP_OK or LMCP_E_INVALID_HANDLE (destroy still runs). */
lmcp_status lmcp_host_set_app_request_handler(lmcp_host *host,
                                               lmcp_app_request_cb cb,
                                               void *user_data,
                                               lmcp_destroy_cb destroy,
                                               char **err_out);

/* lmcp_host_connect starts every enabled eager server in parallel and returns
 * once each was started; a server with "start": "lazy" (its own or the
 * host's) starts on its first call or list instead. A server that fails to
 * start or to handshake is reported ("failed" state with its reason) and
 * retried by its restart policy, except a start that cannot succeed (no such
 * executable, not executable, working directory missing), which fails at
 * once without retries; it never fails the others or this call.
 * Returns LMCP_OK; LMCP_E_INVALID_HANDLE; LMCP_E_INVALID_STATE (connect was
 * already called, or the host is closed). */
lmcp_status lmcp_host_connect(lmcp_host *host, char **err_out);

/* lmcp_host_wait_ready blocks the calling thread until every enabled server
 * that was started (lazy servers not used yet are skipped) is ready or has
 * failed once, or timeout_ms passes (negative: no limit).
 * Returns LMCP_OK (all settled: see lmcp_host_servers for which are ready);
 * when every enabled server is "failed" (none ready, none lazy and not yet
 * started), the first one's failure status (LMCP_E_TRANSPORT for a server
 * that cannot be started, LMCP_E_CLOSED for one that exited, ...; the
 * message names each server and why; never LMCP_E_TIMEOUT: a handshake
 * that ran out of timeouts.ready_ms counts as LMCP_E_CLOSED);
 * LMCP_E_TIMEOUT (the message names the servers still connecting); LMCP_E_INVALID_STATE (connect not
 * called); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_host_wait_ready(lmcp_host *host, int64_t timeout_ms,
                                 char **err_out);

/* lmcp_host_servers reports each server as JSON: {"<name>": {"state":
 * "new"|"connecting"|"ready"|"restarting"|"failed"|"closed"|"disabled",
 * "enabled", "restarts", "start"? ("lazy"; "new" until its first use, and
 * again once stopped after its "idle_ms"),
 * "era"?, "protocol_version"?, "transport"?, "sandbox"? (a server with
 * "sandboxEnabled": what confines this start of it, as
 * lmcp_client_server_info reports it), "sandbox_refusals"? (the last
 * requests, at most 4, the sandbox's proxy refused it: "the sandbox refused
 * network access to HOST:PORT: RULE"), and when not ready: "last_error"?,
 * "cause"? (the first reason since it was last ready),
 * "exit_code"? or "signal"? (of the last loss), "stderr_tail"? (the lost
 * server's last stderr lines: at most 10 of at most 512 bytes, control
 * characters escaped as \xNN, its configured env and header values replaced
 * by [redacted]), "durations"? (while the host has a telemetry handler:
 * the server's own per-method call-duration histograms, {"<method>":
 * {"count", "sum_ms", "buckets"}} over lmcp_diagnostics' "bounds_ms"),
 * "summary" (one line to show a user: `server "<name>" is ready`, or for a
 * server in trouble `server "<name>" failed to start: <reason>; first cause:
 * ..; exit status N; killed by SIG..; stderr: <last 3 lines>`, the parts it
 * has), and for a "failed" server "final" (true once its report is complete:
 * its exit status or signal is in, or its transport is closed for good, as
 * for a start that could not happen; a caller that reports why waits for
 * it, a moment after the failure, rather than for any member)}}.
 * *json_out is library-allocated (free with lmcp_free);
 * *len_out (may be NULL) receives its length. Never blocks.
 * Returns LMCP_OK, LMCP_E_INVALID_HANDLE, or LMCP_E_INVALID_ARGUMENT (NULL
 * json_out). */
lmcp_status lmcp_host_servers(lmcp_host *host, char **json_out,
                              size_t *len_out, char **err_out);

/* lmcp_host_list_tools starts the lazy servers not used yet (waiting for each
 * to be ready or fail, within its timeouts.ready_ms), then returns the tools
 * of every ready server:
 * {"tools": [...], "errors"?: {"<server>": "<message>"}}. Each tool is the
 * server's tool object with "name" set to the host's name for it (tool_prefix
 * "always": <server>__<tool>; "on_collision": prefixed only when two servers
 * offer the name; "never": as given), "server", and "original_name"; names
 * keep to the characters MCP allows (others become '_') and to 128
 * characters (longer ones end with a hash); tools.allow and
 * tools.deny apply. Lists are cached per server and fetched again after
 * notifications/tools/list_changed, a restart, or (2026-07-28 era) when a
 * positive ttlMs ran out or the listen stream that carries the server's
 * list changes had a gap (a list without ttlMs is kept while that stream
 * carries them: docs/host.md, "Lists"); this call blocks the calling thread
 * while a stale list is fetched (lmcp_host_query with LMCP_QUERY_LIST_TOOLS
 * is the form that does not). *json_out is library-allocated (free with lmcp_free).
 *
 * Deferred exposure: with the host option "deferred_tools": {"always_loaded":
 * [host tool names or globs], "max_results": 1..100 [5]}, the list holds only
 * the tools always_loaded matches, then one tool of the host's own,
 * "search_tools" (input {"query": text, "limit"?: 1..100}), for an
 * application that hands the list to a model. lmcp_host_call_tool answers
 * it in the library, without a server, with the tools/call result
 * {"content": [{"type": "text", "text": <JSON>}], "structuredContent":
 * {"tools": [the best matching tools, as this list gives them]}} (a bad
 * query or limit is an "isError" result); every tool stays callable by its
 * name. A server's own tool named "search_tools" is then prefixed
 * (tool_prefix "on_collision") or a collision ("never").
 * Returns LMCP_OK; LMCP_E_INVALID_STATE (tool_prefix "never" and two servers
 * offer one name: the message names both); LMCP_E_INVALID_HANDLE;
 * LMCP_E_INVALID_ARGUMENT (NULL json_out). */
lmcp_status lmcp_host_list_tools(lmcp_host *host, char **json_out,
                                 size_t *len_out, char **err_out);

/* lmcp_host_tool_route tells which server and tool lmcp_host_call_tool
 * sends name (the host's name of a tool) to, when that is known without
 * asking a server: from the tools the last list gave (sanitised and
 * prefixed names included), else from the "<server>__" prefix of a name
 * under tool_prefix "always" or "on_collision", read against that server's
 * last list when there is one (a held tool's included: "r__echo_it" is
 * "echo it"). *json_out
 * (library-allocated, free with lmcp_free; *len_out may be NULL) receives
 * {"server", "original_name"}. A binding names a call's server and tool
 * with it rather than by splitting the name. Never blocks, starts no
 * server, runs no callback.
 * Returns LMCP_OK; LMCP_E_NOT_FOUND (only the servers' lists would tell:
 * call lmcp_host_list_tools, or the call itself); LMCP_E_INVALID_ARGUMENT
 * (NULL or empty name, NULL json_out; the name is the host's name of two
 * tools of the server: the message names both); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_host_tool_route(lmcp_host *host, const char *name,
                                 char **json_out, size_t *len_out,
                                 char **err_out);

/* lmcp_host_list_prompts and lmcp_host_list_resources are lmcp_host_list_tools
 * for {"prompts": [...]} and {"resources": [...]}: each entry gains "server";
 * names are not changed. Same statuses, without the collision error. */
lmcp_status lmcp_host_list_prompts(lmcp_host *host, char **json_out,
                                   size_t *len_out, char **err_out);
lmcp_status lmcp_host_list_resources(lmcp_host *host, char **json_out,
                                     size_t *len_out, char **err_out);

/* lmcp_host_search_tools ranks the tools lmcp_host_list_tools would give
 * without "deferred_tools" (every ready server's tools, tools.allow and
 * tools.deny applied) against query, a NUL-terminated UTF-8 free text of at
 * most 4096 bytes ("create a github issue"), with BM25F over each tool's
 * name split into words (snake_case, camelCase, kebab-case), title,
 * description, parameter names and descriptions, and its server's name.
 * options_json (options_len bytes; NULL or empty for the defaults):
 * {"limit": 1..100 [10], "servers": ["<server>", ...] [every server]}.
 * *json_out (library-allocated, free with lmcp_free; *len_out may be NULL)
 * receives {"results": [{"name", "server", "score", "tool"}, ...],
 * "errors"?: {"<server>": "<message>"}}: best first, equal scores ordered
 * by name, only tools sharing a word with the query; "name" is the host's
 * name of the tool (which lmcp_host_call_tool takes, also under
 * "deferred_tools"), "tool" the whole tool as lmcp_host_list_tools gives
 * it. The same query on the same catalogue gives the same answer. The
 * index follows the servers (list_changed, restarts, ttlMs) as the list
 * caches do; this call blocks the calling thread while a stale list is
 * fetched (lmcp_host_query with LMCP_QUERY_SEARCH_TOOLS does not), and
 * otherwise only ranks (well under a millisecond for 1,000
 * tools). No callback runs.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (NULL query or json_out, a query
 * that is empty, too long or only common words such as "the", bad options:
 * the message names the field); LMCP_E_NOT_FOUND (options.servers names no
 * server of the host); LMCP_E_INVALID_STATE (tool_prefix "never" and two
 * servers offer one name); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_host_search_tools(lmcp_host *host, const char *query,
                                   const char *options_json,
                                   size_t options_len, char **json_out,
                                   size_t *len_out, char **err_out);

/* Pinned definitions (host option "pins": {"store": {"type": "memory" |
 * "file" | "postgres" | "redis" | "app", "path"?, "url"?, "encryption"?},
 * "first_use": "trust" [default] | "hold"}; docs/host.md; {"type": "app"}:
 * the host's app request handler answers "store_load" and "store_save", see
 * docs/app-requests.md). Hosts sharing a store share the pins: an approval
 * made in one takes effect in the others within 250 ms. Every tool,
 * prompt and resource a server offers is pinned as "sha256:<hex>" of its
 * canonical JSON (the whole object as offered: annotations and _meta
 * included), its instructions apart; a server is named by its name and its
 * command, args and cwd, or its URL (never env or headers). A definition
 * that is "changed" (differs from its pin), "new" (a name never pinned on a
 * kind already pinned: a rename is new; under "first_use": "hold" also one
 * never seen) or "flagged" (carries hidden characters, even on first sight)
 * is held: not listed, not found by a search, not offered by deferred
 * loading, and a call to it (lmcp_host_call_tool, or lmcp_host_call of
 * tools/call, prompts/get, resources/read) fails at once with
 * LMCP_E_POLICY_DENIED whose message says it is held and why. Instructions
 * not approved hold every tool and prompt of their server. A pinned
 * definition no longer offered is "removed" (reported, not an error). Each
 * change is one "definition_changed" host event {"server", "kind": "tool" |
 * "prompt" | "resource" | "instructions", "name", "status", "hash"?,
 * "pinned_hash"?, "findings"}, checked when a server connects, after its
 * list_changed, and after a restart. Pins or not, what the host lists (and
 * the instructions of its "ready" event) has no hidden character: Unicode
 * tag characters outside an emoji tag sequence, bidi controls, zero-width
 * and invisible format characters (ZWJ and ZWNJ kept), C0/C1 controls other
 * than tab and newline, terminal escape sequences; a finding is {"kind":
 * "hidden_characters" | "ansi_escape", "path", "count"}. A tool's
 * description naming another server's tool is reported in lmcp_host_pins as
 * {"kind": "shadowing", "path": "description", "server", "tool"}, not held.
 *
 * lmcp_host_pins lists every ready server's lists (fetching stale ones, so
 * it may block the calling thread), then gives *json_out
 * (library-allocated, free with lmcp_free; *len_out may be NULL):
 * {"<server>": {"instructions": {..}, "tools": {"<name>": {..}},
 * "prompts": {..}, "resources": {"<uri>": {..}}, "error"?: "<pin store
 * failure>"}}, each entry {"status": "approved" | "changed" | "new" |
 * "flagged" | "removed", "hash"?, "pinned_hash"?, "findings": [..],
 * "held"?: true, "reason"?, "offered"?, "pinned"?} ("offered" and "pinned":
 * the two definitions, hidden characters removed, for a review). No
 * callback runs. Any thread.
 * Returns LMCP_OK; LMCP_E_INVALID_STATE (the host has no "pins");
 * LMCP_E_INVALID_HANDLE; LMCP_E_INVALID_ARGUMENT (NULL json_out). */
lmcp_status lmcp_host_pins(lmcp_host *host, char **json_out, size_t *len_out,
                           char **err_out);

/* lmcp_host_approve pins exactly the hash shown for one definition:
 * approval_json (approval_len bytes, copied) is {"server", "kind": "tool"
 * [default] | "prompt" | "resource" | "instructions", "name" (not for
 * instructions; a resource's URI), "hash": "sha256:<hex>" as lmcp_host_pins
 * or a definition_changed event gave it}. The pin file is updated under its
 * lock; the definition is callable when this returns, and listed again
 * (with a list_changed event) once its list is fetched. Any thread; no
 * callback runs during the call.
 * Returns LMCP_OK; LMCP_E_INVALID_STATE (the host has no "pins", or the
 * server does not offer that definition with that hash now: an approval is
 * bound to what was shown); LMCP_E_NOT_FOUND (no such server);
 * LMCP_E_INVALID_ARGUMENT (a bad approval: the message names the field);
 * LMCP_E_INTERNAL (the pin file could not be written: the message names
 * it); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_host_approve(lmcp_host *host, const char *approval_json,
                              size_t approval_len, char **err_out);

/* lmcp_host_call_tool calls a tool by the name lmcp_host_list_tools gives it
 * (a <server>__<tool> name routes even before any listing, and starts that
 * server if it is lazy: the call then waits for its handshake; its <tool>
 * is read against the server's tools once they are known, so "r__echo_it"
 * calls, or is refused as, the server's "echo it"). args_json
 * (args_len bytes) is the arguments object or absent; options_json as for
 * lmcp_client_call, plus "fail_if_restarting": <bool> [false]: while the
 * server restarts, fail at once with LMCP_E_INVALID_STATE instead of waiting
 * up to its timeouts.ready_ms. On LMCP_OK *call_id_out (may be NULL) receives
 * a host-wide call id and done runs exactly once on a library thread, as for
 * lmcp_client_call; a call in flight when its server crashes completes with
 * LMCP_E_CLOSED and is never replayed. Under "deferred_tools" the name
 * "search_tools" is the host's own tool (see lmcp_host_list_tools): its done
 * also runs on a library thread, and lmcp_host_cancel answers
 * LMCP_E_NOT_FOUND for it (it waits for no server).
 * Returns LMCP_OK; LMCP_E_NOT_FOUND (no server offers the name);
 * LMCP_E_POLICY_DENIED (tools.allow/tools.deny exclude it, or it is held:
 * see lmcp_host_pins);
 * LMCP_E_INVALID_ARGUMENT (empty name, ambiguous unprefixed name, the
 * host's name of two tools of one server, arguments not an object, bad
 * options, NULL done); LMCP_E_INVALID_STATE (server
 * disabled, failed or closed); the other statuses of lmcp_client_call. */
lmcp_status lmcp_host_call_tool(lmcp_host *host, const char *name,
                                const char *args_json, size_t args_len,
                                const char *options_json, size_t options_len,
                                lmcp_done_cb done, void *user_data,
                                lmcp_call_id *call_id_out, char **err_out);

/* lmcp_host_call_tool_sync is lmcp_host_call_tool that blocks the calling
 * thread until the call completes; *result_out (free with lmcp_free) and
 * *result_len_out (may be NULL) as for lmcp_client_call_sync. */
lmcp_status lmcp_host_call_tool_sync(lmcp_host *host, const char *name,
                                     const char *args_json, size_t args_len,
                                     const char *options_json,
                                     size_t options_len, char **result_out,
                                     size_t *result_len_out, char **err_out);

/* lmcp_host_call_tool_begin is lmcp_host_call_tool whose outcome goes to
 * *call, as lmcp_client_call_begin's does. */
lmcp_status lmcp_host_call_tool_begin(lmcp_host *host, const char *name,
                                      const char *args_json, size_t args_len,
                                      const char *options_json,
                                      size_t options_len, lmcp_sync_call *call,
                                      lmcp_call_id *call_id_out,
                                      char **err_out);

/* lmcp_host_call sends any request to the named server, as lmcp_client_call
 * (same arguments, options, callback rules and statuses), with a host-wide
 * call id. Also returns LMCP_E_NOT_FOUND (no such server) and
 * LMCP_E_INVALID_STATE (the server is disabled). */
lmcp_status lmcp_host_call(lmcp_host *host, const char *server,
                           const char *method, const char *params_json,
                           size_t params_len, const char *options_json,
                           size_t options_len, lmcp_done_cb done,
                           void *user_data, lmcp_call_id *call_id_out,
                           char **err_out);

/* lmcp_host_call_sync is lmcp_host_call that blocks until completion, as
 * lmcp_client_call_sync. */
lmcp_status lmcp_host_call_sync(lmcp_host *host, const char *server,
                                const char *method, const char *params_json,
                                size_t params_len, const char *options_json,
                                size_t options_len, char **result_out,
                                size_t *result_len_out, char **err_out);

/* lmcp_host_call_begin is lmcp_host_call whose outcome goes to *call, as
 * lmcp_client_call_begin's does. */
lmcp_status lmcp_host_call_begin(lmcp_host *host, const char *server,
                                 const char *method, const char *params_json,
                                 size_t params_len, const char *options_json,
                                 size_t options_len, lmcp_sync_call *call,
                                 lmcp_call_id *call_id_out, char **err_out);

/* lmcp_host_call_queued and lmcp_host_call_tool_queued are lmcp_host_call
 * and lmcp_host_call_tool whose completion goes to queue (see QUEUE) instead
 * of a done callback, as lmcp_client_call_queued is lmcp_client_call's: same
 * arguments, options, host-wide call id (lmcp_host_cancel takes it) and
 * statuses, and they never block either. On LMCP_OK exactly one completion
 * with this tag and *call_id_out's id (may be NULL) is queued when the call
 * finishes; it may already be there when this returns. It is queued where a
 * done callback of the host would run: on the host's delivery thread, after
 * the call's "progress" events' callbacks have returned. On any other status
 * nothing is queued. When lmcp_host_free returns, the completion of every
 * call the host had accepted is queued (LMCP_E_CANCELLED for those still
 * pending). If the queue is freed first, the completion is dropped by the
 * library. Queueing never calls application code.
 * Returns the statuses of lmcp_host_call / lmcp_host_call_tool (without
 * "NULL done"), and LMCP_E_INVALID_HANDLE when the host or the queue is
 * NULL, unknown or freed (the message says which). */
lmcp_status lmcp_host_call_queued(lmcp_host *host, const char *server,
                                  const char *method, const char *params_json,
                                  size_t params_len, const char *options_json,
                                  size_t options_len, lmcp_queue *queue,
                                  uint64_t tag, lmcp_call_id *call_id_out,
                                  char **err_out);
lmcp_status lmcp_host_call_tool_queued(lmcp_host *host, const char *name,
                                       const char *args_json, size_t args_len,
                                       const char *options_json,
                                       size_t options_len, lmcp_queue *queue,
                                       uint64_t tag, lmcp_call_id *call_id_out,
                                       char **err_out);

/* The host's queries: the questions lmcp_host_list_tools,
 * lmcp_host_list_prompts, lmcp_host_list_resources and
 * lmcp_host_search_tools answer, asked without blocking. Never renumbered. */
typedef int32_t lmcp_query;
#define LMCP_QUERY_LIST_TOOLS 0     /* lmcp_host_list_tools; no args */
#define LMCP_QUERY_LIST_PROMPTS 1   /* lmcp_host_list_prompts; no args */
#define LMCP_QUERY_LIST_RESOURCES 2 /* lmcp_host_list_resources; no args */
#define LMCP_QUERY_SEARCH_TOOLS 3   /* lmcp_host_search_tools; args {"query", "limit"?, "servers"?} */

/* lmcp_host_query asks one of the host's queries and returns at once: the
 * non-blocking form of lmcp_host_list_tools, lmcp_host_list_prompts,
 * lmcp_host_list_resources and lmcp_host_search_tools, which block the
 * calling thread while a stale list is fetched (and while lazy servers
 * start). args_json (args_len bytes; NULL or 0: none) is the query's
 * arguments: none for the lists; for LMCP_QUERY_SEARCH_TOOLS the object
 * {"query": text} with lmcp_host_search_tools' options beside it
 * ({"query": "create an issue", "limit": 5}). The library copies it
 * before returning. On LMCP_OK *call_id_out (may be NULL) receives a
 * host-wide call id and done runs exactly once, as for lmcp_host_call: on
 * the host's delivery thread, never inside this call, in order with the
 * host's events, with LMCP_OK and the JSON the blocking form returns
 * (json borrowed until done returns), or with the blocking form's error
 * status and error object, or LMCP_E_CANCELLED once lmcp_host_free was
 * called (lmcp_host_free returns only after done ran). A query waits for
 * no server call of its own, only for the lists the host shares between
 * callers: lmcp_host_cancel answers LMCP_E_NOT_FOUND for it, and a caller
 * that stops waiting simply ignores its done.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (unknown query, arguments given
 * to a list, bad search arguments as lmcp_host_search_tools names them,
 * NULL done); LMCP_E_NOT_FOUND (the search's "servers" names no server of
 * the host); LMCP_E_INVALID_HANDLE; LMCP_E_INTERNAL (a poisoned host). On
 * any status but LMCP_OK done never runs. */
lmcp_status lmcp_host_query(lmcp_host *host, lmcp_query query,
                            const char *args_json, size_t args_len,
                            lmcp_done_cb done, void *user_data,
                            lmcp_call_id *call_id_out, char **err_out);

/* lmcp_host_query_queued is lmcp_host_query whose completion goes to queue
 * (see QUEUE) with tag, as lmcp_host_call_queued is lmcp_host_call's: same
 * queries, arguments, call id and statuses (without "NULL done"), plus
 * LMCP_E_INVALID_HANDLE when the queue is NULL, unknown or freed. The
 * completion is queued on the host's delivery thread; when lmcp_host_free
 * returns it is in the queue. Never blocks, never calls application code. */
lmcp_status lmcp_host_query_queued(lmcp_host *host, lmcp_query query,
                                   const char *args_json, size_t args_len,
                                   lmcp_queue *queue, uint64_t tag,
                                   lmcp_call_id *call_id_out, char **err_out);

/* lmcp_host_cancel cancels a call made through the host, as
 * lmcp_client_cancel (only ids lmcp_host_call returned: a blocking call's
 * is not reachable). Returns LMCP_OK, LMCP_E_NOT_FOUND, or
 * LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_host_cancel(lmcp_host *host, lmcp_call_id call_id);

/* lmcp_host_respond answers a request the app-request handler received, as
 * lmcp_client_respond. Returns LMCP_OK; LMCP_E_NOT_FOUND (unknown, already
 * answered, expired, or its server restarted meanwhile);
 * LMCP_E_INVALID_ARGUMENT; LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_host_respond(lmcp_host *host, lmcp_request_id request_id,
                              lmcp_status status, const char *json, size_t len,
                              char **err_out);

/* lmcp_host_close closes every server in parallel, blocking up to timeout_ms
 * (negative: each client's own bound), as lmcp_client_close: pending calls
 * complete with LMCP_E_CLOSED, every server process is reaped, no server is
 * restarted. Idempotent. Returns LMCP_OK; LMCP_E_TIMEOUT (naming the servers
 * whose teardown goes on in the background); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_host_close(lmcp_host *host, int64_t timeout_ms,
                            char **err_out);

/* lmcp_host_free releases the handle, as lmcp_client_free a client's. It
 * never waits for a server: every server's client is freed and its
 * connection torn down (subprocess reaped) in the background. It may race
 * any other call on the handle (see the threading note above); calls after
 * it return LMCP_E_INVALID_HANDLE.
 *
 * When it returns, no callback of the host is running or will start: every
 * pending call's done has run, with LMCP_E_CANCELLED (on a library thread,
 * or on this thread when it is the host's delivery thread); every event and
 * app-request callback that had started has returned, and no other will
 * start; every registration's destroy has run; no library goroutine of the
 * host is left (see lmcp_diagnostics). The application may release
 * everything its callbacks use. So free waits for application code only:
 * the host's callbacks already running on other threads, and the cancelled
 * completions it delivers. A callback that blocks therefore delays free, and
 * two callbacks that free each other's hosts at the same time deadlock.
 *
 * Called from inside one of the host's own callbacks (detected per thread),
 * free does not wait for those callbacks: they finish after it returns, and
 * the destroy of a registration whose callback is among them runs when that
 * callback returns. Called from another host's or a client's callback, it
 * waits as from any thread.
 *
 * Safe from finalizers and BEAM resource destructors (they wait only as
 * described above). NULL is a no-op; freeing a freed or unknown handle is
 * harmless and returns at once; handle values are never reused. */
void lmcp_host_free(lmcp_host *host);

/* ---- The gateway: a host served as one MCP server -------------------------
 *
 * An lmcp_server serves an lmcp_host to MCP clients ("front" clients: Claude
 * Desktop, VS Code, an agent framework) over stdio or Streamable HTTP, in
 * both eras: the initialize era (2024-11-05 ... 2025-11-25, negotiated) and
 * 2026-07-28 (server/discover, stateless requests with _meta,
 * input_required). It lists every ready server's tools (the host's names,
 * each at most 64 characters, deterministic), prompts, resources and
 * resource templates (a URI two servers share is exposed as "server+uri"),
 * answers completions and logging/setLevel, and relays to the front session
 * whose call caused them a server's sampling, elicitation (form and URL)
 * and roots requests, its progress and log messages; the front's
 * cancellation reaches the server's own request. Pins, hidden characters,
 * tool filters and deferred tools hold as for an application. The front's
 * token is never passed to a server.
 *
 * The server takes the host's event and app-request handlers for as long as
 * it exists (lmcp_server_free gives them up; install the application's own
 * again after it). For servers to be allowed to ask for sampling,
 * elicitation and roots, create the host with handlers for them, e.g.
 * "defaults": {"handlers": {"sampling": {}, "elicitation": {"form": true,
 * "url": true}, "roots": {}}}: the gateway answers each from the front
 * client, or refuses it at once with a JSON-RPC error naming the missing
 * front capability.
 *
 * options_json (NULL or empty: every default), unknown members an error:
 *   {"name": "lemonmcp",                  serverInfo.name
 *    "instructions": "...",               initialize's instructions
 *    "auth": {"bearer_env": "NAME"}       HTTP: a static bearer token read from
 *                                         the environment variable NAME (at
 *                                         least 16 characters) when the server
 *                                         is created
 *          | {"jwks_url": URL, "issuer": ISS, "audience": AUD}
 *                                         HTTP: an OAuth 2.1 resource server; a
 *                                         JWT (RS256/ES256) signed by a key of
 *                                         the JWKS, iss = ISS, aud holds AUD
 *                                         (this gateway's URL), within exp/nbf;
 *                                         RFC 9728 metadata at
 *                                         /.well-known/oauth-protected-resource;
 *                                         401 carries WWW-Authenticate with
 *                                         resource_metadata
 *    "allowed_origins": ["https://app.example"]
 *                                         Origins allowed besides loopback ones
 *                                         (any other Origin gets 403)
 *    "allow_non_loopback": false,         serve_http on a non-loopback address
 *                                         (also requires "auth")
 *    "session_idle_timeout_ms": 1800000,  a front session unused this long is
 *                                         closed (and a 2026-07-28 call parked
 *                                         waiting for its retry is cancelled)
 *    "max_sessions": 1024,                open front sessions; past it HTTP
 *                                         initialize gets 503
 *    "max_body_bytes": 4194304,           one message (a POST body, a stdio
 *                                         line); a longer one gets a JSON-RPC
 *                                         error (HTTP 413)
 *    "stop_timeout_ms": 10000,            lmcp_server_stop's bound when its
 *                                         timeout is negative
 *    "resume_grace_ms": 30000}            HTTP: how long a call whose SSE stream
 *                                         dropped waits for the front to resume
 *                                         it (Last-Event-ID) before it is
 *                                         cancelled upstream
 *
 * Threads: every function may be called from any thread. A server serves
 * once (one serve_fds or serve_http per handle). Free the server before its
 * host; a host freed first leaves a server whose every call fails. */
typedef struct lmcp_server lmcp_server;

/* lmcp_server_new creates a server over host with options_json (len bytes).
 * Nothing is served until serve_fds or serve_http. On success *server_out
 * owns a handle the caller frees with lmcp_server_free. Returns LMCP_OK;
 * LMCP_E_INVALID_ARGUMENT (server_out NULL, options invalid: the message
 * names the field; bearer_env unset or too short); LMCP_E_INVALID_HANDLE
 * (host NULL, unknown or freed). */
lmcp_status lmcp_server_new(lmcp_host *host, const char *options_json,
                            size_t len, lmcp_server **server_out,
                            char **err_out);

/* lmcp_server_set_event_handler registers the application's ear on its
 * host while the server holds the host's event handler: cb gets every host
 * event (the kinds and payloads of lmcp_host_set_event_handler: its
 * servers' "log" lines, "ready", "failed", ...) after the gateway's own use
 * of it, on the host's delivery thread, one at a time. NULL cb removes it.
 * destroy runs once no callback of it can run any more: when the server is
 * freed (also for a handler replaced meanwhile).
 * Returns LMCP_OK or LMCP_E_INVALID_HANDLE (destroy still runs). */
lmcp_status lmcp_server_set_event_handler(lmcp_server *server,
                                          lmcp_event_cb cb, void *user_data,
                                          lmcp_destroy_cb destroy,
                                          char **err_out);

/* lmcp_server_serve_fds starts serving one front session over a pair of
 * descriptors carrying newline-delimited JSON-RPC (the stdio binding): the
 * front writes in_fd, reads out_fd. It returns at once. The server works on
 * duplicates (the caller keeps and closes its own descriptors), set
 * non-blocking (which the open file description shares). Serving ends when
 * the front closes its end of in_fd (calls still running are cancelled
 * upstream) or on lmcp_server_stop; lmcp_server_wait waits for it.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (a descriptor negative or not
 * open); LMCP_E_INVALID_STATE (already serving); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_server_serve_fds(lmcp_server *server, int in_fd, int out_fd,
                                  char **err_out);

/* lmcp_server_serve_http serves Streamable HTTP at /mcp on addr
 * ("host:port"; port 0 picks a free one; an empty host is 127.0.0.1) and
 * returns once listening, with *url_out (when not NULL) the endpoint, e.g.
 * "http://127.0.0.1:41234/mcp", freed with lmcp_free. POST answers with JSON,
 * or with an SSE stream for calls whose server may send progress or
 * requests first; GET opens the session's stream; Mcp-Session-Id names a
 * session; DELETE ends it; Last-Event-ID resumes a stream (a call whose
 * stream dropped keeps running resume_grace_ms for a resumption, then is
 * cancelled upstream; in 2026-07-28 a dropped stream cancels at once).
 * Requests whose Host is not loopback (on a loopback address) get 421,
 * a foreign Origin 403, a missing or refused token 401.
 * Returns LMCP_OK; LMCP_E_INVALID_ARGUMENT (addr NULL or not host:port);
 * LMCP_E_POLICY_DENIED (a non-loopback addr without allow_non_loopback and
 * auth); LMCP_E_TRANSPORT (cannot listen: the message says why);
 * LMCP_E_INVALID_STATE (already serving); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_server_serve_http(lmcp_server *server, const char *addr,
                                   char **url_out, char **err_out);

/* lmcp_server_wait blocks until serving has ended (the stdio front closed
 * its input, or lmcp_server_stop), at most timeout_ms (negative: no limit).
 * Returns LMCP_OK (ended cleanly); LMCP_E_TIMEOUT (still serving);
 * LMCP_E_TRANSPORT (the HTTP front failed); LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_server_wait(lmcp_server *server, int64_t timeout_ms,
                             char **err_out);

/* lmcp_server_stop ends serving gracefully: no new message is taken (the
 * listener closes), requests under way get up to timeout_ms (negative:
 * options' stop_timeout_ms) to finish, then every session closes and the
 * calls left are cancelled upstream. A server never served stops at once.
 * Idempotent. Returns LMCP_OK once serving has ended; LMCP_E_TIMEOUT when
 * it had not ended within the bound; LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_server_stop(lmcp_server *server, int64_t timeout_ms,
                             char **err_out);

/* lmcp_server_free stops the server (as lmcp_server_stop with the options'
 * stop_timeout_ms, so it may block that long) and gives the host's handlers
 * back (none installed: the application installs its own again). NULL is a
 * no-op; freeing a freed or unknown handle is harmless; handle values are
 * never reused. */
void lmcp_server_free(lmcp_server *server);

#ifdef __cplusplus
}
#endif

#endif /* LEMONMCP_H */
