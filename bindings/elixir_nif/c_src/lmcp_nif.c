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
 *  - Results, events and host requests arrive as messages, sent from the
 *    library's threads with enif_send(NULL, ...) from a fresh
 *    enif_alloc_env; their JSON is turned into terms on that thread, so a
 *    large result costs no scheduler time.
 *
 * Messages (to the process that registered, or that started the call):
 *   {lmcp_done, CallId, Status, Payload}
 *   {lmcp_event, Tag, Kind, Payload}
 *   {lmcp_host_request, Tag, RequestId, Kind, Payload}
 * Payload is the decoded JSON (maps with binary keys), nil when empty, or
 * {lmcp_raw, Binary, Reason} when it could not be decoded.
 *
 * One resource type, one resource per client. The process that created it
 * is monitored: when it dies, or when the resource is garbage-collected,
 * lmcp_client_free runs. It never waits for the server (the library reaps
 * the subprocess in the background); it waits only for this client's
 * callbacks already running on library threads (they build a message and
 * enif_send it), and delivers the cancelled completions of pending calls
 * before it returns. lmcp_client_free may race any other call on the handle:
 * a NIF that comes later gets LMCP_E_INVALID_HANDLE from the library (handle
 * values are never reused), so the shim keeps no in-use count.
 *
 * The shim is linked -z nodelete: callbacks may reach its code for as long
 * as the library lives, which is the life of the VM.
 */
#include <stdarg.h>
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

ERL_NIF_TERM lmcp_atom_true, lmcp_atom_false, lmcp_atom_nil, lmcp_atom_struct;
static ERL_NIF_TERM atom_ok, atom_error, atom_lmcp_done, atom_lmcp_event,
    atom_lmcp_host_request, atom_lmcp_raw, atom_encode_failed;

LMCP_HIDDEN void lmcp_json_init(void);

static ErlNifResourceType *client_type;

/* Answers and notifications larger than this go to a dirty scheduler. */
#define SMALL_WRITE (4 * 1024)

typedef struct {
  lmcp_client *client; /* freed or not, always a handle the library knows */
  ErlNifMutex *mu;     /* guards owner and mon (adopt) */
  int http;            /* not stdio: a notify waits for its POST */
  ErlNifPid owner;
  ErlNifMonitor mon;
} client_res;

/* ------------------------------------------------------------ the handle */

/* Freeing twice is harmless (the library ignores a freed handle), so the
 * owner's exit, free/1 and the destructor each just free. */
static void client_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  client_res *r = obj;
  if (r->client != NULL) {
    lmcp_client_free(r->client);
  }
  if (r->mu != NULL) {
    enif_mutex_destroy(r->mu);
  }
}

static void client_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
  (void)env;
  (void)pid;
  (void)mon;
  client_res *r = obj;
  lmcp_client_free(r->client); /* the owner died: close its client */
}

/* ------------------------------------------------------------- payloads */

static ERL_NIF_TERM make_bin(ErlNifEnv *env, const void *p, size_t n) {
  ERL_NIF_TERM t;
  unsigned char *d = enif_make_new_binary(env, n, &t);
  if (n > 0) {
    memcpy(d, p, n);
  }
  return t;
}

static ERL_NIF_TERM make_str(ErlNifEnv *env, const char *s) { return make_bin(env, s, strlen(s)); }

/* payload_term decodes a JSON payload the library produced. */
static ERL_NIF_TERM payload_term(ErlNifEnv *env, const char *data, size_t len) {
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
  return enif_make_tuple3(env, atom_lmcp_raw, make_bin(env, data, len), make_str(env, msg));
}

/* error_info decodes err_out (and frees it), or describes status. */
static ERL_NIF_TERM error_info(ErlNifEnv *env, lmcp_status st, char *err) {
  if (err != NULL) {
    ERL_NIF_TERM t = payload_term(env, err, strlen(err));
    lmcp_free(err);
    return t;
  }
  ERL_NIF_TERM m = enif_make_new_map(env);
  enif_make_map_put(env, m, make_str(env, "status"), enif_make_int(env, st), &m);
  enif_make_map_put(env, m, make_str(env, "message"), make_str(env, lmcp_status_string(st)), &m);
  return m;
}

static ERL_NIF_TERM freed_error(ErlNifEnv *env) {
  ERL_NIF_TERM m = enif_make_new_map(env);
  enif_make_map_put(env, m, make_str(env, "status"), enif_make_int(env, LMCP_E_INVALID_HANDLE), &m);
  enif_make_map_put(env, m, make_str(env, "message"), make_str(env, "the client was freed (its owner exited or free/1 was called)"), &m);
  return enif_make_tuple3(env, atom_error, enif_make_int(env, LMCP_E_INVALID_HANDLE), m);
}

/* {error, Status, Info}. A resource always holds a handle the library
 * issued, so LMCP_E_INVALID_HANDLE can only mean that it was freed: say
 * how. */
static ERL_NIF_TERM lib_error(ErlNifEnv *env, lmcp_status st, char *err) {
  if (st == LMCP_E_INVALID_HANDLE) {
    lmcp_free(err);
    return freed_error(env);
  }
  return enif_make_tuple3(env, atom_error, enif_make_int(env, st), error_info(env, st, err));
}

static ERL_NIF_TERM encode_error(ErlNifEnv *env, const char *what, const char *err) {
  char msg[256];
  snprintf(msg, sizeof(msg), "%s: %s", what, err ? err : "cannot encode");
  return enif_make_tuple2(env, atom_error, enif_make_tuple2(env, atom_encode_failed, make_str(env, msg)));
}

static int on_dirty_scheduler(void) {
  int t = enif_thread_type();
  return t == ERL_NIF_THR_DIRTY_CPU_SCHEDULER || t == ERL_NIF_THR_DIRTY_IO_SCHEDULER;
}

/* encode_arg turns an optional term (nil: absent) into JSON in buf.
 * Returns 1; 0 with *err; or -1 when the encoding outgrew a normal
 * scheduler (the caller reschedules itself dirty). */
static int encode_arg(ErlNifEnv *env, ERL_NIF_TERM t, lmcp_buf *buf, const char **err) {
  if (enif_is_identical(t, lmcp_atom_nil)) {
    return 1;
  }
  buf->limit = on_dirty_scheduler() ? 0 : ENCODE_LIMIT;
  if (lmcp_term_to_json(env, t, buf, err)) {
    return 1;
  }
  return buf->over ? -1 : 0;
}

/* ------------------------------------------------------------ callbacks */

/* A registration's user_data: the receiver and a tag term in its own env. */
typedef struct {
  ErlNifPid pid;
  ErlNifEnv *env;
  ERL_NIF_TERM tag;
} reg_box;

/* A call's user_data: the receiver. Freed by on_done, which runs once. */
typedef struct {
  ErlNifPid pid;
} call_box;

static void on_done(void *user_data, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  call_box *box = user_data;
  ErlNifEnv *env = enif_alloc_env();
  ERL_NIF_TERM msg = enif_make_tuple4(env, atom_lmcp_done, enif_make_uint64(env, id), enif_make_int(env, st),
                                      payload_term(env, json, len));
  enif_send(NULL, &box->pid, env, msg); /* false if the receiver is gone: nothing to do */
  enif_free_env(env);
  enif_free(box);
}

static void on_event(void *user_data, const char *kind, const char *json, size_t len) {
  reg_box *box = user_data;
  ErlNifEnv *env = enif_alloc_env();
  ERL_NIF_TERM msg = enif_make_tuple4(env, atom_lmcp_event, enif_make_copy(env, box->tag), enif_make_atom(env, kind),
                                      payload_term(env, json, len));
  enif_send(NULL, &box->pid, env, msg);
  enif_free_env(env);
}

static void on_host_request(void *user_data, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  reg_box *box = user_data;
  ErlNifEnv *env = enif_alloc_env();
  ERL_NIF_TERM args[5] = {atom_lmcp_host_request, enif_make_copy(env, box->tag), enif_make_uint64(env, id),
                          enif_make_atom(env, kind), payload_term(env, json, len)};
  enif_send(NULL, &box->pid, env, enif_make_tuple_from_array(env, args, 5));
  enif_free_env(env);
}

static void destroy_reg(void *user_data) {
  reg_box *box = user_data;
  enif_free_env(box->env);
  enif_free(box);
}

static reg_box *new_reg(ErlNifEnv *env, ERL_NIF_TERM tag) {
  reg_box *box = enif_alloc(sizeof(*box));
  if (box == NULL) {
    return NULL;
  }
  enif_self(env, &box->pid);
  box->env = enif_alloc_env();
  box->tag = enif_make_copy(box->env, tag);
  return box;
}

/* ----------------------------------------------------------------- NIFs */

/* copy_cstr copies a binary into a NUL-terminated string (malloc'd). */
static char *copy_cstr(ErlNifEnv *env, ERL_NIF_TERM t) {
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

/* get_args is the opening of every NIF that takes a client: it decodes
 * argv[0..] by fmt, one letter per argument:
 *   r  the client resource (client_res **), which must come first
 *   s  a binary without NUL bytes, copied to a NUL-terminated string
 *      (char **, malloc'd: the caller frees it)
 *   u  an unsigned 64-bit integer (ErlNifUInt64 *)
 *   i  an int (int *)
 *   l  a signed 64-bit integer (ErlNifSInt64 *)
 * Returns 1, or 0 when an argument does not fit (the caller returns
 * badarg; nothing is left to free). There is no "in use" step: a freed
 * client is still a resource, and the library answers its calls with
 * LMCP_E_INVALID_HANDLE (lib_error turns that into freed_error). */
static int get_args(ErlNifEnv *env, const ERL_NIF_TERM argv[], const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char **copied[8]; /* every string copied so far, freed again on failure */
  int ncopied = 0;
  int ok = 1;
  for (int i = 0; ok && fmt[i] != 0; i++) {
    switch (fmt[i]) {
    case 'r':
      ok = enif_get_resource(env, argv[i], client_type, (void **)va_arg(ap, client_res **));
      break;
    case 's': {
      char **out = va_arg(ap, char **);
      *out = ncopied < (int)(sizeof copied / sizeof copied[0]) ? copy_cstr(env, argv[i]) : NULL;
      ok = *out != NULL;
      if (ok) {
        copied[ncopied++] = out;
      }
      break;
    }
    case 'u':
      ok = enif_get_uint64(env, argv[i], va_arg(ap, ErlNifUInt64 *));
      break;
    case 'i':
      ok = enif_get_int(env, argv[i], va_arg(ap, int *));
      break;
    case 'l':
      ok = enif_get_int64(env, argv[i], va_arg(ap, ErlNifSInt64 *));
      break;
    default:
      ok = 0;
    }
  }
  va_end(ap);
  if (!ok) {
    for (int k = 0; k < ncopied; k++) {
      free(*copied[k]);
      *copied[k] = NULL;
    }
  }
  return ok;
}

static ERL_NIF_TERM nif_version(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  (void)argv;
  return make_str(env, lmcp_version());
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
  if (st != LMCP_OK) {
    return lib_error(env, st, NULL);
  }
  ERL_NIF_TERM t = payload_term(env, json, len);
  lmcp_free(json);
  return enif_make_tuple2(env, atom_ok, t);
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

/* config_is_stdio: config.transport.type == "stdio". */
static int config_is_stdio(ErlNifEnv *env, ERL_NIF_TERM config) {
  ERL_NIF_TERM transport, type;
  ErlNifBinary bin;
  if (!enif_get_map_value(env, config, make_str(env, "transport"), &transport) ||
      !enif_get_map_value(env, transport, make_str(env, "type"), &type) || !enif_inspect_binary(env, type, &bin)) {
    return 0;
  }
  return bin.size == 5 && memcmp(bin.data, "stdio", 5) == 0;
}

/* client_new(Config) -> {ok, Client} | {error, Status, Info}
 * The caller becomes the owner: the client is freed when it exits. */
static ERL_NIF_TERM nif_client_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_buf buf = {0};
  const char *eerr = NULL;
  if (!enif_is_map(env, argv[0])) {
    return enif_make_badarg(env);
  }
  buf.limit = 0; /* configurations are small; no reschedule */
  if (!lmcp_term_to_json(env, argv[0], &buf, &eerr)) {
    lmcp_buf_free(&buf);
    return encode_error(env, "config", eerr);
  }
  lmcp_client *c = NULL;
  char *err = NULL;
  lmcp_status st = lmcp_client_new(buf.data, buf.len, &c, &err);
  lmcp_buf_free(&buf);
  if (st != LMCP_OK) {
    return lib_error(env, st, err);
  }
  client_res *r = enif_alloc_resource(client_type, sizeof(*r));
  memset(r, 0, sizeof(*r));
  r->client = c;
  r->mu = enif_mutex_create("lmcp_client");
  r->http = !config_is_stdio(env, argv[0]);
  enif_self(env, &r->owner);
  ERL_NIF_TERM t = enif_make_resource(env, r);
  if (enif_monitor_process(env, r, &r->owner, &r->mon) != 0) {
    lmcp_client_free(c); /* cannot happen: the caller is alive */
  }
  enif_release_resource(r);
  return enif_make_tuple2(env, atom_ok, t);
}

/* adopt(Client) -> ok | {error, ...}: the caller becomes the owner (the
 * process whose exit frees the client) in place of the creator. */
static ERL_NIF_TERM nif_adopt(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  if (!get_args(env, argv, "r", &r)) {
    return enif_make_badarg(env);
  }
  lmcp_state state;
  if (lmcp_client_state(r->client, &state) == LMCP_E_INVALID_HANDLE) {
    return freed_error(env);
  }
  ErlNifPid self;
  enif_self(env, &self);
  ERL_NIF_TERM result = atom_ok;
  /* Only the owner's monitor changes; a failed demonitor means the old
   * owner is already down, and its down callback frees the client. */
  enif_mutex_lock(r->mu);
  if (enif_demonitor_process(env, r, &r->mon) != 0 || enif_monitor_process(env, r, &self, &r->mon) != 0) {
    lmcp_client_free(r->client);
    result = freed_error(env);
  } else {
    r->owner = self;
  }
  enif_mutex_unlock(r->mu);
  return result;
}

/* set_handlers(Client, Tag) -> ok | {error, Status, Info}
 * Events and host requests go to the caller, tagged with Tag. */
static ERL_NIF_TERM nif_set_handlers(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  if (!get_args(env, argv, "r", &r)) {
    return enif_make_badarg(env);
  }
  ERL_NIF_TERM result = atom_ok;
  char *err = NULL;
  reg_box *ev = new_reg(env, argv[1]);
  reg_box *hr = new_reg(env, argv[1]);
  lmcp_status st = lmcp_client_set_event_handler(r->client, on_event, ev, destroy_reg, &err);
  if (st != LMCP_OK) {
    result = lib_error(env, st, err);
    destroy_reg(hr);
  } else {
    st = lmcp_client_set_host_request_handler(r->client, on_host_request, hr, destroy_reg, &err);
    if (st != LMCP_OK) {
      result = lib_error(env, st, err);
    }
  }
  return result;
}

/* connect(Client) -> ok | {error, Status, Info}   (dirty I/O: spawns) */
static ERL_NIF_TERM nif_connect(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  if (!get_args(env, argv, "r", &r)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = lmcp_client_connect(r->client, &err);
  return st == LMCP_OK ? atom_ok : lib_error(env, st, err);
}

/* consume_since reports the time spent since t0 to the scheduler (1% of a
 * timeslice is about 10 us), so a process that makes NIF calls in a tight
 * loop is scheduled out like one running Erlang code. */
static void consume_since(ErlNifEnv *env, ErlNifTime t0) {
  ErlNifTime us = enif_monotonic_time(ERL_NIF_USEC) - t0;
  int pct = (int)(us / 10);
  (void)enif_consume_timeslice(env, pct < 1 ? 1 : pct > 100 ? 100 : pct);
}

/* call(Client, Method, Params, Options) -> {ok, CallId} | {error, ...}
 * The completion {lmcp_done, CallId, Status, Payload} goes to the caller.
 * Params and Options are maps or nil. */
static ERL_NIF_TERM nif_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
  client_res *r;
  char *method;
  if (!get_args(env, argv, "rs", &r, &method)) {
    return enif_make_badarg(env);
  }
  lmcp_buf params = {0}, opts = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  int e1 = encode_arg(env, argv[2], &params, &eerr);
  int e2 = e1 == 1 ? encode_arg(env, argv[3], &opts, &eerr) : 1;
  if (e1 < 0 || e2 < 0) {
    result = enif_schedule_nif(env, "call", ERL_NIF_DIRTY_JOB_IO_BOUND, nif_call, argc, argv);
  } else if (e1 == 0 || e2 == 0) {
    result = encode_error(env, e1 == 0 ? "params" : "options", eerr);
  } else {
    /* Never waits (see the top of this file): fine on a normal scheduler. */
    call_box *box = enif_alloc(sizeof(*box));
    enif_self(env, &box->pid);
    lmcp_call_id id = 0;
    char *err = NULL;
    lmcp_status st = lmcp_client_call(r->client, method, params.data, params.len, opts.data, opts.len, on_done, box,
                                      &id, &err);
    consume_since(env, t0);
    if (st == LMCP_OK) {
      result = enif_make_tuple2(env, atom_ok, enif_make_uint64(env, id));
    } else {
      enif_free(box); /* done never runs */
      result = lib_error(env, st, err);
    }
  }
  free(method);
  lmcp_buf_free(&params);
  lmcp_buf_free(&opts);
  return result;
}

/* cancel(Client, CallId) -> ok | {error, Status, Info} */
static ERL_NIF_TERM nif_cancel(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  ErlNifUInt64 id;
  if (!get_args(env, argv, "ru", &r, &id)) {
    return enif_make_badarg(env);
  }
  lmcp_status st = lmcp_client_cancel(r->client, id);
  return st == LMCP_OK ? atom_ok : lib_error(env, st, NULL);
}

/* notify(Client, Method, Params) -> ok | {error, ...} */
static ERL_NIF_TERM nif_notify(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  client_res *r;
  char *method;
  if (!get_args(env, argv, "rs", &r, &method)) {
    return enif_make_badarg(env);
  }
  lmcp_buf params = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  int e = encode_arg(env, argv[2], &params, &eerr);
  if (e < 0 || (e == 1 && !on_dirty_scheduler() && (r->http || params.len > SMALL_WRITE))) {
    result = enif_schedule_nif(env, "notify", ERL_NIF_DIRTY_JOB_IO_BOUND, nif_notify, argc, argv);
  } else if (e == 0) {
    result = encode_error(env, "params", eerr);
  } else {
    char *err = NULL;
    lmcp_status st = lmcp_client_notify(r->client, method, params.data, params.len, &err);
    result = st == LMCP_OK ? atom_ok : lib_error(env, st, err);
  }
  free(method);
  lmcp_buf_free(&params);
  return result;
}

/* answer_host_request is the one body of respond/4 and host_respond/4:
 * argv[3] (the answer: the result map for status 0, else an error map or
 * nil) is encoded and handed to send, which answers request id with status
 * on handle. The library sends the answer from its own goroutine: only the
 * size of the work done here (validation, hashing) matters, so a large
 * answer reschedules self on a dirty scheduler. */
typedef lmcp_status (*respond_fn)(void *handle, uint64_t id, lmcp_status status, const char *json, size_t len,
                                  char **err);

static ERL_NIF_TERM answer_host_request(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[], void *handle,
                                        uint64_t id, int status, respond_fn send, const char *self_name,
                                        ERL_NIF_TERM (*self)(ErlNifEnv *, int, const ERL_NIF_TERM[]),
                                        ERL_NIF_TERM (*error_of)(ErlNifEnv *, lmcp_status, char *)) {
  lmcp_buf answer = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  int e = encode_arg(env, argv[3], &answer, &eerr);
  if (e < 0 || (e == 1 && !on_dirty_scheduler() && answer.len > SMALL_WRITE)) {
    result = enif_schedule_nif(env, self_name, ERL_NIF_DIRTY_JOB_IO_BOUND, self, argc, argv);
  } else if (e == 0) {
    result = encode_error(env, "answer", eerr);
  } else {
    char *err = NULL;
    lmcp_status st = send(handle, id, status, answer.data, answer.len, &err);
    result = st == LMCP_OK ? atom_ok : error_of(env, st, err);
  }
  lmcp_buf_free(&answer);
  return result;
}

static lmcp_status client_respond(void *handle, uint64_t id, lmcp_status status, const char *json, size_t len,
                                  char **err) {
  return lmcp_client_respond(handle, id, status, json, len, err);
}

/* respond(Client, RequestId, Status, Answer) -> ok | {error, ...} */
static ERL_NIF_TERM nif_respond(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  client_res *r;
  ErlNifUInt64 id;
  int status;
  if (!get_args(env, argv, "rui", &r, &id, &status)) {
    return enif_make_badarg(env);
  }
  return answer_host_request(env, argc, argv, r->client, id, status, client_respond, "respond", nif_respond,
                             lib_error);
}

/* state(Client) -> integer LMCP_STATE_* | {error, ...} */
static ERL_NIF_TERM nif_state(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  if (!get_args(env, argv, "r", &r)) {
    return enif_make_badarg(env);
  }
  lmcp_state s = 0;
  lmcp_status st = lmcp_client_state(r->client, &s);
  return st == LMCP_OK ? enif_make_int(env, s) : lib_error(env, st, NULL);
}

/* server_info(Client) -> {ok, Map} | {error, ...} */
static ERL_NIF_TERM nif_server_info(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  if (!get_args(env, argv, "r", &r)) {
    return enif_make_badarg(env);
  }
  char *json = NULL, *err = NULL;
  size_t len = 0;
  lmcp_status st = lmcp_client_server_info(r->client, &json, &len, &err);
  if (st != LMCP_OK) {
    return lib_error(env, st, err);
  }
  ERL_NIF_TERM t = payload_term(env, json, len);
  lmcp_free(json);
  return enif_make_tuple2(env, atom_ok, t);
}

/* close(Client, TimeoutMs) -> ok | {error, ...}   (dirty I/O: blocks) */
static ERL_NIF_TERM nif_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  ErlNifSInt64 timeout;
  if (!get_args(env, argv, "rl", &r, &timeout)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = lmcp_client_close(r->client, timeout, &err);
  if (st == LMCP_E_INVALID_HANDLE) {
    lmcp_free(err);
    return atom_ok; /* freed: already torn down */
  }
  return st == LMCP_OK ? atom_ok : lib_error(env, st, err);
}

/* free(Client) -> ok: lmcp_client_free. Never waits for the server; any
 * NIF racing it gets {error, -2, ...}. */
static ERL_NIF_TERM nif_free(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  client_res *r;
  if (!get_args(env, argv, "r", &r)) {
    return enif_make_badarg(env);
  }
  lmcp_client_free(r->client);
  return atom_ok;
}

/* decode_json(Binary) -> {ok, Term} | {error, Reason}: the decoder the
 * callbacks use, for tests and measurements. */
static ERL_NIF_TERM nif_decode_json(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  ErlNifBinary bin;
  if (!enif_inspect_binary(env, argv[0], &bin)) {
    return enif_make_badarg(env);
  }
  if (bin.size > DECODE_LIMIT && !on_dirty_scheduler()) {
    return enif_schedule_nif(env, "decode_json", ERL_NIF_DIRTY_JOB_CPU_BOUND, nif_decode_json, argc, argv);
  }
  ERL_NIF_TERM t;
  const char *err = NULL;
  size_t off = 0;
  if (lmcp_json_to_term(env, (const char *)bin.data, bin.size, &t, &err, &off)) {
    return enif_make_tuple2(env, atom_ok, t);
  }
  return enif_make_tuple2(env, atom_error, enif_make_tuple2(env, make_str(env, err), enif_make_uint64(env, off)));
}

/* encode_json(Term) -> {ok, Binary} | {error, {encode_failed, Msg}} */
static ERL_NIF_TERM nif_encode_json(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  lmcp_buf buf = {0};
  const char *err = NULL;
  buf.limit = on_dirty_scheduler() ? 0 : ENCODE_LIMIT;
  if (!lmcp_term_to_json(env, argv[0], &buf, &err)) {
    int over = buf.over;
    lmcp_buf_free(&buf);
    if (over) {
      return enif_schedule_nif(env, "encode_json", ERL_NIF_DIRTY_JOB_CPU_BOUND, nif_encode_json, argc, argv);
    }
    return encode_error(env, "term", err);
  }
  ERL_NIF_TERM t = make_bin(env, buf.data, buf.len);
  lmcp_buf_free(&buf);
  return enif_make_tuple2(env, atom_ok, t);
}

/* The host NIFs (defined at the end of this file). */
static ERL_NIF_TERM nif_host_new(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_set_handlers(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_connect(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_wait_ready(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_servers(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_list(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_call_tool(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_call(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_cancel(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_respond(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_close(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_free(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static ERL_NIF_TERM nif_host_search_tools(ErlNifEnv *, int, const ERL_NIF_TERM[]);
static int host_type_init(ErlNifEnv *env);

static ErlNifFunc nif_funcs[] = {
    {"version", 0, nif_version, 0},
    {"abi_version", 0, nif_abi_version, 0},
    {"features", 0, nif_features, 0},
    {"diagnostics", 0, nif_diagnostics, 0},
    {"client_new", 1, nif_client_new, 0},
    {"adopt", 1, nif_adopt, 0},
    {"set_handlers", 2, nif_set_handlers, 0},
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
    {"host_set_handlers", 2, nif_host_set_handlers, 0},
    {"host_connect", 1, nif_host_connect, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_wait_ready", 2, nif_host_wait_ready, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_servers", 1, nif_host_servers, 0},
    {"host_list", 2, nif_host_list, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_call_tool", 4, nif_host_call_tool, 0},
    {"host_call", 5, nif_host_call, 0},
    {"host_cancel", 2, nif_host_cancel, 0},
    {"host_respond", 4, nif_host_respond, 0},
    {"host_close", 2, nif_host_close, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"host_free", 1, nif_host_free, 0},
    {"host_search_tools", 3, nif_host_search_tools, ERL_NIF_DIRTY_JOB_IO_BOUND},
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
  atom_ok = enif_make_atom(env, "ok");
  atom_error = enif_make_atom(env, "error");
  atom_lmcp_done = enif_make_atom(env, "lmcp_done");
  atom_lmcp_event = enif_make_atom(env, "lmcp_event");
  atom_lmcp_host_request = enif_make_atom(env, "lmcp_host_request");
  atom_lmcp_raw = enif_make_atom(env, "lmcp_raw");
  atom_encode_failed = enif_make_atom(env, "encode_failed");
  ErlNifResourceTypeInit init = {.dtor = client_dtor, .down = client_down, .members = 3};
  client_type = enif_init_resource_type(env, "lmcp_client", &init, ERL_NIF_RT_CREATE, NULL);
  if (client_type == NULL || host_type_init(env) != 0) {
    return 1;
  }
  return 0;
}

ERL_NIF_INIT(Elixir.LemonMCP.NIF, nif_funcs, load, NULL, NULL, NULL)

/* ------------------------------------------------------------------ host */

/* One resource per lmcp_host, owned (monitored) by the process that created
 * it, with the client's discipline: the owner's exit, host_free/1 and the
 * destructor each just call lmcp_host_free, which may race any other host
 * call (a later one gets LMCP_E_INVALID_HANDLE: host handles are never
 * reused), so the shim keeps no in-use count. Host NIFs that wait (connect
 * spawns every server, wait_ready, the lists that may fetch, close) run on
 * dirty I/O schedulers; the calls never block. Messages are the client's:
 * {lmcp_done, CallId, Status, Payload} to the caller, {lmcp_event, Tag,
 * Kind, Payload} and {lmcp_host_request, Tag, RequestId, Kind, Payload} to
 * the process that set the handlers; every event and request payload has a
 * "server" member. */

static ErlNifResourceType *host_type;

typedef struct {
  lmcp_host *host; /* freed or not, always a handle the library knows */
  ErlNifPid owner;
  ErlNifMonitor mon;
} host_res;

static void host_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  lmcp_host_free(((host_res *)obj)->host);
}

static void host_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
  (void)env;
  (void)pid;
  (void)mon;
  lmcp_host_free(((host_res *)obj)->host); /* the owner died: close its host */
}

static int host_type_init(ErlNifEnv *env) {
  ErlNifResourceTypeInit init = {.dtor = host_dtor, .down = host_down, .members = 3};
  host_type = enif_init_resource_type(env, "lmcp_host", &init, ERL_NIF_RT_CREATE, NULL);
  return host_type == NULL ? 1 : 0;
}

/* host_error is lib_error for a host: LMCP_E_INVALID_HANDLE can only mean
 * that the host was freed. */
static ERL_NIF_TERM host_error(ErlNifEnv *env, lmcp_status st, char *err) {
  if (st != LMCP_E_INVALID_HANDLE) {
    return lib_error(env, st, err);
  }
  lmcp_free(err);
  ERL_NIF_TERM m = enif_make_new_map(env);
  enif_make_map_put(env, m, make_str(env, "status"), enif_make_int(env, LMCP_E_INVALID_HANDLE), &m);
  enif_make_map_put(env, m, make_str(env, "message"),
                    make_str(env, "the host was freed (its owner exited or host_free/1 was called)"), &m);
  return enif_make_tuple3(env, atom_error, enif_make_int(env, LMCP_E_INVALID_HANDLE), m);
}

static ERL_NIF_TERM host_status(ErlNifEnv *env, lmcp_status st, char *err) {
  return st == LMCP_OK ? atom_ok : host_error(env, st, err);
}

/* get_host decodes a host resource. */
static int get_host(ErlNifEnv *env, ERL_NIF_TERM t, host_res **r) {
  return enif_get_resource(env, t, host_type, (void **)r);
}

/* host_new(Config) -> {ok, Host} | {error, Status, Info}; the caller owns it. */
static ERL_NIF_TERM nif_host_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  if (!enif_is_map(env, argv[0])) {
    return enif_make_badarg(env);
  }
  lmcp_buf buf = {0};
  const char *eerr = NULL;
  if (!lmcp_term_to_json(env, argv[0], &buf, &eerr)) {
    lmcp_buf_free(&buf);
    return encode_error(env, "config", eerr);
  }
  lmcp_host *h = NULL;
  char *err = NULL;
  lmcp_status st = lmcp_host_new(buf.data, buf.len, &h, &err);
  lmcp_buf_free(&buf);
  if (st != LMCP_OK) {
    return lib_error(env, st, err);
  }
  host_res *r = enif_alloc_resource(host_type, sizeof(*r));
  memset(r, 0, sizeof(*r));
  r->host = h;
  enif_self(env, &r->owner);
  ERL_NIF_TERM t = enif_make_resource(env, r);
  if (enif_monitor_process(env, r, &r->owner, &r->mon) != 0) {
    lmcp_host_free(h); /* the owner is already gone */
  }
  enif_release_resource(r);
  return enif_make_tuple2(env, atom_ok, t);
}

/* host_set_handlers(Host, Tag) -> ok | {error, ...} */
static ERL_NIF_TERM nif_host_set_handlers(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  host_res *r;
  if (!get_host(env, argv[0], &r)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  /* Each registration's destroy runs even when the call fails. */
  lmcp_status st = lmcp_host_set_event_handler(r->host, on_event, new_reg(env, argv[1]), destroy_reg, &err);
  if (st == LMCP_OK) {
    st = lmcp_host_set_host_request_handler(r->host, on_host_request, new_reg(env, argv[1]), destroy_reg, &err);
  }
  return host_status(env, st, err);
}

/* host_connect(Host) -> ok | {error, ...}   (dirty I/O) */
static ERL_NIF_TERM nif_host_connect(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  host_res *r;
  if (!get_host(env, argv[0], &r)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = lmcp_host_connect(r->host, &err);
  return host_status(env, st, err);
}

/* host_wait_ready(Host, TimeoutMs) -> ok | {error, ...}   (dirty I/O) */
static ERL_NIF_TERM nif_host_wait_ready(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  host_res *r;
  ErlNifSInt64 timeout;
  if (!get_host(env, argv[0], &r) || !enif_get_int64(env, argv[1], &timeout)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = lmcp_host_wait_ready(r->host, timeout, &err);
  return host_status(env, st, err);
}

static ERL_NIF_TERM host_json(ErlNifEnv *env, ERL_NIF_TERM t,
                              lmcp_status (*fn)(lmcp_host *, char **, size_t *, char **)) {
  host_res *r;
  if (!get_host(env, t, &r)) {
    return enif_make_badarg(env);
  }
  char *json = NULL, *err = NULL;
  size_t len = 0;
  lmcp_status st = fn(r->host, &json, &len, &err);
  if (st != LMCP_OK) {
    return host_error(env, st, err);
  }
  ERL_NIF_TERM result = enif_make_tuple2(env, atom_ok, payload_term(env, json, len));
  lmcp_free(json);
  return result;
}

/* host_servers(Host) -> {ok, Map} | {error, ...}   (never waits) */
static ERL_NIF_TERM nif_host_servers(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return host_json(env, argv[0], lmcp_host_servers);
}

/* host_list(Host, Kind) -> {ok, Map} | {error, ...}; Kind is tools, prompts
 * or resources.   (dirty I/O: a stale list is fetched) */
static ERL_NIF_TERM nif_host_list(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char kind[16];
  if (!enif_get_atom(env, argv[1], kind, sizeof kind, ERL_NIF_LATIN1)) {
    return enif_make_badarg(env);
  }
  if (strcmp(kind, "tools") == 0) {
    return host_json(env, argv[0], lmcp_host_list_tools);
  }
  if (strcmp(kind, "prompts") == 0) {
    return host_json(env, argv[0], lmcp_host_list_prompts);
  }
  if (strcmp(kind, "resources") == 0) {
    return host_json(env, argv[0], lmcp_host_list_resources);
  }
  return enif_make_badarg(env);
}

/* host_start_call is the one body of host_call_tool/4 and host_call/5:
 * argv[0] is the host, argv[1 .. nstr] NUL-free binaries (the tool name; or
 * the server and the method), then the JSON arguments and the options.
 * start calls the library with the strings and the two encoded buffers.
 * Arguments too large to encode on a normal scheduler reschedule self on a
 * dirty one. {lmcp_done, CallId, Status, Payload} goes to the caller. */
typedef lmcp_status (*host_call_fn)(lmcp_host *host, char **strs, const lmcp_buf *args, const lmcp_buf *opts,
                                    call_box *box, lmcp_call_id *id, char **err);

static ERL_NIF_TERM host_start_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[], int nstr,
                                    const char *args_name, const char *self_name,
                                    ERL_NIF_TERM (*self)(ErlNifEnv *, int, const ERL_NIF_TERM[]),
                                    host_call_fn start) {
  host_res *r;
  char *strs[2] = {NULL, NULL};
  int ok = get_host(env, argv[0], &r);
  for (int i = 0; ok && i < nstr; i++) {
    ok = (strs[i] = copy_cstr(env, argv[1 + i])) != NULL;
  }
  if (!ok) {
    free(strs[0]);
    free(strs[1]);
    return enif_make_badarg(env);
  }
  lmcp_buf args = {0}, opts = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  int e1 = encode_arg(env, argv[1 + nstr], &args, &eerr);
  int e2 = e1 == 1 ? encode_arg(env, argv[2 + nstr], &opts, &eerr) : 1;
  if (e1 < 0 || e2 < 0) {
    result = enif_schedule_nif(env, self_name, ERL_NIF_DIRTY_JOB_IO_BOUND, self, argc, argv);
  } else if (e1 == 0 || e2 == 0) {
    result = encode_error(env, e1 == 0 ? args_name : "options", eerr);
  } else {
    call_box *box = enif_alloc(sizeof(*box));
    enif_self(env, &box->pid);
    lmcp_call_id id = 0;
    char *err = NULL;
    lmcp_status st = start(r->host, strs, &args, &opts, box, &id, &err);
    if (st == LMCP_OK) {
      result = enif_make_tuple2(env, atom_ok, enif_make_uint64(env, id));
    } else {
      enif_free(box); /* not accepted: on_done never runs */
      result = host_error(env, st, err);
    }
  }
  free(strs[0]);
  free(strs[1]);
  lmcp_buf_free(&args);
  lmcp_buf_free(&opts);
  return result;
}

static lmcp_status start_tool_call(lmcp_host *host, char **strs, const lmcp_buf *args, const lmcp_buf *opts,
                                   call_box *box, lmcp_call_id *id, char **err) {
  return lmcp_host_call_tool(host, strs[0], args->data, args->len, opts->data, opts->len, on_done, box, id, err);
}

static lmcp_status start_server_call(lmcp_host *host, char **strs, const lmcp_buf *params, const lmcp_buf *opts,
                                     call_box *box, lmcp_call_id *id, char **err) {
  return lmcp_host_call(host, strs[0], strs[1], params->data, params->len, opts->data, opts->len, on_done, box, id,
                        err);
}

/* host_call_tool(Host, Name, Args, Options) -> {ok, CallId} | {error, ...} */
static ERL_NIF_TERM nif_host_call_tool(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  return host_start_call(env, argc, argv, 1, "arguments", "host_call_tool", nif_host_call_tool, start_tool_call);
}

/* host_call(Host, Server, Method, Params, Options) -> {ok, CallId} | {error, ...} */
static ERL_NIF_TERM nif_host_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  return host_start_call(env, argc, argv, 2, "params", "host_call", nif_host_call, start_server_call);
}

/* host_cancel(Host, CallId) -> ok | {error, ...} */
static ERL_NIF_TERM nif_host_cancel(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  host_res *r;
  ErlNifUInt64 id;
  if (!get_host(env, argv[0], &r) || !enif_get_uint64(env, argv[1], &id)) {
    return enif_make_badarg(env);
  }
  return host_status(env, lmcp_host_cancel(r->host, id), NULL);
}

static lmcp_status host_respond(void *handle, uint64_t id, lmcp_status status, const char *json, size_t len,
                                char **err) {
  return lmcp_host_respond(handle, id, status, json, len, err);
}

/* host_respond(Host, RequestId, Status, Answer) -> ok | {error, ...} */
static ERL_NIF_TERM nif_host_respond(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  host_res *r;
  ErlNifUInt64 id;
  int status;
  if (!get_host(env, argv[0], &r) || !enif_get_uint64(env, argv[1], &id) || !enif_get_int(env, argv[2], &status)) {
    return enif_make_badarg(env);
  }
  return answer_host_request(env, argc, argv, r->host, id, status, host_respond, "host_respond", nif_host_respond,
                             host_error);
}

/* host_close(Host, TimeoutMs) -> ok | {error, ...}   (dirty I/O) */
static ERL_NIF_TERM nif_host_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  host_res *r;
  ErlNifSInt64 timeout;
  if (!get_host(env, argv[0], &r) || !enif_get_int64(env, argv[1], &timeout)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = lmcp_host_close(r->host, timeout, &err);
  if (st == LMCP_E_INVALID_HANDLE) {
    lmcp_free(err);
    return atom_ok; /* freed: already torn down */
  }
  return host_status(env, st, err);
}

/* host_free(Host) -> ok (never waits for a server) */
static ERL_NIF_TERM nif_host_free(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  host_res *r;
  if (!get_host(env, argv[0], &r)) {
    return enif_make_badarg(env);
  }
  lmcp_host_free(r->host);
  return atom_ok;
}

/* host_search_tools(Host, Query, Options) -> {ok, Map} | {error, ...}:
 * lmcp_host_search_tools with Query a NUL-free binary and Options a map or
 * nil.   (dirty I/O: a stale list is fetched) */
static ERL_NIF_TERM nif_host_search_tools(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  host_res *r;
  char *query = NULL;
  if (!get_host(env, argv[0], &r) || (query = copy_cstr(env, argv[1])) == NULL) {
    return enif_make_badarg(env);
  }
  lmcp_buf opts = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  if (encode_arg(env, argv[2], &opts, &eerr) != 1) { /* a dirty NIF has no limit: only a bad term fails */
    result = encode_error(env, "options", eerr);
  } else {
    char *json = NULL, *err = NULL;
    size_t len = 0;
    lmcp_status st = lmcp_host_search_tools(r->host, query, opts.data, opts.len, &json, &len, &err);
    result = st == LMCP_OK ? enif_make_tuple2(env, atom_ok, payload_term(env, json, len)) : host_error(env, st, err);
    lmcp_free(json);
  }
  free(query);
  lmcp_buf_free(&opts);
  return result;
}
