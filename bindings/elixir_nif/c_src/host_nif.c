/* host_nif.c — the host's NIFs: an lmcp_host as a handle kind
 * (handle_nif.c), and what only a host has (wait_ready, the aggregated
 * lists, call_tool, a call to one server, tool search).
 *
 * Host NIFs that wait (connect spawns every server, wait_ready, close) run
 * on dirty I/O schedulers; the calls and the queries (lists, tool search)
 * never block. Messages are the client's: {lmcp_done, CallId, Status, Payload}
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

/* host_pins(Host) -> {ok, Map} | {error, ...}   (dirty IO: it may fetch
 * stale lists) */
ERL_NIF_TERM nif_host_pins(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return host_json(env, argv, lmcp_host_pins);
}

/* host_approve(Host, ApprovalJson) -> ok | {error, ...}   (dirty IO: it
 * writes the pin file) */
ERL_NIF_TERM nif_host_approve(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r;
  char *approval;
  if (!lmcp_get_args(env, argv, KIND, "rs", &r, &approval)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  lmcp_status st = lmcp_host_approve(r->handle, approval, strlen(approval), &err);
  free(approval);
  return lmcp_handle_status(env, KIND, st, err);
}

/* host_warnings(Host) -> {ok, [Binary]} | {error, ...}   (never waits) */
ERL_NIF_TERM nif_host_warnings(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return host_json(env, argv, lmcp_host_warnings);
}

/* host_tool_route(Host, Name) -> {ok, #{server, original_name}} | {error, ...}
 * (never waits: the route the library knows without asking a server) */
ERL_NIF_TERM nif_host_tool_route(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *r;
  char *name;
  if (!lmcp_get_args(env, argv, KIND, "rs", &r, &name)) {
    return enif_make_badarg(env);
  }
  char *json = NULL, *err = NULL;
  size_t len = 0;
  lmcp_status st = lmcp_host_tool_route(r->handle, name, &json, &len, &err);
  free(name);
  return st == LMCP_OK ? lmcp_ok_json(env, json, len) : lmcp_handle_error(env, KIND, st, err);
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

/* The host's queries by the names host.ex gives them: LMCP_QUERY_* of the
 * header. */
static const struct {
  const char *name;
  lmcp_query query;
} k_queries[] = {
    {"list_tools", LMCP_QUERY_LIST_TOOLS},
    {"list_prompts", LMCP_QUERY_LIST_PROMPTS},
    {"list_resources", LMCP_QUERY_LIST_RESOURCES},
    {"search_tools", LMCP_QUERY_SEARCH_TOOLS},
};

static lmcp_status start_query(void *handle, char **strs, const lmcp_buf *args, const lmcp_buf *opts,
                               lmcp_call_box *box, lmcp_call_id *id, char **err) {
  (void)opts;
  lmcp_query q = -1; /* an unknown name: the library refuses it by number */
  for (size_t i = 0; i < sizeof k_queries / sizeof k_queries[0]; i++) {
    if (strcmp(strs[0], k_queries[i].name) == 0) q = k_queries[i].query;
  }
  return lmcp_host_query(handle, q, args->data, args->len, lmcp_on_done, box, id, err);
}

/* host_query(Host, Name, Args, nil) -> {ok, CallId} | {error, ...}: one of
 * the host's lists or its tool search (lmcp_host_query), Name one of
 * k_queries, Args a map or nil; the answer comes as a call's does, in
 * {lmcp_done, CallId, Status, Payload}. Never waits, so the lists no longer
 * hold a dirty scheduler while a stale list is fetched. (A query takes no
 * options: the fourth argument keeps the shape of the call NIFs.) */
ERL_NIF_TERM nif_host_query(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  return lmcp_handle_start_call(env, argc, argv, KIND, 1, "args", "host_query", nif_host_query, start_query);
}
