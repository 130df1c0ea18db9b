/* lmcp_nif.c — the Erlang NIF shim over liblemonmcp (include/lemonmcp.h).
 *
 * Thin by design: every function checks its arguments, converts terms to
 * JSON, calls the library and converts back. Nothing here waits for the
 * server:
 *
 *  - NIFs that only start work (call, cancel, notify, respond, state, ...)
 *    run on normal schedulers and return in microseconds: lmcp_client_call
 *    never blocks (over stdio a server that stops reading gets a bounded
 *    queue, not the caller's thread; over HTTP a library goroutine makes the
 *    request). A NIF whose JSON encoding grows past ENCODE_LIMIT bytes
 *    reschedules itself on a dirty I/O scheduler, and so does a notify on
 *    an HTTP client (lmcp_client_notify POSTs it on the calling thread).
 *  - connect (it spawns the server process) and close (it waits for the
 *    teardown) run on dirty I/O schedulers.
 *  - Results, events and app requests arrive as messages, sent from the
 *    library's threads with enif_send(NULL, ...) from a fresh
 *    enif_alloc_env; their JSON is turned into terms on that thread, so a
 *    large result costs no scheduler time.
 *
 * Messages (to the process that registered, or that started the call):
 *   {lmcp_done, CallId, Status, Payload}
 *   {lmcp_event, Tag, Kind, Payload}
 *   {lmcp_app_request, Tag, RequestId, Kind, Payload}
 *   {lmcp_telemetry, Tag, Kind, Record}  (docs/telemetry.md; a call's
 *                                          record before its completion)
 * Payload is the decoded JSON (maps with binary keys), nil when empty, or
 * {lmcp_raw, Binary, Reason} when it could not be decoded.
 *
 * One resource type per handle kind (lmcp_client, lmcp_host: handle_nif.c),
 * one resource per handle. The process that created it is monitored: when
 * it dies, or when the resource is garbage-collected, the handle is freed.
 * A free never waits for a server (the library reaps the subprocesses in
 * the background); it waits only for the handle's callbacks already running
 * on library threads (they build a message and enif_send it), and delivers
 * the cancelled completions of pending calls before it returns. A free may
 * race any other call on the handle: a NIF that comes later gets
 * LMCP_E_INVALID_HANDLE from the library (handle values are never reused),
 * so the shim keeps no in-use count.
 *
 * This file holds what every NIF uses (payloads, errors, argument
 * encoding), the library-wide NIFs, and, last, the function table; the
 * client's NIFs are in client_nif.c, the host's in host_nif.c.
 *
 * The shim is linked -z nodelete: callbacks may reach its code for as long
 * as the library lives, which is the life of the VM.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <erl_nif.h>

#include "lemonmcp.h"
#include "lmcp_nif.h"

/* The ABI this shim was written for. */
#define SHIM_ABI_VERSION 1

/* The largest JSON a NIF encodes on a normal scheduler (about 50 us). */
#define ENCODE_LIMIT (64 * 1024)
/* The largest JSON decode_json handles on a normal scheduler. */
#define DECODE_LIMIT (64 * 1024)

ERL_NIF_TERM lmcp_atom_true, lmcp_atom_false, lmcp_atom_nil, lmcp_atom_struct, lmcp_atom_ok, lmcp_atom_error;
static ERL_NIF_TERM atom_lmcp_raw, atom_encode_failed;

LMCP_HIDDEN void lmcp_json_init(void);

/* ------------------------------------------------------------- payloads */

ERL_NIF_TERM lmcp_make_bin(ErlNifEnv *env, const void *p, size_t n) {
  ERL_NIF_TERM t;
  unsigned char *d = enif_make_new_binary(env, n, &t);
  if (n > 0) {
    memcpy(d, p, n);
  }
  return t;
}

ERL_NIF_TERM lmcp_make_str(ErlNifEnv *env, const char *s) {
  return lmcp_make_bin(env, s, strlen(s));
}

ERL_NIF_TERM lmcp_payload_term(ErlNifEnv *env, const char *data, size_t len) {
  if (data == NULL || len == 0) {
    return lmcp_atom_nil;
  }
  ERL_NIF_TERM t;
  const char *err = NULL;
  size_t off = 0;
  if (lmcp_json_to_term(env, data, len, &t, &err, &off)) {
    return t;
  }
  char msg[160];
  snprintf(msg, sizeof(msg), "%s at offset %zu", err, off);
  return enif_make_tuple3(env, atom_lmcp_raw, lmcp_make_bin(env, data, len), lmcp_make_str(env, msg));
}

ERL_NIF_TERM lmcp_ok_json(ErlNifEnv *env, char *json, size_t len) {
  ERL_NIF_TERM t = lmcp_payload_term(env, json, len);
  lmcp_free(json);
  return enif_make_tuple2(env, lmcp_atom_ok, t);
}

/* error_info decodes err_out (and frees it), or describes status. */
static ERL_NIF_TERM error_info(ErlNifEnv *env, lmcp_status st, char *err) {
  if (err != NULL) {
    ERL_NIF_TERM t = lmcp_payload_term(env, err, strlen(err));
    lmcp_free(err);
    return t;
  }
  ERL_NIF_TERM m = enif_make_new_map(env);
  enif_make_map_put(env, m, lmcp_make_str(env, "status"), enif_make_int(env, st), &m);
  enif_make_map_put(env, m, lmcp_make_str(env, "message"), lmcp_make_str(env, lmcp_status_string(st)), &m);
  return m;
}

ERL_NIF_TERM lmcp_lib_error(ErlNifEnv *env, lmcp_status st, char *err) {
  return enif_make_tuple3(env, lmcp_atom_error, enif_make_int(env, st), error_info(env, st, err));
}

ERL_NIF_TERM lmcp_encode_error(ErlNifEnv *env, const char *what, const char *err) {
  char msg[256];
  snprintf(msg, sizeof(msg), "%s: %s", what, err ? err : "cannot encode");
  return enif_make_tuple2(env, lmcp_atom_error,
                          enif_make_tuple2(env, atom_encode_failed, lmcp_make_str(env, msg)));
}

/* ------------------------------------------------------------ arguments */

int lmcp_on_dirty_scheduler(void) {
  int t = enif_thread_type();
  return t == ERL_NIF_THR_DIRTY_CPU_SCHEDULER || t == ERL_NIF_THR_DIRTY_IO_SCHEDULER;
}

int lmcp_encode_arg(ErlNifEnv *env, ERL_NIF_TERM t, lmcp_buf *buf, const char **err) {
  if (enif_is_identical(t, lmcp_atom_nil)) {
    return 1;
  }
  buf->limit = lmcp_on_dirty_scheduler() ? 0 : ENCODE_LIMIT;
  if (lmcp_term_to_json(env, t, buf, err)) {
    return 1;
  }
  return buf->over ? -1 : 0;
}

int lmcp_encode_config(ErlNifEnv *env, ERL_NIF_TERM config, lmcp_buf *buf, ERL_NIF_TERM *result) {
  if (!enif_is_map(env, config)) {
    *result = enif_make_badarg(env);
    return 0;
  }
  const char *eerr = NULL;
  buf->limit = 0; /* configurations are small; no reschedule */
  if (!lmcp_term_to_json(env, config, buf, &eerr)) {
    lmcp_buf_free(buf);
    *result = lmcp_encode_error(env, "config", eerr);
    return 0;
  }
  return 1;
}

/* 1% of a timeslice is about 10 us: a process that makes NIF calls in a
 * tight loop is scheduled out like one running Erlang code. */
void lmcp_consume_since(ErlNifEnv *env, ErlNifTime t0) {
  ErlNifTime us = enif_monotonic_time(ERL_NIF_USEC) - t0;
  int pct = (int)(us / 10);
  (void)enif_consume_timeslice(env, pct < 1 ? 1 : pct > 100 ? 100 : pct);
}

char *lmcp_copy_cstr(ErlNifEnv *env, ERL_NIF_TERM t) {
  ErlNifBinary bin;
  if (!enif_inspect_binary(env, t, &bin) || memchr(bin.data, 0, bin.size) != NULL) {
    return NULL;
  }
  char *s = malloc(bin.size + 1);
  if (s != NULL) {
    memcpy(s, bin.data, bin.size);
    s[bin.size] = 0;
  }
  return s;
}

/* ------------------------------------------------- the library's NIFs */

static ERL_NIF_TERM nif_version(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  return lmcp_make_str(env, lmcp_version());
}

static ERL_NIF_TERM nif_abi_version(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  return enif_make_int(env, lmcp_abi_version());
}

static ERL_NIF_TERM json_doc(ErlNifEnv *env, lmcp_status (*fn)(char **, size_t *)) {
  char *json = NULL;
  size_t len = 0;
  lmcp_status st = fn(&json, &len);
  return st == LMCP_OK ? lmcp_ok_json(env, json, len) : lmcp_lib_error(env, st, NULL);
}

static ERL_NIF_TERM nif_features(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  return json_doc(env, lmcp_features);
}

static ERL_NIF_TERM nif_diagnostics(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  return json_doc(env, lmcp_diagnostics);
}

/* decode_json(Binary) -> {ok, Term} | {error, Reason}: the decoder the
 * callbacks use, for tests and measurements. */
static ERL_NIF_TERM nif_decode_json(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ErlNifBinary bin;
  if (!enif_inspect_binary(env, argv[0], &bin)) {
    return enif_make_badarg(env);
  }
  if (bin.size > DECODE_LIMIT && !lmcp_on_dirty_scheduler()) {
    return enif_schedule_nif(env, "decode_json", ERL_NIF_DIRTY_JOB_CPU_BOUND, nif_decode_json, argc, argv);
  }
  ERL_NIF_TERM t;
  const char *err = NULL;
  size_t off = 0;
  if (lmcp_json_to_term(env, (const char *)bin.data, bin.size, &t, &err, &off)) {
    return enif_make_tuple2(env, lmcp_atom_ok, t);
  }
  return enif_make_tuple2(env, lmcp_atom_error,
                          enif_make_tuple2(env, lmcp_make_str(env, err), enif_make_uint64(env, off)));
}

/* encode_json(Term) -> {ok, Binary} | {error, {encode_failed, Msg}} */
static ERL_NIF_TERM nif_encode_json(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  lmcp_buf buf = {0};
  const char *err = NULL;
  buf.limit = lmcp_on_dirty_scheduler() ? 0 : ENCODE_LIMIT;
  if (!lmcp_term_to_json(env, argv[0], &buf, &err)) {
    int over = buf.over;
    lmcp_buf_free(&buf);
    if (over) {
      return enif_schedule_nif(env, "encode_json", ERL_NIF_DIRTY_JOB_CPU_BOUND, nif_encode_json, argc, argv);
    }
    return lmcp_encode_error(env, "term", err);
  }
  ERL_NIF_TERM t = lmcp_make_bin(env, buf.data, buf.len);
  lmcp_buf_free(&buf);
  return enif_make_tuple2(env, lmcp_atom_ok, t);
}

/* ------------------------------------------------------ the function table */

static ErlNifFunc nif_funcs[] = {
    {"version", 0, nif_version, 0},
    {"abi_version", 0, nif_abi_version, 0},
    {"features", 0, nif_features, 0},
    {"diagnostics", 0, nif_diagnostics, 0},
    {"client_new", 1, nif_client_new, 0},
    {"adopt", 1, nif_adopt, 0},
    {"set_handlers", 2, nif_set_handlers, 0},
    {"set_telemetry", 2, nif_set_telemetry, 0},
    {"connect", 1, nif_connect, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"call", 4, nif_call, 0},
    {"cancel", 2, nif_cancel, 0},
    {"notify", 3, nif_notify, 0},
    {"respond", 4, nif_respond, 0},
    {"state", 1, nif_state, 0},
    {"server_info", 1, nif_server_info, 0},
    {"close", 2, nif_close, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"free", 1, nif_free, 0},
    {"decode_json", 1, nif_decode_json, 0},
    {"encode_json", 1, nif_encode_json, 0},
    {"host_new", 1, nif_host_new, 0},
    {"host_new_file", 2, nif_host_new_file, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_warnings", 1, nif_host_warnings, 0},
    {"host_tool_route", 2, nif_host_tool_route, 0},
    {"host_set_handlers", 2, nif_host_set_handlers, 0},
    {"host_set_telemetry", 2, nif_host_set_telemetry, 0},
    {"host_connect", 1, nif_host_connect, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_wait_ready", 2, nif_host_wait_ready, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_servers", 1, nif_host_servers, 0},
    {"host_pins", 1, nif_host_pins, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_approve", 2, nif_host_approve, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_call_tool", 4, nif_host_call_tool, 0},
    {"host_call", 5, nif_host_call, 0},
    {"host_cancel", 2, nif_host_cancel, 0},
    {"host_respond", 4, nif_host_respond, 0},
    {"host_close", 2, nif_host_close, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_free", 1, nif_host_free, 0},
    {"host_query", 4, nif_host_query, 0},
    {"server_new", 2, nif_server_new, 0},
    {"server_serve_http", 2, nif_server_serve_http, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"server_serve_fds", 3, nif_server_serve_fds, 0},
    {"server_wait", 2, nif_server_wait, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"server_stop", 2, nif_server_stop, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"server_free", 1, nif_server_free, ERL_NIF_DIRTY_JOB_IO_BOUND},
};

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
  (void)priv;
  (void)info;
  if (lmcp_abi_version() != SHIM_ABI_VERSION) {
    return 1; /* written for another ABI: refuse to load */
  }
  lmcp_json_init();
  lmcp_atom_true = enif_make_atom(env, "true");
  lmcp_atom_false = enif_make_atom(env, "false");
  lmcp_atom_nil = enif_make_atom(env, "nil");
  lmcp_atom_struct = enif_make_atom(env, "__struct__");
  lmcp_atom_ok = enif_make_atom(env, "ok");
  lmcp_atom_error = enif_make_atom(env, "error");
  atom_lmcp_raw = enif_make_atom(env, "lmcp_raw");
  atom_encode_failed = enif_make_atom(env, "encode_failed");
  return lmcp_kind_init(env, &lmcp_client_kind) != 0 || lmcp_kind_init(env, &lmcp_host_kind) != 0 ||
         lmcp_server_init(env) != 0;
}

ERL_NIF_INIT(Elixir.LemonMCP.NIF, nif_funcs, load, NULL, NULL, NULL)
