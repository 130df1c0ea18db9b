/* server_nif.c — a host served as one MCP server (lmcp_server_*, the
 * gateway: docs/gateway.md), for LemonMCP.Host.serve/2.
 *
 * A server is a resource of its own ("lmcp_server") that keeps its host's
 * resource alive while it lives; it is freed when garbage-collected or by
 * server_free/1 (lmcp_server_free stops serving first). The waits (wait,
 * stop) and the HTTP listen run on dirty I/O schedulers; nothing here sends
 * a message: the gateway answers its front clients itself. */
#include <stdlib.h>
#include <string.h>

#include "lmcp_nif.h"

typedef struct {
  lmcp_server *handle; /* NULL once freed */
  lmcp_res *host;      /* kept (enif_keep_resource) until the destructor */
  ErlNifMutex *mu;     /* guards handle against a free racing a call */
} server_res;

static ErlNifResourceType *server_type;

static void server_dtor(ErlNifEnv *env, void *obj) {
  (void)env;
  server_res *s = obj;
  if (s->handle != NULL) {
    lmcp_server_free(s->handle);
  }
  if (s->host != NULL) {
    enif_release_resource(s->host);
  }
  if (s->mu != NULL) {
    enif_mutex_destroy(s->mu);
  }
}

int lmcp_server_init(ErlNifEnv *env) {
  server_type = enif_open_resource_type(env, NULL, "lmcp_server", server_dtor, ERL_NIF_RT_CREATE, NULL);
  return server_type == NULL ? 1 : 0;
}

/* The server resource of t (0 when t is not one). */
static int get_server(ErlNifEnv *env, ERL_NIF_TERM t, server_res **out) {
  return enif_get_resource(env, t, server_type, (void **)out);
}

/* The server's handle, NULL once freed. */
static lmcp_server *handle_of(server_res *s) {
  enif_mutex_lock(s->mu);
  lmcp_server *h = s->handle;
  enif_mutex_unlock(s->mu);
  return h;
}

/* ok, or the library's error (a freed server's handle is NULL here, which
 * the library refuses as LMCP_E_INVALID_HANDLE, naming it). */
static ERL_NIF_TERM status_term(ErlNifEnv *env, lmcp_status st, char *err) {
  return st == LMCP_OK ? lmcp_atom_ok : lmcp_lib_error(env, st, err);
}

/* server_new(Host, Options) -> {ok, Server} | {error, Status, Info}:
 * Options is a map of the library's serving options, or nil. */
ERL_NIF_TERM nif_server_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  lmcp_res *host;
  if (!lmcp_get_args(env, argv, &lmcp_host_kind, "r", &host)) {
    return enif_make_badarg(env);
  }
  lmcp_buf opts = {0};
  const char *eerr = NULL;
  if (lmcp_encode_arg(env, argv[1], &opts, &eerr) != 1) {
    lmcp_buf_free(&opts);
    return lmcp_encode_error(env, "options", eerr);
  }
  lmcp_server *h = NULL;
  char *err = NULL;
  lmcp_status st = lmcp_server_new(host->handle, opts.data, opts.len, &h, &err);
  lmcp_buf_free(&opts);
  if (st != LMCP_OK) {
    return lmcp_handle_error(env, &lmcp_host_kind, st, err);
  }
  server_res *s = enif_alloc_resource(server_type, sizeof *s);
  s->handle = h;
  s->host = host;
  s->mu = enif_mutex_create("lmcp_server");
  enif_keep_resource(host);
  ERL_NIF_TERM t = enif_make_resource(env, s);
  enif_release_resource(s);
  return enif_make_tuple2(env, lmcp_atom_ok, t);
}

/* server_serve_http(Server, Addr) -> {ok, Url} | {error, ...}   (dirty I/O) */
ERL_NIF_TERM nif_server_serve_http(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  server_res *s;
  if (!get_server(env, argv[0], &s)) {
    return enif_make_badarg(env);
  }
  char *addr = lmcp_copy_cstr(env, argv[1]);
  if (addr == NULL) {
    return enif_make_badarg(env);
  }
  char *url = NULL, *err = NULL;
  lmcp_status st = lmcp_server_serve_http(handle_of(s), addr, &url, &err);
  free(addr);
  if (st != LMCP_OK) {
    return status_term(env, st, err);
  }
  ERL_NIF_TERM t = lmcp_make_str(env, url);
  lmcp_free(url);
  return enif_make_tuple2(env, lmcp_atom_ok, t);
}

/* server_serve_fds(Server, InFd, OutFd) -> ok | {error, ...} */
ERL_NIF_TERM nif_server_serve_fds(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  server_res *s;
  int in_fd, out_fd;
  if (!get_server(env, argv[0], &s) || !enif_get_int(env, argv[1], &in_fd) ||
      !enif_get_int(env, argv[2], &out_fd)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  return status_term(env, lmcp_server_serve_fds(handle_of(s), in_fd, out_fd, &err), err);
}

static ERL_NIF_TERM timed(ErlNifEnv *env, const ERL_NIF_TERM argv[],
                          lmcp_status (*fn)(lmcp_server *, int64_t, char **)) {
  server_res *s;
  ErlNifSInt64 ms;
  if (!get_server(env, argv[0], &s) || !enif_get_int64(env, argv[1], &ms)) {
    return enif_make_badarg(env);
  }
  char *err = NULL;
  return status_term(env, fn(handle_of(s), ms, &err), err);
}

/* server_wait(Server, TimeoutMs) -> ok | {error, ...}: ok once serving
 * ended (-1: no limit).   (dirty I/O) */
ERL_NIF_TERM nif_server_wait(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return timed(env, argv, lmcp_server_wait);
}

/* server_stop(Server, TimeoutMs) -> ok | {error, ...}: graceful, the calls
 * in flight get TimeoutMs (-1: the library's bound).   (dirty I/O) */
ERL_NIF_TERM nif_server_stop(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  return timed(env, argv, lmcp_server_stop);
}

/* server_free(Server) -> ok: stops serving at once and frees the handle;
 * later calls on it are {error, -2, Info}, Info the library's message.   (dirty I/O: it may wait for the
 * front to close) */
ERL_NIF_TERM nif_server_free(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  server_res *s;
  if (!get_server(env, argv[0], &s)) {
    return enif_make_badarg(env);
  }
  enif_mutex_lock(s->mu);
  lmcp_server *h = s->handle;
  s->handle = NULL;
  enif_mutex_unlock(s->mu);
  if (h != NULL) {
    lmcp_server_free(h);
  }
  return lmcp_atom_ok;
}
