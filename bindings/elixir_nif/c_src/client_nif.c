/* client_nif.c — the client's NIFs: an lmcp_client as a handle kind
 * (handle_nif.c), and what only a client has (adopt, notify, state,
 * server_info). */
#include <stdlib.h>
#include <string.h>

#include "lmcp_nif.h"

/* The NIFs every kind has (set_handlers, connect, cancel, respond, close,
 * free: see LMCP_DEFINE_KIND_NIFS). */
LMCP_DEFINE_KIND(client, "the client was freed (its owner exited or free/1 was called)");
LMCP_DEFINE_KIND_NIFS(client, )

#define KIND (&lmcp_client_kind)

/* config_is_stdio: config.transport.type == "stdio". */
static int config_is_stdio(ErlNifEnv *env, ERL_NIF_TERM config) {
  ERL_NIF_TERM transport, type;
  ErlNifBinary bin;
  if (!enif_get_map_value(env, config, lmcp_make_str(env, "transport"), &transport) ||
      !enif_get_map_value(env, transport, lmcp_make_str(env, "type"), &type) ||
      !enif_inspect_binary(env, type, &bin)) {
    return 0;
  }
  return bin.size == 5 && memcmp(bin.data, "stdio", 5) == 0;
}

/* client_new(Config) -> {ok, Client} | {error, Status, Info}
 * The caller becomes the owner: the client is freed when it exits. */
ERL_NIF_TERM nif_client_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r = NULL;
  ERL_NIF_TERM result = lmcp_handle_new(env, argv, KIND, &r);
  if (r != NULL) {
    r->http = !config_is_stdio(env, argv[0]); /* not yet shared: no other process has it */
  }
  return result;
}

/* adopt(Client) -> ok | {error, ...}: the caller becomes the owner (the
 * process whose exit frees the client) in place of the creator. */
ERL_NIF_TERM nif_adopt(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, KIND, "r", &r)) {
    return enif_make_badarg(env);
  }
  lmcp_state state;
  if (lmcp_client_state(r->handle, &state) == LMCP_E_INVALID_HANDLE) {
    return lmcp_handle_error(env, KIND, LMCP_E_INVALID_HANDLE, NULL);
  }
  ErlNifPid self;
  enif_self(env, &self);
  ERL_NIF_TERM result = lmcp_atom_ok;
  /* Only the owner's monitor changes; a failed demonitor means the old
   * owner is already down, and its down callback frees the client. */
  enif_mutex_lock(r->mu);
  if (enif_demonitor_process(env, r, &r->mon) != 0 || enif_monitor_process(env, r, &self, &r->mon) != 0) {
    lmcp_client_free(r->handle);
    result = lmcp_handle_error(env, KIND, LMCP_E_INVALID_HANDLE, NULL);
  } else {
    r->owner = self;
  }
  enif_mutex_unlock(r->mu);
  return result;
}

static lmcp_status start_call(void *handle, char **strs, const lmcp_buf *params, const lmcp_buf *opts,
                              lmcp_call_box *box, lmcp_call_id *id, char **err) {
  return lmcp_client_call(handle, strs[0], params->data, params->len, opts->data, opts->len, lmcp_on_done,
                          box, id, err);
}

/* call(Client, Method, Params, Options) -> {ok, CallId} | {error, ...}
 * The completion {lmcp_done, CallId, Status, Payload} goes to the caller.
 * Params and Options are maps or nil. */
ERL_NIF_TERM nif_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  return lmcp_handle_start_call(env, argc, argv, KIND, 1, "params", "call", nif_call, start_call);
}

/* notify(Client, Method, Params) -> ok | {error, ...} */
ERL_NIF_TERM nif_notify(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  lmcp_res *r;
  char *method;
  if (!lmcp_get_args(env, argv, KIND, "rs", &r, &method)) {
    return enif_make_badarg(env);
  }
  lmcp_buf params = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  int e = lmcp_encode_arg(env, argv[2], &params, &eerr);
  if (e < 0 || (e == 1 && !lmcp_on_dirty_scheduler() && (r->http || params.len > LMCP_SMALL_WRITE))) {
    result = enif_schedule_nif(env, "notify", ERL_NIF_DIRTY_JOB_IO_BOUND, nif_notify, argc, argv);
  } else if (e == 0) {
    result = lmcp_encode_error(env, "params", eerr);
  } else {
    char *err = NULL;
    lmcp_status st = lmcp_client_notify(r->handle, method, params.data, params.len, &err);
    result = lmcp_handle_status(env, KIND, st, err);
  }
  free(method);
  lmcp_buf_free(&params);
  return result;
}

/* state(Client) -> integer LMCP_STATE_* | {error, ...} */
ERL_NIF_TERM nif_state(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, KIND, "r", &r)) {
    return enif_make_badarg(env);
  }
  lmcp_state s = 0;
  lmcp_status st = lmcp_client_state(r->handle, &s);
  return st == LMCP_OK ? enif_make_int(env, s) : lmcp_handle_error(env, KIND, st, NULL);
}

/* server_info(Client) -> {ok, Map} | {error, ...} */
ERL_NIF_TERM nif_server_info(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, KIND, "r", &r)) {
    return enif_make_badarg(env);
  }
  char *json = NULL, *err = NULL;
  size_t len = 0;
  lmcp_status st = lmcp_client_server_info(r->handle, &json, &len, &err);
  return st == LMCP_OK ? lmcp_ok_json(env, json, len) : lmcp_handle_error(env, KIND, st, err);
}
