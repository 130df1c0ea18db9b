/* handle_nif.c — one handle kind: the resource a client or a host lives in,
 * the callbacks that turn its completions, events and app requests into
 * messages, and the NIF bodies both kinds share (client_nif.c and
 * host_nif.c name their kind). See the top of lmcp_nif.c for the messages
 * and the scheduling rules. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmcp_nif.h"

static ERL_NIF_TERM atom_lmcp_done, atom_lmcp_event, atom_lmcp_app_request, atom_lmcp_telemetry;

/* ------------------------------------------------------------ the handle */

static void res_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  lmcp_res *r = obj;
  if (r->handle != NULL) {
    r->kind->free_handle(r->handle);
  }
  if (r->mu != NULL) {
    enif_mutex_destroy(r->mu);
  }
}

static void res_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
  (void)env;
  (void)pid;
  (void)mon;
  lmcp_res *r = obj;
  r->kind->free_handle(r->handle); /* the owner died: close its handle */
}

int lmcp_kind_init(ErlNifEnv *env, lmcp_kind *kind) {
  atom_lmcp_done = enif_make_atom(env, "lmcp_done");
  atom_lmcp_event = enif_make_atom(env, "lmcp_event");
  atom_lmcp_app_request = enif_make_atom(env, "lmcp_app_request");
  atom_lmcp_telemetry = enif_make_atom(env, "lmcp_telemetry");
  char name[32];
  snprintf(name, sizeof name, "lmcp_%s", kind->noun);
  ErlNifResourceTypeInit init = {.dtor = res_dtor, .down = res_down, .members = 3};
  kind->type = enif_init_resource_type(env, name, &init, ERL_NIF_RT_CREATE, NULL);
  return kind->type == NULL ? 1 : 0;
}

ERL_NIF_TERM lmcp_handle_error(ErlNifEnv *env, const lmcp_kind *kind, lmcp_status st, char *err) {
  if (st != LMCP_E_INVALID_HANDLE) {
    return lmcp_lib_error(env, st, err);
  }
  lmcp_free(err);
  ERL_NIF_TERM m = enif_make_new_map(env);
  enif_make_map_put(env, m, lmcp_make_str(env, "status"), enif_make_int(env, LMCP_E_INVALID_HANDLE), &m);
  enif_make_map_put(env, m, lmcp_make_str(env, "message"), lmcp_make_str(env, kind->freed_message), &m);
  return enif_make_tuple3(env, lmcp_atom_error, enif_make_int(env, LMCP_E_INVALID_HANDLE), m);
}

ERL_NIF_TERM lmcp_handle_status(ErlNifEnv *env, const lmcp_kind *kind, lmcp_status st, char *err) {
  return st == LMCP_OK ? lmcp_atom_ok : lmcp_handle_error(env, kind, st, err);
}

/* There is no "in use" step: a freed handle is still a resource, and the
 * library answers its calls with LMCP_E_INVALID_HANDLE (lmcp_handle_error
 * says how it was freed). */
int lmcp_get_args(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char **copied[8]; /* every string copied so far, freed again on failure */
  int ncopied = 0;
  int ok = 1;
  for (int i = 0; ok && fmt[i] != 0; i++) {
    switch (fmt[i]) {
    case 'r': ok = enif_get_resource(env, argv[i], kind->type, (void **)va_arg(ap, lmcp_res **)); break;
    case 's': {
      char **out = va_arg(ap, char **);
      *out = ncopied < (int)(sizeof copied / sizeof copied[0]) ? lmcp_copy_cstr(env, argv[i]) : NULL;
      ok = *out != NULL;
      if (ok) {
        copied[ncopied++] = out;
      }
      break;
    }
    case 'u': ok = enif_get_uint64(env, argv[i], va_arg(ap, ErlNifUInt64 *)); break;
    case 'i': ok = enif_get_int(env, argv[i], va_arg(ap, int *)); break;
    case 'l': ok = enif_get_int64(env, argv[i], va_arg(ap, ErlNifSInt64 *)); break;
    default: ok = 0;
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

/* ------------------------------------------------------------ callbacks */

/* A registration's user_data: the receiver and a tag term in its own env. */
typedef struct {
  ErlNifPid pid;
  ErlNifEnv *env;
  ERL_NIF_TERM tag;
} reg_box;

void lmcp_on_done(void *user_data, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  lmcp_call_box *box = user_data;
  ErlNifEnv *env = enif_alloc_env();
  ERL_NIF_TERM msg = enif_make_tuple4(env, atom_lmcp_done, enif_make_uint64(env, id), enif_make_int(env, st),
                                      lmcp_payload_term(env, json, len));
  enif_send(NULL, &box->pid, env, msg); /* false if the receiver is gone: nothing to do */
  enif_free_env(env);
  enif_free(box);
}

static void on_event(void *user_data, const char *kind, const char *json, size_t len) {
  reg_box *box = user_data;
  ErlNifEnv *env = enif_alloc_env();
  ERL_NIF_TERM msg = enif_make_tuple4(env, atom_lmcp_event, enif_make_copy(env, box->tag),
                                      enif_make_atom(env, kind), lmcp_payload_term(env, json, len));
  enif_send(NULL, &box->pid, env, msg);
  enif_free_env(env);
}

/* A telemetry record: the event's shape under its own tag, so that the
 * owner tells records from events at a glance (kind is static text). */
static void on_telemetry(void *user_data, const char *kind, const char *json, size_t len) {
  reg_box *box = user_data;
  ErlNifEnv *env = enif_alloc_env();
  ERL_NIF_TERM msg = enif_make_tuple4(env, atom_lmcp_telemetry, enif_make_copy(env, box->tag),
                                      enif_make_atom(env, kind), lmcp_payload_term(env, json, len));
  enif_send(NULL, &box->pid, env, msg);
  enif_free_env(env);
}

static void on_app_request(void *user_data, lmcp_request_id id, const char *kind, const char *json,
                           size_t len) {
  reg_box *box = user_data;
  ErlNifEnv *env = enif_alloc_env();
  ERL_NIF_TERM args[5] = {atom_lmcp_app_request, enif_make_copy(env, box->tag), enif_make_uint64(env, id),
                          enif_make_atom(env, kind), lmcp_payload_term(env, json, len)};
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

/* ------------------------------------------------------------ NIF bodies */

ERL_NIF_TERM lmcp_handle_new(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind,
                             lmcp_res **res) {
  lmcp_buf buf = {0};
  ERL_NIF_TERM result;
  if (!lmcp_encode_config(env, argv[0], &buf, &result)) {
    return result;
  }
  void *h = NULL;
  char *err = NULL;
  lmcp_status st = kind->create(buf.data, buf.len, &h, &err);
  lmcp_buf_free(&buf);
  if (st != LMCP_OK) {
    return lmcp_lib_error(env, st, err);
  }
  return lmcp_handle_adopt(env, kind, h, res);
}

ERL_NIF_TERM lmcp_handle_adopt(ErlNifEnv *env, const lmcp_kind *kind, void *h, lmcp_res **res) {
  lmcp_res *r = enif_alloc_resource(kind->type, sizeof(*r));
  memset(r, 0, sizeof(*r));
  r->kind = kind;
  r->handle = h;
  r->mu = enif_mutex_create("lmcp_res");
  enif_self(env, &r->owner);
  ERL_NIF_TERM t = enif_make_resource(env, r);
  if (enif_monitor_process(env, r, &r->owner, &r->mon) != 0) {
    kind->free_handle(h); /* cannot happen: the caller is alive */
  }
  if (res != NULL) {
    *res = r;
  }
  enif_release_resource(r); /* t holds it */
  return enif_make_tuple2(env, lmcp_atom_ok, t);
}

ERL_NIF_TERM lmcp_handle_set_handlers(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind) {
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, kind, "r", &r)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  /* Each registration's destroy runs even when the call fails. */
  lmcp_status st = kind->set_event_handler(r->handle, on_event, new_reg(env, argv[1]), destroy_reg, &err);
  if (st == LMCP_OK) {
    st = kind->set_app_request_handler(r->handle, on_app_request, new_reg(env, argv[1]), destroy_reg, &err);
  }
  return lmcp_handle_status(env, kind, st, err);
}

ERL_NIF_TERM lmcp_handle_set_telemetry(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind) {
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, kind, "r", &r)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  /* destroy runs even when the call fails. */
  lmcp_status st =
      kind->set_telemetry_handler(r->handle, on_telemetry, new_reg(env, argv[1]), destroy_reg, &err);
  return lmcp_handle_status(env, kind, st, err);
}

ERL_NIF_TERM lmcp_handle_connect(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind) {
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, kind, "r", &r)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = kind->connect(r->handle, &err);
  return lmcp_handle_status(env, kind, st, err);
}

ERL_NIF_TERM lmcp_handle_cancel(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind) {
  lmcp_res *r;
  ErlNifUInt64 id;
  if (!lmcp_get_args(env, argv, kind, "ru", &r, &id)) {
    return enif_make_badarg(env);
  }
  return lmcp_handle_status(env, kind, kind->cancel(r->handle, id), NULL);
}

/* argv[3] (the answer: the result map for status 0, else an error map or
 * nil) is encoded and sent. The library sends the answer from its own
 * goroutine: only the size of the work done here (validation, hashing)
 * matters, so a large answer reschedules on a dirty scheduler. */
ERL_NIF_TERM lmcp_handle_respond(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[], const lmcp_kind *kind,
                                 const char *self_name, lmcp_nif_fn self) {
  lmcp_res *r;
  ErlNifUInt64 id;
  int status;
  if (!lmcp_get_args(env, argv, kind, "rui", &r, &id, &status)) {
    return enif_make_badarg(env);
  }
  lmcp_buf answer = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  int e = lmcp_encode_arg(env, argv[3], &answer, &eerr);
  if (e < 0 || (e == 1 && !lmcp_on_dirty_scheduler() && answer.len > LMCP_SMALL_WRITE)) {
    result = enif_schedule_nif(env, self_name, ERL_NIF_DIRTY_JOB_IO_BOUND, self, argc, argv);
  } else if (e == 0) {
    result = lmcp_encode_error(env, "answer", eerr);
  } else {
    char *err = NULL;
    lmcp_status st = kind->respond(r->handle, id, status, answer.data, answer.len, &err);
    result = lmcp_handle_status(env, kind, st, err);
  }
  lmcp_buf_free(&answer);
  return result;
}

ERL_NIF_TERM lmcp_handle_close(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind) {
  lmcp_res *r;
  ErlNifSInt64 timeout;
  if (!lmcp_get_args(env, argv, kind, "rl", &r, &timeout)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = kind->close(r->handle, timeout, &err);
  if (st == LMCP_E_INVALID_HANDLE) {
    lmcp_free(err);
    return lmcp_atom_ok; /* freed: already torn down */
  }
  return lmcp_handle_status(env, kind, st, err);
}

/* Never waits for a server; any NIF racing it gets {error, -2, ...}. */
ERL_NIF_TERM lmcp_handle_free(ErlNifEnv *env, const ERL_NIF_TERM argv[], const lmcp_kind *kind) {
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, kind, "r", &r)) {
    return enif_make_badarg(env);
  }
  kind->free_handle(r->handle);
  return lmcp_atom_ok;
}

ERL_NIF_TERM lmcp_handle_start_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[],
                                    const lmcp_kind *kind, int nstr, const char *args_name,
                                    const char *self_name, lmcp_nif_fn self, lmcp_start_fn start) {
  ErlNifTime t0 = enif_monotonic_time(ERL_NIF_USEC);
  lmcp_res *r;
  char *strs[2] = {NULL, NULL};
  if (!lmcp_get_args(env, argv, kind, nstr == 1 ? "rs" : "rss", &r, &strs[0], &strs[1])) {
    return enif_make_badarg(env);
  }
  lmcp_buf args = {0}, opts = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  int e1 = lmcp_encode_arg(env, argv[1 + nstr], &args, &eerr);
  int e2 = e1 == 1 ? lmcp_encode_arg(env, argv[2 + nstr], &opts, &eerr) : 1;
  if (e1 < 0 || e2 < 0) {
    result = enif_schedule_nif(env, self_name, ERL_NIF_DIRTY_JOB_IO_BOUND, self, argc, argv);
  } else if (e1 == 0 || e2 == 0) {
    result = lmcp_encode_error(env, e1 == 0 ? args_name : "options", eerr);
  } else {
    /* Never waits (see the top of lmcp_nif.c): fine on a normal scheduler. */
    lmcp_call_box *box = enif_alloc(sizeof(*box));
    enif_self(env, &box->pid);
    lmcp_call_id id = 0;
    char *err = NULL;
    lmcp_status st = start(r->handle, strs, &args, &opts, box, &id, &err);
    lmcp_consume_since(env, t0);
    if (st == LMCP_OK) {
      result = enif_make_tuple2(env, lmcp_atom_ok, enif_make_uint64(env, id));
    } else {
      enif_free(box); /* not accepted: lmcp_on_done never runs */
      result = lmcp_handle_error(env, kind, st, err);
    }
  }
  free(strs[0]);
  free(strs[1]);
  lmcp_buf_free(&args);
  lmcp_buf_free(&opts);
  return result;
}
