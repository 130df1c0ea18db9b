/* Shared declarations of the LemonMCP NIF shim:
 *   json_term.c, term_json.c  the JSON <-> term converters
 *   lmcp_nif.c                payloads, errors, argument encoding, the
 *                             library-wide NIFs, and the function table
 *   handle_nif.c              one handle kind: the resource and the NIF
 *                             bodies a client and a host share
 *   client_nif.c, host_nif.c  the client's and the host's NIFs */
#ifndef LMCP_NIF_H
#define LMCP_NIF_H

#include <stddef.h>
#include <stdint.h>
#include <erl_nif.h>

#include "lemonmcp.h"

#define LMCP_HIDDEN __attribute__((visibility("hidden")))

/* Integer literals longer than this become a binary of their text
 * (converting huge decimals is quadratic). */
#define LMCP_MAX_INTEGER_DIGITS 1024

/* The atoms the shim uses, made once in load(). */
LMCP_HIDDEN extern ERL_NIF_TERM lmcp_atom_true, lmcp_atom_false, lmcp_atom_nil, lmcp_atom_struct,
    lmcp_atom_ok, lmcp_atom_error;

/* json_to_term converts one JSON value (len bytes; white space around it
 * allowed) into a term in env: objects are
 * maps with binary keys (the last of a repeated key wins), arrays lists,
 * strings binaries, integers integers of any size (bignums beyond 64 bits),
 * other numbers floats, true/false atoms, null nil. A number beyond the
 * range of a double, or an integer longer than LMCP_MAX_INTEGER_DIGITS
 * digits, becomes a binary of its text. Invalid UTF-8 and invalid JSON are
 * errors. It works with any environment, on any thread (it is called from
 * library threads with a process-independent env). Returns 1 and *out, or 0
 * and a static message in *err with the byte offset in *err_offset. */
LMCP_HIDDEN int lmcp_json_to_term(ErlNifEnv *env, const char *json, size_t len, ERL_NIF_TERM *out,
                                  const char **err, size_t *err_offset);

/* A growable output buffer (malloc'd). */
typedef struct {
  char *data;
  size_t len, cap;
  size_t limit; /* stop when len passes this (0: no limit) */
  int over;     /* set when limit was passed */
} lmcp_buf;

/* term_to_json appends the JSON text of term to buf. Maps (binary, atom or
 * integer keys) become objects, proper lists arrays, binaries strings (they
 * must be UTF-8), integers and floats numbers, nil null, true/false
 * themselves, other atoms strings. Tuples, pids, references, functions,
 * structs and improper lists are errors. Returns 1, or 0 with a message
 * in *err (static text); buf->over is set (and 0 returned) when the output
 * passed buf->limit. */
LMCP_HIDDEN int lmcp_term_to_json(ErlNifEnv *env, ERL_NIF_TERM term, lmcp_buf *buf, const char **err);

LMCP_HIDDEN void lmcp_buf_free(lmcp_buf *buf);

/* ---------------------------------------------------------------- lmcp_nif.c */

/* A NIF function, as ErlNifFunc and enif_schedule_nif take it. */
typedef ERL_NIF_TERM (*lmcp_nif_fn)(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* Answers and notifications larger than this go to a dirty scheduler. */
#define LMCP_SMALL_WRITE (4 * 1024)

LMCP_HIDDEN ERL_NIF_TERM lmcp_make_bin(ErlNifEnv *env, const void *p, size_t n);
LMCP_HIDDEN ERL_NIF_TERM lmcp_make_str(ErlNifEnv *env, const char *s);
/* lmcp_payload_term decodes a JSON payload the library produced: nil when
 * empty, {lmcp_raw, Binary, Reason} when it cannot be decoded. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_payload_term(ErlNifEnv *env, const char *data, size_t len);
/* lmcp_ok_json is {ok, Payload} of a library-allocated JSON, which it frees. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_ok_json(ErlNifEnv *env, char *json, size_t len);
/* lmcp_lib_error is {error, Status, Info}, Info decoded from err_out (which
 * it frees) or made from status. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_lib_error(ErlNifEnv *env, lmcp_status st, char *err);
/* {error, {encode_failed, Msg}}: what (an argument's name) did not encode. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_encode_error(ErlNifEnv *env, const char *what, const char *err);
LMCP_HIDDEN int lmcp_on_dirty_scheduler(void);
/* lmcp_encode_arg turns an optional term (nil: absent) into JSON in buf.
 * Returns 1; 0 with *err; or -1 when the encoding outgrew a normal
 * scheduler (the caller reschedules itself dirty). */
LMCP_HIDDEN int lmcp_encode_arg(ErlNifEnv *env, ERL_NIF_TERM t, lmcp_buf *buf, const char **err);
/* lmcp_encode_config encodes the map of client_new/1 and host_new/1 (the
 * configurations are small: never rescheduled). Returns 1, or 0 with
 * *result the error term (badarg, or the encoding error). */
LMCP_HIDDEN int lmcp_encode_config(ErlNifEnv *env, ERL_NIF_TERM config, lmcp_buf *buf, ERL_NIF_TERM *result);
/* lmcp_consume_since reports the time spent since t0 to the scheduler. */
LMCP_HIDDEN void lmcp_consume_since(ErlNifEnv *env, ErlNifTime t0);
/* lmcp_copy_cstr copies a binary without NUL bytes into a NUL-terminated
 * string (malloc'd), or returns NULL. */
LMCP_HIDDEN char *lmcp_copy_cstr(ErlNifEnv *env, ERL_NIF_TERM t);

/* ---------------------------------------------------------- handle_nif.c */

/* A handle kind: how the shim serves an lmcp_client or an lmcp_host. The
 * functions take the handle as void * (wrappers of the typed lmcp_
 * functions, in client_nif.c and host_nif.c). */
typedef struct {
  const char *noun;          /* "client" or "host"; the resource type is "lmcp_<noun>" */
  const char *freed_message; /* the Info message of a freed handle's error */
  lmcp_status (*create)(const char *json, size_t len, void **handle, char **err);
  void (*free_handle)(void *handle);
  lmcp_status (*set_event_handler)(void *handle, lmcp_event_cb cb, void *user_data, lmcp_destroy_cb destroy,
                                   char **err);
  lmcp_status (*set_app_request_handler)(void *handle, lmcp_app_request_cb cb, void *user_data,
                                         lmcp_destroy_cb destroy, char **err);
  lmcp_status (*set_telemetry_handler)(void *handle, lmcp_telemetry_cb cb, void *user_data,
                                       lmcp_destroy_cb destroy, char **err);
  lmcp_status (*connect)(void *handle, char **err);
  lmcp_status (*cancel)(void *handle, lmcp_call_id id);
  lmcp_status (*respond)(void *handle, lmcp_request_id id, lmcp_status status, const char *json, size_t len,
                         char **err);
  lmcp_status (*close)(void *handle, int64_t timeout_ms, char **err);
  ErlNifResourceType *type; /* made by lmcp_kind_init in load() */
} lmcp_kind;

LMCP_HIDDEN extern lmcp_kind lmcp_client_kind, lmcp_host_kind;

/* One resource per handle, owned (monitored) by the process that created
 * it: when the owner dies, or the resource is garbage-collected, the
 * handle is freed. Freeing twice is harmless (the library ignores a freed
 * handle) and a free may race any other call (a later one gets
 * LMCP_E_INVALID_HANDLE: handle values are never reused), so the shim keeps
 * no in-use count. */
typedef struct {
  const lmcp_kind *kind;
  void *handle;    /* freed or not, always a handle the library knows */
  ErlNifMutex *mu; /* guards owner and mon (adopt) */
  int http;        /* a client not over stdio: a notify waits for its POST */
  ErlNifPid owner;
  ErlNifMonitor mon;
} lmcp_res;

/* A call's user_data: the receiver. Freed by lmcp_on_done, which runs once. */
typedef struct {
  ErlNifPid pid;
} lmcp_call_box;

/* lmcp_on_done sends {lmcp_done, CallId, Status, Payload} to the caller. */
LMCP_HIDDEN void lmcp_on_done(void *user_data, lmcp_call_id id, lmcp_status st, const char *json, size_t len);

LMCP_HIDDEN int lmcp_kind_init(ErlNifEnv *env, lmcp_kind *kind);
/* lmcp_handle_error is lmcp_lib_error for a handle of kind: there
 * LMCP_E_INVALID_HANDLE can only mean that the handle was freed, and the
 * error says how. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_error(ErlNifEnv *env, const lmcp_kind *kind, lmcp_status st, char *err);
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_status(ErlNifEnv *env, const lmcp_kind *kind, lmcp_status st, char *err);

/* lmcp_get_args is the opening of every NIF that takes a handle: it decodes
 * argv[0..] by fmt, one letter per argument:
 *   r  the resource of kind (lmcp_res **), which must come first
 *   s  a binary without NUL bytes, copied to a NUL-terminated string
 *      (char **, malloc'd: the caller frees it)
 *   u  an unsigned 64-bit integer (ErlNifUInt64 *)
 *   i  an int (int *)
 *   l  a signed 64-bit integer (ErlNifSInt64 *)
 * Returns 1, or 0 when an argument does not fit (the caller returns
 * badarg; nothing is left to free). */
LMCP_HIDDEN int lmcp_get_args(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind,
                              const char *fmt, ...);

/* The NIF bodies every kind shares; each kind's NIFs name their kind. */
/* new(Config) -> {ok, Handle} | {error, Status, Info}; the caller owns it
 * (*res, when not NULL, is the new resource). */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_new(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind,
                                         lmcp_res **res);
/* lmcp_handle_adopt is new's second half, for a handle made another way
 * (host_new_file): {ok, Handle} owned by the caller; *res as for new. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_adopt(ErlNifEnv *env, const lmcp_kind *kind, void *handle,
                                           lmcp_res **res);
/* set_handlers(Handle, Tag) -> ok | {error, ...}: events and app requests
 * go to the caller, tagged with Tag. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_set_handlers(ErlNifEnv *env, const ERL_NIF_TERM argv[],
                                                  const lmcp_kind *kind);
/* set_telemetry(Handle, Tag) -> ok | {error, ...}: the library's telemetry
 * records go to the caller as {lmcp_telemetry, Tag, Kind, Record}. Set
 * only when the application has a telemetry module: with a handler the
 * library measures every call. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_set_telemetry(ErlNifEnv *env, const ERL_NIF_TERM argv[],
                                                   const lmcp_kind *kind);
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_connect(ErlNifEnv *env, const ERL_NIF_TERM argv[],
                                             const lmcp_kind *kind);
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_cancel(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind);
/* respond(Handle, RequestId, Status, Answer) -> ok | {error, ...}; a large
 * answer reschedules self (named self_name) on a dirty scheduler. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_respond(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[],
                                             const lmcp_kind *kind, const char *self_name, lmcp_nif_fn self);
/* close(Handle, TimeoutMs) -> ok | {error, ...}: a freed handle is ok. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_close(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind);
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_free(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind);

/* lmcp_start_fn starts a call on handle with the strings and the two
 * encoded buffers, lmcp_on_done and box as its completion. */
typedef lmcp_status (*lmcp_start_fn)(void *handle, char **strs, const lmcp_buf *args, const lmcp_buf *opts,
                                     lmcp_call_box *box, lmcp_call_id *id, char **err);
/* lmcp_handle_start_call is the one body of the NIFs that start a call:
 * argv[0] is the handle, argv[1 .. nstr] NUL-free binaries (the method; the
 * tool name; or the server and the method), then the JSON arguments (named
 * args_name in an encoding error) and the options. Arguments too large to
 * encode on a normal scheduler reschedule self on a dirty one. Returns
 * {ok, CallId}; {lmcp_done, CallId, Status, Payload} goes to the caller. */
LMCP_HIDDEN ERL_NIF_TERM lmcp_handle_start_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[],
                                                const lmcp_kind *kind, int nstr, const char *args_name,
                                                const char *self_name, lmcp_nif_fn self, lmcp_start_fn start);

/* LMCP_DEFINE_KIND(obj, freed) defines lmcp_<obj>_kind (freed: its freed message) from the
 * header's lmcp_<obj>_ functions (lmcp_client_connect, lmcp_host_connect,
 * ...), each wrapped to take its handle as void *: the header names both
 * kinds' functions alike, and this is the one place that relies on it. */
#define LMCP_DEFINE_KIND(obj, freed)                                                                       \
  static lmcp_status obj##_kind_create(const char *json, size_t len, void **handle, char **err) {          \
    lmcp_##obj *h = NULL;                                                                                  \
    lmcp_status st = lmcp_##obj##_new(json, len, &h, err);                                                 \
    *handle = h;                                                                                           \
    return st;                                                                                             \
  }                                                                                                        \
  static void obj##_kind_free(void *h) {                                                                   \
    lmcp_##obj##_free(h);                                                                                  \
  }                                                                                                        \
  static lmcp_status obj##_kind_set_event_handler(void *h, lmcp_event_cb cb, void *ud,                     \
                                                  lmcp_destroy_cb destroy, char **err) {                   \
    return lmcp_##obj##_set_event_handler(h, cb, ud, destroy, err);                                        \
  }                                                                                                        \
  static lmcp_status obj##_kind_set_app_request_handler(void *h, lmcp_app_request_cb cb, void *ud,         \
                                                        lmcp_destroy_cb destroy, char **err) {             \
    return lmcp_##obj##_set_app_request_handler(h, cb, ud, destroy, err);                                  \
  }                                                                                                        \
  static lmcp_status obj##_kind_set_telemetry_handler(void *h, lmcp_telemetry_cb cb, void *ud,             \
                                                      lmcp_destroy_cb destroy, char **err) {               \
    return lmcp_##obj##_set_telemetry_handler(h, cb, ud, destroy, err);                                    \
  }                                                                                                        \
  static lmcp_status obj##_kind_connect(void *h, char **err) {                                             \
    return lmcp_##obj##_connect(h, err);                                                                   \
  }                                                                                                        \
  static lmcp_status obj##_kind_cancel(void *h, lmcp_call_id id) {                                         \
    return lmcp_##obj##_cancel(h, id);                                                                     \
  }                                                                                                        \
  static lmcp_status obj##_kind_respond(void *h, lmcp_request_id id, lmcp_status status, const char *json, \
                                        size_t len, char **err) {                                          \
    return lmcp_##obj##_respond(h, id, status, json, len, err);                                            \
  }                                                                                                        \
  static lmcp_status obj##_kind_close(void *h, int64_t timeout_ms, char **err) {                           \
    return lmcp_##obj##_close(h, timeout_ms, err);                                                         \
  }                                                                                                        \
  lmcp_kind lmcp_##obj##_kind = {                                                                          \
      .noun = #obj,                                                                                        \
      .freed_message = freed,                                                                              \
      .create = obj##_kind_create,                                                                         \
      .free_handle = obj##_kind_free,                                                                      \
      .set_event_handler = obj##_kind_set_event_handler,                                                   \
      .set_app_request_handler = obj##_kind_set_app_request_handler,                                       \
      .set_telemetry_handler = obj##_kind_set_telemetry_handler,                                           \
      .connect = obj##_kind_connect,                                                                       \
      .cancel = obj##_kind_cancel,                                                                         \
      .respond = obj##_kind_respond,                                                                       \
      .close = obj##_kind_close,                                                                           \
  }

/* LMCP_DEFINE_KIND_NIFS(obj, prefix) defines the NIFs every kind has, each
 * the shared body (handle_nif.c) for lmcp_<obj>_kind, named
 * nif_<prefix><name> (Erlang name <prefix><name>):
 *   set_handlers(Handle, Tag) -> ok | {error, Status, Info}
 *   set_telemetry(Handle, Tag) -> ok | {error, Status, Info}
 *   connect(Handle) -> ok | {error, ...}          (dirty I/O: spawns)
 *   cancel(Handle, CallId) -> ok | {error, ...}
 *   respond(Handle, RequestId, Status, Answer) -> ok | {error, ...}
 *   close(Handle, TimeoutMs) -> ok | {error, ...}  (dirty I/O: blocks)
 *   free(Handle) -> ok                             (never waits for a server) */
#define LMCP_DEFINE_KIND_NIFS(obj, prefix)                                                        \
  ERL_NIF_TERM nif_##prefix##set_handlers(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {  \
    (void)argc;                                                                                   \
    return lmcp_handle_set_handlers(env, argv, &lmcp_##obj##_kind);                               \
  }                                                                                               \
  ERL_NIF_TERM nif_##prefix##set_telemetry(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) { \
    (void)argc;                                                                                   \
    return lmcp_handle_set_telemetry(env, argv, &lmcp_##obj##_kind);                              \
  }                                                                                               \
  ERL_NIF_TERM nif_##prefix##connect(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {       \
    (void)argc;                                                                                   \
    return lmcp_handle_connect(env, argv, &lmcp_##obj##_kind);                                    \
  }                                                                                               \
  ERL_NIF_TERM nif_##prefix##cancel(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {        \
    (void)argc;                                                                                   \
    return lmcp_handle_cancel(env, argv, &lmcp_##obj##_kind);                                     \
  }                                                                                               \
  ERL_NIF_TERM nif_##prefix##respond(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {       \
    return lmcp_handle_respond(env, argc, argv, &lmcp_##obj##_kind, #prefix "respond",            \
                               nif_##prefix##respond);                                            \
  }                                                                                               \
  ERL_NIF_TERM nif_##prefix##close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {         \
    (void)argc;                                                                                   \
    return lmcp_handle_close(env, argv, &lmcp_##obj##_kind);                                      \
  }                                                                                               \
  ERL_NIF_TERM nif_##prefix##free(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {          \
    (void)argc;                                                                                   \
    return lmcp_handle_free(env, argv, &lmcp_##obj##_kind);                                       \
  }

/* ------------------------------------------------------------ server_nif.c */

/* lmcp_server_init opens the "lmcp_server" resource type (load()). */
LMCP_HIDDEN int lmcp_server_init(ErlNifEnv *env);

/* ------------------------------------------------- client_nif.c, host_nif.c */

#define LMCP_NIF(name) LMCP_HIDDEN ERL_NIF_TERM name(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
LMCP_NIF(nif_client_new);
LMCP_NIF(nif_adopt);
LMCP_NIF(nif_set_handlers);
LMCP_NIF(nif_set_telemetry);
LMCP_NIF(nif_connect);
LMCP_NIF(nif_call);
LMCP_NIF(nif_cancel);
LMCP_NIF(nif_notify);
LMCP_NIF(nif_respond);
LMCP_NIF(nif_state);
LMCP_NIF(nif_server_info);
LMCP_NIF(nif_close);
LMCP_NIF(nif_free);
LMCP_NIF(nif_host_new);
LMCP_NIF(nif_host_new_file);
LMCP_NIF(nif_host_warnings);
LMCP_NIF(nif_host_tool_route);
LMCP_NIF(nif_host_pins);
LMCP_NIF(nif_host_approve);
LMCP_NIF(nif_host_set_handlers);
LMCP_NIF(nif_host_set_telemetry);
LMCP_NIF(nif_host_connect);
LMCP_NIF(nif_host_wait_ready);
LMCP_NIF(nif_host_servers);
LMCP_NIF(nif_host_call_tool);
LMCP_NIF(nif_server_new);
LMCP_NIF(nif_server_serve_http);
LMCP_NIF(nif_server_serve_fds);
LMCP_NIF(nif_server_wait);
LMCP_NIF(nif_server_stop);
LMCP_NIF(nif_server_free);
LMCP_NIF(nif_host_call);
LMCP_NIF(nif_host_cancel);
LMCP_NIF(nif_host_respond);
LMCP_NIF(nif_host_close);
LMCP_NIF(nif_host_free);
LMCP_NIF(nif_host_query);

#endif
