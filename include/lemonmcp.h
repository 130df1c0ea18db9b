/*
 * lemonmcp.h — the public C interface of liblemonmcp, a Model Context
 * Protocol (MCP) client library.
 *
 * This header is the contract. It is C99 and C++ compatible and is the only
 * header a host needs. Everything below states who owns what, which thread
 * calls back, and which status codes a function returns.
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
 *        {"status": <int>, "message": "<text>", "code": <int>?, "data": <any>?}
 *    ("code" and "data" are the server's JSON-RPC error fields when the status
 *    is LMCP_E_PROTOCOL). Free it with lmcp_free(). On success *err_out is set
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
 *
 * THREADS
 *
 *  - Every function may be called from any thread, concurrently, on the same
 *    client, except lmcp_client_free(), which must not race with other calls
 *    on the same handle.
 *  - Callbacks run on threads owned by the library, never on the caller's
 *    thread inside the call that started the operation, and never while a
 *    library lock is held. Completion (lmcp_done_cb) and event callbacks of
 *    one client are delivered one at a time, in order; host-request callbacks
 *    may run concurrently with them. Callbacks should return promptly.
 *  - A callback may call any lmcp_ function, except lmcp_client_free() on the
 *    client that invoked it.
 *
 * PROCESS RULES FOR HOSTS
 *
 *  - The library embeds a Go runtime: load at most one Go c-shared library per
 *    process, do not fork() after loading it (Python multiprocessing must use
 *    "spawn" or "forkserver"), use glibc, and never unload it (it is linked
 *    NODELETE).
 *  - Loading the library starts nothing: no thread of the library's own, no
 *    child process, no network activity happens before lmcp_client_new().
 *
 * CONFIGURATION (the JSON object given to lmcp_client_new; unknown fields are
 * an error that names the field; defaults in brackets)
 *
 *   transport      (required) one of
 *      {"type":"stdio", "command": "<exe>" (required; looked up on PATH when it
 *         has no '/'), "args": [..] [], "env": {"K":"V"} {},
 *         "env_inherit": "minimal"|"all" ["minimal": PATH, HOME, USER, LOGNAME,
 *         SHELL, LANG, LC_ALL, LC_CTYPE, TERM, TMPDIR, TZ], "cwd": ".." [the
 *         host's], "stderr": "capture"|"merge"|"discard" ["capture": drained,
 *         delivered as log events, last lines kept for the closed event]}
 *      {"type":"streamable_http"|"sse"|"http", "url": .., "headers": {..}}
 *         (reported by lmcp_features when built in; otherwise
 *         LMCP_E_UNSUPPORTED)
 *   client_info    {"name" ["lemonmcp"], "version" [library version],
 *                   "title"?, "description"?, "website_url"?}
 *   protocol       {"mode": "legacy"|"auto"|"modern" ["legacy"], "versions":
 *                   [..] [every supported revision, both eras],
 *                   "result_cache" [true], "listen" [true], "tasks" [false]}
 *                   (the 2026-07-28 members: docs/modern.md).
 *                   "legacy": the initialize handshake (2025-11-25 and
 *                   earlier); the newest listed legacy version is offered, an
 *                   older supported one the server answers with is accepted,
 *                   any other answer fails the handshake.
 *                   "modern": 2026-07-28 only: no initialize, no session;
 *                   connect probes with server/discover (bounded by
 *                   ready_ms) and a server that does not answer it fails the
 *                   handshake.
 *                   "auto" (dual-era): the server/discover probe,
 *                   bounded by ready_ms; unanswered after min(1000,
 *                   ready_ms/3) ms, initialize goes out alongside it and the
 *                   first handshake to succeed decides; a DiscoverResult
 *                   means 2026-07-28;
 *                   error -32022 with data.supported picks a common version
 *                   and probes again (no fallback; a common legacy version
 *                   only is spoken through initialize); any other error, an
 *                   HTTP status without a modern JSON-RPC error body, or no
 *                   answer means a legacy server: initialize follows (and for
 *                   "http" the legacy HTTP+SSE fallback after it). The era
 *                   found is kept for the life of the client.
 *                   versions may list both eras; each era's newest listed is
 *                   offered; "legacy" needs a legacy one, "modern" a modern
 *                   one.
 *                   In the 2026-07-28 era every request's params._meta
 *                   carries io.modelcontextprotocol/protocolVersion,
 *                   /clientCapabilities (from handlers and sampling_policy)
 *                   and /clientInfo (these win over the host's _meta, which
 *                   is merged in); over HTTP every POST carries
 *                   MCP-Protocol-Version, Mcp-Method, Mcp-Name (tools/call,
 *                   prompts/get, resources/read) and the Mcp-Param-* headers
 *                   of the tool's x-mcp-header parameters (values that are
 *                   not plain visible ASCII are sent =?base64?..?=); tools
 *                   whose x-mcp-header annotations are invalid are dropped
 *                   from tools/list results, with a "log" warning. ping,
 *                   logging/setLevel, resources/subscribe and unsubscribe,
 *                   initialize and notifications/roots/list_changed are
 *                   refused locally with LMCP_E_UNSUPPORTED;
 *                   subscriptions/listen is not supported by this build
 *                   (LMCP_E_UNSUPPORTED). Results with resultType
 *                   "input_required" (tools/call, resources/read,
 *                   prompts/get) are answered by the library: every input
 *                   request becomes the same host request a legacy server
 *                   request would ("elicitation", "roots", "review",
 *                   "sampling"; validated and policed the same way), then
 *                   the call is retried with a new id, its original params,
 *                   inputResponses and the requestState echoed exactly; at
 *                   most 10 rounds (then LMCP_E_PROTOCOL), all within the
 *                   call's timeout. A refused input ends the call: the
 *                   sampling policy's denial with LMCP_E_POLICY_DENIED (data:
 *                   the denial), a host error with the host's status, an
 *                   invalid host answer with LMCP_E_INVALID_ARGUMENT, a
 *                   malformed or undeclared input request with
 *                   LMCP_E_PROTOCOL. Any other resultType but "complete" is
 *                   LMCP_E_PROTOCOL. ttlMs and cacheScope are passed through
 *                   untouched (no caching).
 *   timeouts       {"ready_ms" [30000], "call_ms" [120000] (per call,
 *                   0 = no limit), "max_total_ms" [0: none, or 10 x call_ms
 *                   when reset_timeout_on_progress is on],
 *                   "reset_timeout_on_progress" [false],
 *                   "host_request_ms" [600000], "close_grace_ms" [2000]}
 *   limits         {"max_message_bytes" [16777216], "max_pages" [1000]}
 *   handlers       which host requests the host answers (capabilities are
 *                   advertised only for these): {"roots": {"list_changed":
 *                   bool [false]}?, "sampling": {"tools": bool [false],
 *                   "context": bool [false]}?, "elicitation": {"form": bool
 *                   [true], "url": bool [false]}?, "authorization": {}?
 *                   (the host runs the browser step of the authorization
 *                   code flow: "authorize" host requests; HTTP only)}
 *   sampling_policy the library's own answer to sampling requests:
 *                   {"mode": "deny"|"model"|"reviewed_model" ["deny"],
 *                    "max_tokens" [1024], "allowed_models": [..] [any],
 *                    "max_messages" [0: no bound], "max_text_chars" [0: no
 *                    bound; message text plus system prompt, in Unicode code
 *                    points]}. Sampling is advertised whenever a policy or
 *                   handlers.sampling is set, even in "deny" mode (the server
 *                   then gets a structured refusal). Order: a redacted
 *                   summary is built; the local bounds are checked (a request
 *                   over a bound is refused before anyone sees it); in
 *                   "reviewed_model" the host gets a "review" request with
 *                   the summary only; then (modes "model" and
 *                   "reviewed_model") the host's "sampling" request — the
 *                   delegate — gets the raw params with the same summary.
 *                   "deny" refuses everything. Without a policy,
 *                   handlers.sampling sends every valid request straight to
 *                   the delegate.
 *   auth           OAuth 2.1 for the HTTP transports (ignored by none: an
 *                   "auth" object with a stdio transport is an error). Every
 *                   field is optional; without "auth" a 401 still runs
 *                   discovery and fails with LMCP_E_AUTH_REQUIRED whose
 *                   "data" is the discovered metadata (resource,
 *                   authorization_servers, resource_metadata_url,
 *                   www_authenticate, scope?, error?, error_description?,
 *                   authorization_server_metadata: [{issuer, metadata_url,
 *                   authorization_endpoint, token_endpoint,
 *                   registration_endpoint?, ..}]) and never a token.
 *                   {"client_id", "client_secret": pre-registered
 *                      credentials (used before a Client ID Metadata
 *                      Document, then dynamic registration),
 *                    "client_issuer": the issuer of the authorization server
 *                      client_id is registered with; another server found by
 *                      discovery is refused rather than shown the
 *                      credentials [any],
 *                    "token_auth_method": "client_secret_basic" |
 *                      "client_secret_post" | "none" | "private_key_jwt"
 *                      [chosen from the registration and the server's
 *                      metadata],
 *                    "client_metadata_url": https URL of the client's
 *                      metadata document, used as client_id where the
 *                      authorization server supports it,
 *                    "client_name" [client_info.name],
 *                    "scopes": [..]: requested when the server's challenge
 *                      names none [the server's scopes_supported],
 *                    "redirect_uri": loopback http or https (required by
 *                      the authorization code flow),
 *                    "flow": "auto" | "client_credentials" |
 *                      "authorization_code" | "jwt_bearer" ["auto": the
 *                      first of jwt_bearer (when "assertion" or
 *                      "token_exchange" is set), authorization code (when
 *                      handlers.authorization is set), client credentials
 *                      (when a secret or key is configured) that the
 *                      authorization server's grant_types_supported lists
 *                      (when it publishes one)]; a flow whose grant the
 *                      server does not list fails before anything is sent
 *                      (LMCP_E_AUTH_REQUIRED, data.unsupported_grant_type),
 *                      and a refused jwt-bearer grant is not retried with
 *                      another grant,
 *                    "assertion": a JWT for the RFC 7523 jwt-bearer grant
 *                      (workload identity federation, SEP-1933: a token
 *                      from the platform's identity provider whose audience
 *                      is the authorization server; a secret, never
 *                      echoed),
 *                    "token_exchange": enterprise-managed authorization
 *                      (SEP-990): on every grant the library exchanges
 *                      subject_token at the enterprise IdP (RFC 8693) for
 *                      an ID-JAG and presents it with the jwt-bearer grant,
 *                      with the client credentials above, at the MCP
 *                      server's authorization server. Not with
 *                      "assertion". {"token_endpoint": the IdP's token
 *                      endpoint (https, or http on loopback),
 *                      "subject_token": the user's ID token (a secret),
 *                      "subject_token_type"
 *                      ["urn:ietf:params:oauth:token-type:id_token"],
 *                      "requested_token_type"
 *                      ["urn:ietf:params:oauth:token-type:id-jag"],
 *                      "audience" [the discovered authorization server's
 *                      issuer], "resource" [the MCP server's resource],
 *                      "scopes": [..] [the grant's scopes], "client_id",
 *                      "client_secret": the client at the IdP,
 *                      "token_auth_method": "client_secret_basic" |
 *                      "client_secret_post" | "none" [basic with a secret,
 *                      else none]},
 *                    "dpop": false | true | {"alg"?, "key_pem"?} [false]:
 *                      DPoP (RFC 9449, SEP-1932). Every token request
 *                      carries a proof; a token issued with token_type DPoP
 *                      is sent as "Authorization: DPoP" with a fresh proof
 *                      (htm, htu, iat, jti, ath, nonce) on every request;
 *                      a use_dpop_nonce answer of the authorization server
 *                      or the MCP server is retried once with its
 *                      DPoP-Nonce, which is then remembered. true: an
 *                      ephemeral ES256 key per client (stored DPoP tokens
 *                      are not reused after a restart); "alg": ES256 |
 *                      ES384 | ES512 | RS256 | RS384 | RS512 | PS256 |
 *                      PS384 | PS512 | EdDSA [ES256, or the key's];
 *                      "key_pem": a PKCS#8, PKCS#1 or SEC 1 key to keep
 *                      (a secret). A server that ignores DPoP issues a
 *                      Bearer token, used as such.
 *                    "refresh_token": one the host already holds,
 *                    "private_key_jwt": {"key_pem", "kid"?, "alg"?},
 *                    "token_store": "memory" | "host" ["memory": tokens
 *                      live in the process only; "host": "token_load" and
 *                      "token_save" host requests; a DPoP-bound token is
 *                      saved with token_type "DPoP"],
 *                    "authorization_timeout_ms" [300000],
 *                    "max_step_ups" [2]: insufficient_scope
 *                      re-authorizations per request,
 *                    "allow_insecure_http" [false]: allow http:// auth
 *                      servers off loopback (development only)}
 *                   After a 401 the library refreshes first (single-flight:
 *                   parallel 401s cause one refresh), then runs the flow, and
 *                   retries the request once. timeouts.ready_ms bounds the
 *                   handshake including an interactive authorization: raise
 *                   it for interactive flows.
 *   capabilities   {"experimental": {..}}: static capabilities; roots,
 *                   sampling and elicitation cannot be declared here.
 *   result_format  "json" ["json"] | "etf": every payload the client hands
 *                   the host — call results and error objects (callbacks and
 *                   lmcp_client_call_sync), events, host requests,
 *                   lmcp_client_server_info — is Erlang external term format
 *                   (version 131: objects as maps with binary keys, arrays
 *                   as lists, strings as binaries, null as the atom nil)
 *                   instead of JSON. err_out of lmcp_client_new and the
 *                   answers a host gives stay JSON.
 *
 * EVENTS (lmcp_event_cb kinds; payload is a JSON object)
 *
 *   "ready"         {"server": <server info, as lmcp_client_server_info>}
 *   "failed"        <error object>: the handshake failed; the client is now
 *                   in LMCP_STATE_FAILED.
 *   "closed"        {"status": <int>, "reason": "..", "requested": bool,
 *                    "exit_code": <int>?, "signal": ".."?,
 *                    "stderr_tail": [".."]?}
 *   "notification"  {"method": "..", "params": {..}?}: every server
 *                   notification except progress and cancellation.
 *   "progress"      {"call_id": <int>, "progress": <num>, "total": <num>?,
 *                    "message": ".."?}
 *   "sampling_denied" {"denial": {"reason", "detail_hash"?, "request":
 *                    <summary>}, "server": <serverInfo>}: the sampling policy
 *                   refused a request (reasons: sampling_disabled,
 *                   max_tokens_exceeded, model_not_allowed, too_many_messages,
 *                   text_too_long, review_rejected, review_failed,
 *                   review_timeout, invalid_review_result). The server got
 *                   JSON-RPC error -1 with the same denial as data.
 *   "log"           {"level": "debug"|"info"|"warning"|"error",
 *                    "source": "stderr"|"stdout"|"transport"|"library",
 *                    "message": ".."}: stderr lines, stdout lines that are not
 *                   JSON-RPC, and the library's own warnings. When the host
 *                   falls behind, excess log events are dropped and counted.
 *
 * HOST REQUESTS (lmcp_host_request_cb kinds; the server asks, the host
 * answers with lmcp_client_respond)
 *
 *   In the 2026-07-28 era these requests come from input_required results
 *   (see "protocol"), and their payloads add "call_id" (the call waiting
 *   for the input) and "input_key" (the server's key for it); an open one
 *   is withdrawn when its call ends (a late answer gets LMCP_E_NOT_FOUND).
 *
 *   "roots"         {"method":"roots/list", "params": {..}}
 *                   answer {"roots": [{"uri": "file://..", "name"?}]}
 *   "sampling"      {"method":"sampling/createMessage", "params": {..},
 *                    "summary": <summary>}
 *                   answer {"role":"assistant", "content": {..}|[..],
 *                    "model": "..", "stopReason"?}
 *   "review"        {"summary": <summary>, "server": <serverInfo>} — never
 *                   any text of the request
 *                   answer {"approved": true} or {"approved": false,
 *                    "reason"?: ".."} (the reason is only ever hashed)
 *   "elicitation"   {"method":"elicitation/create", "params": {..},
 *                    "mode": "form"|"url"}
 *                   answer {"action": "accept"|"decline"|"cancel",
 *                    "content"?: {..}}; in form mode schema defaults fill
 *                   fields the host leaves out and the content is checked
 *                   against the requested schema; in url mode the library
 *                   never fetches the URL.
 *
 *   "authorize"     {"authorization_url", "authorization_endpoint",
 *                    "issuer", "client_id", "redirect_uri", "scope"?,
 *                    "resource", "state", "code_challenge",
 *                    "code_challenge_method": "S256", "code_verifier"}: the
 *                   library's own request (handlers.authorization), not the
 *                   server's. Open authorization_url (already checked: https,
 *                   or http on loopback) in a browser, never through a shell.
 *                   answer {"redirect_url": "<where the server redirected,
 *                    query included>"} or {"code", "state", "iss"?} or
 *                    {"error", "error_description"?, "state", "iss"?}; the
 *                   state is always checked and iss as RFC 9207 says; an
 *                   error status or a bad answer fails the authorization
 *                   (LMCP_E_AUTH_REQUIRED). Bounded by
 *                   auth.authorization_timeout_ms.
 *   "token_load"    {"resource"} (auth.token_store "host"; once, before the
 *                   first request) answer {} when nothing is stored, or the
 *                   record "token_save" gave.
 *   "token_save"    {"access_token", "token_type", "refresh_token"?,
 *                    "expires_at"? (absolute, Unix ms), "scope"?, "issuer",
 *                    "resource", "client_id"?, "client_secret"? (only when
 *                    dynamic registration issued them), "metadata"}: after
 *                   every successful grant or refresh. answer {}. Store it
 *                   as a secret. A failed load or save is logged, not fatal.
 *
 *   Every server request is validated before the host sees it: malformed params,
 *   undeclared modes and tool use without handlers.sampling.tools are
 *   refused with JSON-RPC -32602 and never reach the host.
 *
 *   <summary> = {"request_hash": SHA-256 hex of the RFC 8785 canonical JSON
 *   of the params, "request_hash_short": its first 16 characters,
 *   "message_count", "roles": [first-seen order], "content_kinds": {kind:
 *   count}, "text_char_count", "system_prompt_chars", "max_tokens",
 *   "requested_models": [every hint name], "include_context"?,
 *   "has_tools"}: counts and hashes only, never text.
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
/* No such call id or host request id (finished, answered, or expired). */
#define LMCP_E_NOT_FOUND (-4)
/* A deadline passed. */
#define LMCP_E_TIMEOUT (-5)
/* The operation was cancelled (lmcp_client_cancel or lmcp_client_free). */
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
/* A bug in the library (including a recovered Go panic). */
#define LMCP_E_INTERNAL (-14)

/* lmcp_status_string returns a static, human-readable name for a status
 * ("ok", "invalid argument", ...); unknown values give "unknown status".
 * Never fails; the caller must not free the result. */
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
 *    "modern": [..] (the 2026-07-28 features: "server_discover", "mrtr",
 *      "http_standard_headers", "subscriptions_listen", "result_cache",
 *      "tasks"; docs/modern.md)}
 * *json_out is library-allocated (free with lmcp_free); *len_out (may be NULL)
 * receives its length. Starts nothing.
 * Returns LMCP_OK, or LMCP_E_INVALID_ARGUMENT when json_out is NULL. */
lmcp_status lmcp_features(char **json_out, size_t *len_out);

/* lmcp_diagnostics reports the library's live resources as JSON:
 *   {"goroutines": <int>, "live_clients": <int>, "pending_calls": <int>,
 *    "result_cache": {"hits": <int>, "misses": <int>}}
 * "result_cache" counts the cacheable 2026-07-28 calls answered from the
 * result cache and those sent to the server, across clients.
 * "goroutines" counts the library's goroutines (the Go runtime's own system
 * goroutines excluded): a host or test can compare it before creating and
 * after freeing clients to detect leaks; right after loading it is the
 * baseline of an idle library. *json_out is library-allocated (free with
 * lmcp_free); *len_out (may be NULL) receives its length.
 * Returns LMCP_OK, or LMCP_E_INVALID_ARGUMENT when json_out is NULL. */
lmcp_status lmcp_diagnostics(char **json_out, size_t *len_out);

/* ------------------------------------------------------------------ client */

/* An MCP client: one connection to one server. Opaque. */
typedef struct lmcp_client lmcp_client;

/* Identifies one accepted call on a client; never 0, never reused. */
typedef uint64_t lmcp_call_id;

/* Identifies one pending host request on a client; never 0, never reused. */
typedef uint64_t lmcp_request_id;

/* Client states, as reported by lmcp_client_state. */
typedef int32_t lmcp_state;
#define LMCP_STATE_NEW 0        /* created, connect not yet called */
#define LMCP_STATE_CONNECTING 1 /* handshake in progress */
#define LMCP_STATE_READY 2      /* calls allowed */
#define LMCP_STATE_CLOSING 3    /* lmcp_client_close in progress */
#define LMCP_STATE_CLOSED 4     /* closed or connection lost */
#define LMCP_STATE_FAILED 5     /* the handshake failed */

/* Receives an event. kind is static text; json (len bytes, NUL-terminated) is
 * borrowed until the callback returns. Runs on a library thread; events of
 * one client arrive one at a time, in order. */
typedef void (*lmcp_event_cb)(void *user_data, const char *kind,
                              const char *json, size_t len);

/* Receives a request from the server that the host must answer with
 * lmcp_client_respond(), during the callback or later, from any thread.
 * kind is static text; json is borrowed until the callback returns. An
 * unanswered request expires after timeouts.host_request_ms and the server
 * is told so; a later answer gets LMCP_E_NOT_FOUND. */
typedef void (*lmcp_host_request_cb)(void *user_data, lmcp_request_id request_id,
                                     const char *kind, const char *json,
                                     size_t len);

/* Receives the completion of an accepted call, exactly once. On LMCP_OK json
 * is the JSON-RPC "result" value; otherwise it is an error object (see
 * CONVENTIONS). json is borrowed until the callback returns. */
typedef void (*lmcp_done_cb)(void *user_data, lmcp_call_id call_id,
                             lmcp_status status, const char *json, size_t len);

/* Releases a registration's user_data. */
typedef void (*lmcp_destroy_cb)(void *user_data);

/* lmcp_client_new validates config_json (len bytes) and creates a client in
 * LMCP_STATE_NEW. Nothing is started: no process, no connection.
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

/* lmcp_client_set_host_request_handler registers the host-request callback.
 * It must be set before lmcp_client_connect when the configuration lists any
 * "handlers". Returns LMCP_OK, LMCP_E_INVALID_HANDLE (destroy still runs), or
 * LMCP_E_INVALID_STATE once connect was called (destroy still runs). */
lmcp_status lmcp_client_set_host_request_handler(lmcp_client *client,
                                                 lmcp_host_request_cb cb,
                                                 void *user_data,
                                                 lmcp_destroy_cb destroy,
                                                 char **err_out);

/* lmcp_client_connect starts the transport (for stdio: spawns the server,
 * without a shell) and begins the handshake in the background. It returns as
 * soon as the process is started; readiness arrives as a "ready" event (or
 * "failed"), and lmcp_client_wait_ready bounds the wait.
 * Returns LMCP_OK; LMCP_E_INVALID_HANDLE; LMCP_E_INVALID_STATE (connect was
 * already called); LMCP_E_INVALID_ARGUMENT (executable not found, handlers
 * configured, or auth.token_store "host", without a host-request handler);
 * LMCP_E_TRANSPORT (spawn failed). */
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

/* Call options (options_json, all optional):
 *   {"timeout_ms": <int> [timeouts.call_ms; 0 = no limit],
 *    "reset_timeout_on_progress": <bool> [timeouts.reset_timeout_on_progress],
 *    "max_total_ms": <int> [timeouts.max_total_ms],
 *    "all_pages": <bool> [false]: for the .../list methods, follow nextCursor and
 *        return one result with every item (stops on a repeated cursor;
 *        fails past limits.max_pages),
 *    "progress": <bool> [false]: ask the server for progress, delivered as
 *        "progress" events carrying this call's id,
 *    "wait_ready": <bool> [false]: queue the call until the client is ready
 *        instead of failing with LMCP_E_INVALID_STATE,
 *    "_meta": {..}: merged into params._meta,
 *    "no_cache": <bool> [false]: send the request even when the 2026-07-28
 *        result cache holds a fresh result for it (docs/modern.md),
 *    "verify": {"digest": "sha256:<64 lowercase hex>"?, "size": <bytes>?,
 *               "frontmatter": {..}?} [none]: resources/read only (any other
 *        method: LMCP_E_INVALID_ARGUMENT); at least one member. What the host
 *        holds about the resource, typically a skill file's entry from
 *        skills/list or skills/get (io.modelcontextprotocol/skills,
 *        SEP-2640: "size" and "digest" from resources[], "frontmatter" from
 *        the entry when reading its SKILL.md). The result must carry exactly
 *        one content item; its bytes (text as UTF-8, blob base64-decoded)
 *        must have that size and SHA-256, and for "frontmatter" its text
 *        must open with a YAML frontmatter block (--- ... ---) equal field
 *        by field to the object: the same fields, the same values and JSON
 *        types (YAML 1.2 core schema: 2.1 is a number, "2.1" a string).
 *        The frontmatter parser takes block mappings and sequences, plain,
 *        quoted and | > scalars and one-line flow sequences of scalars; it
 *        refuses anchors, aliases, tags, complex keys, flow mappings and
 *        multi-line quoted scalars, which fail the check. On any failure
 *        the call completes with LMCP_E_PROTOCOL, "resources/read
 *        verification failed: ..." naming what differed (size, digest,
 *        field name, parse error; never the content), and the content is
 *        not returned. The host then must not use the resource; for a
 *        stale listing it refreshes the entry (skills/get) and reads
 *        again.}
 * A timeout sends notifications/cancelled to the server (2026-07-28 over
 * HTTP: the request's response stream is closed instead). */

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
 * its length. Returns LMCP_OK, the statuses of lmcp_client_call, or the
 * completion's status (LMCP_E_PROTOCOL with the server's error in err_out,
 * LMCP_E_TIMEOUT, LMCP_E_CLOSED, LMCP_E_CANCELLED). */
lmcp_status lmcp_client_call_sync(lmcp_client *client, const char *method,
                                  const char *params_json, size_t params_len,
                                  const char *options_json, size_t options_len,
                                  char **result_out, size_t *result_len_out,
                                  char **err_out);

/* lmcp_client_cancel cancels an accepted call: its done callback runs with
 * LMCP_E_CANCELLED and the server receives notifications/cancelled (in the
 * 2026-07-28 era over HTTP, the request's stream is closed instead). Safe from
 * any thread, including from callbacks. Returns LMCP_OK, LMCP_E_NOT_FOUND
 * (already completed, or unknown), or LMCP_E_INVALID_HANDLE. */
lmcp_status lmcp_client_cancel(lmcp_client *client, lmcp_call_id call_id);

/* lmcp_client_notify sends a notification to the server (e.g.
 * "notifications/roots/list_changed"). params_json is a JSON object or absent.
 * Returns LMCP_OK, LMCP_E_INVALID_HANDLE, LMCP_E_INVALID_ARGUMENT (empty, or
 * not a notifications/ method), LMCP_E_INVALID_STATE (not ready; or
 * notifications/roots/list_changed without handlers.roots.list_changed, which
 * the client did not declare), LMCP_E_CLOSED or LMCP_E_TRANSPORT. */
lmcp_status lmcp_client_notify(lmcp_client *client, const char *method,
                               const char *params_json, size_t params_len,
                               char **err_out);

/* lmcp_client_respond answers a host request. With status LMCP_OK, json is
 * the answer described under HOST REQUESTS. With an error status, json is
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
 *    "transport": "stdio"|.., "era": "legacy"|"modern"}
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

/* lmcp_client_free releases the handle. It never blocks: pending calls
 * complete with LMCP_E_CANCELLED (on library threads, possibly after free
 * returns), no new event or host-request callback starts after it returns,
 * each registration's destroy runs once no callback of it can run, and the
 * connection is torn down (subprocess reaped) in the background. Safe from
 * finalizers and BEAM resource destructors. NULL is a no-op; freeing a freed
 * or unknown handle is harmless. Later calls with the freed handle return
 * LMCP_E_INVALID_HANDLE: handle values are never reused. */
void lmcp_client_free(lmcp_client *client);

#ifdef __cplusplus
}
#endif

#endif /* LEMONMCP_H */
