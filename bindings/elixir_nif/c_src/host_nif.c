/* host_nif.c — the host's NIFs: an lmcp_host as a handle kind
 * (handle_nif.c), and what only a host has (wait_ready, the aggregated
 * lists, call_tool, a call to one server, tool search).
 *
 * Host NIFs that wait (connect spawns every server, wait_ready, the lists
 * that may fetch, close) run on dirty I/O schedulers; the calls never
 * block. Messages are the client's: {lmcp_done, CallId, Status, Payload}
 * to the caller, {lmcp_event, Tag, Kind, Payload} and {lmcp_app_request,
 * Tag, RequestId, Kind, Payload} to the process that set the handlers;
 * every event and request payload has a "server" member. */
#include <stdlib.h>
#include <string.h>

#include "lmcp_nif.h"

/* The NIFs every kind has (host_set_handlers, host_connect, host_cancel, host_respond, host_close,
 * host_free: see LMCP_DEFINE_KIND_NIFS). */
LMCP_DEFINE_KIND(host, "the host was freed (its owner exited or host_free/1 was called)");
LMCP_DEFINE_KIND_NIFS(host, host_)

#define KIND (&lmcp_host_kind)

/* host_new(Config) -> {ok, Host} | {error, Status, Info}; the caller owns it. */
ERL_NIF_TERM nif_host_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return lmcp_handle_new(env, argv, KIND, NULL);
}

/* host_new_file(Path, Options) -> {ok, Host} | {error, Status, Info}: the
 * config file at Path (a NUL-free binary), read by the library
 * (lmcp_host_new_file); Options is a map (strict, inputs, workspace_folder,
 * start, override) or nil. The caller owns the host. (dirty I/O: the file
 * is read) */
ERL_NIF_TERM nif_host_new_file(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char *path = lmcp_copy_cstr(env, argv[0]);
  if (path == NULL) {
    return enif_make_badarg(env);
  }
  lmcp_buf opts = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  if (lmcp_encode_arg(env, argv[1], &opts, &eerr) !=
      1) { /* a dirty NIF has no limit: only a bad term fails */
    result = lmcp_encode_error(env, "options", eerr);
  } else {
    lmcp_host *h = NULL;
    char *err = NULL;
    lmcp_status st = lmcp_host_new_file(path, opts.data, opts.len, &h, &err);
    result = st == LMCP_OK ? lmcp_handle_adopt(env, KIND, h, NULL) : lmcp_lib_error(env, st, err);
  }
  free(path);
  lmcp_buf_free(&opts);
  return result;
}

/* host_wait_ready(Host, TimeoutMs) -> ok | {error, ...}   (dirty I/O) */
ERL_NIF_TERM nif_host_wait_ready(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r;
  ErlNifSInt64 timeout;
  if (!lmcp_get_args(env, argv, KIND, "rl", &r, &timeout)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = lmcp_host_wait_ready(r->handle, timeout, &err);
  return lmcp_handle_status(env, KIND, st, err);
}

static ERL_NIF_TERM host_json(ErlNifEnv *env, const ERL_NIF_TERM argv[],
                              lmcp_status (*fn)(lmcp_host *, char **, size_t *, char **)) {
  lmcp_res *r;
  if (!lmcp_get_args(env, argv, KIND, "r", &r)) {
    return enif_make_badarg(env);
  }
  char *json = NULL, *err = NULL;
  size_t len = 0;
  lmcp_status st = fn(r->handle, &json, &len, &err);
  return st == LMCP_OK ? lmcp_ok_json(env, json, len) : lmcp_handle_error(env, KIND, st, err);
}

/* host_servers(Host) -> {ok, Map} | {error, ...}   (never waits) */
ERL_NIF_TERM nif_host_servers(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return host_json(env, argv, lmcp_host_servers);
}

/* host_warnings(Host) -> {ok, [Binary]} | {error, ...}   (never waits) */
ERL_NIF_TERM nif_host_warnings(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return host_json(env, argv, lmcp_host_warnings);
}

/* host_list(Host, Kind) -> {ok, Map} | {error, ...}; Kind is tools, prompts
 * or resources.   (dirty I/O: a stale list is fetched) */
ERL_NIF_TERM nif_host_list(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char kind[16];
  if (!enif_get_atom(env, argv[1], kind, sizeof kind, ERL_NIF_LATIN1)) {
    return enif_make_badarg(env);
  }
  if (strcmp(kind, "tools") == 0) {
    return host_json(env, argv, lmcp_host_list_tools);
  }
  if (strcmp(kind, "prompts") == 0) {
    return host_json(env, argv, lmcp_host_list_prompts);
  }
  if (strcmp(kind, "resources") == 0) {
    return host_json(env, argv, lmcp_host_list_resources);
  }
  return enif_make_badarg(env);
}

static lmcp_status start_tool_call(void *handle, char **strs, const lmcp_buf *args, const lmcp_buf *opts,
                                   lmcp_call_box *box, lmcp_call_id *id, char **err) {
  return lmcp_host_call_tool(handle, strs[0], args->data, args->len, opts->data, opts->len, lmcp_on_done, box,
                             id, err);
}

static lmcp_status start_server_call(void *handle, char **strs, const lmcp_buf *params, const lmcp_buf *opts,
                                     lmcp_call_box *box, lmcp_call_id *id, char **err) {
  return lmcp_host_call(handle, strs[0], strs[1], params->data, params->len, opts->data, opts->len,
                        lmcp_on_done, box, id, err);
}

/* host_call_tool(Host, Name, Args, Options) -> {ok, CallId} | {error, ...} */
ERL_NIF_TERM nif_host_call_tool(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  return lmcp_handle_start_call(env, argc, argv, KIND, 1, "arguments", "host_call_tool", nif_host_call_tool,
                                start_tool_call);
}

/* host_call(Host, Server, Method, Params, Options) -> {ok, CallId} | {error, ...} */
ERL_NIF_TERM nif_host_call(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  return lmcp_handle_start_call(env, argc, argv, KIND, 2, "params", "host_call", nif_host_call,
                                start_server_call);
}

/* host_search_tools(Host, Query, Options) -> {ok, Map} | {error, ...}:
 * lmcp_host_search_tools with Query a NUL-free binary and Options a map or
 * nil.   (dirty I/O: a stale list is fetched) */
ERL_NIF_TERM nif_host_search_tools(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r;
  char *query = NULL;
  if (!lmcp_get_args(env, argv, KIND, "rs", &r, &query)) {
    return enif_make_badarg(env);
  }
  lmcp_buf opts = {0};
  const char *eerr = NULL;
  ERL_NIF_TERM result;
  if (lmcp_encode_arg(env, argv[2], &opts, &eerr) !=
      1) { /* a dirty NIF has no limit: only a bad term fails */
    result = lmcp_encode_error(env, "options", eerr);
  } else {
    char *json = NULL, *err = NULL;
    size_t len = 0;
    lmcp_status st = lmcp_host_search_tools(r->handle, query, opts.data, opts.len, &json, &len, &err);
    result = st == LMCP_OK ? lmcp_ok_json(env, json, len) : lmcp_handle_error(env, KIND, st, err);
  }
  free(query);
  lmcp_buf_free(&opts);
  return result;
}
