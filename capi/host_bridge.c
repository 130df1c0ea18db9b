/* Public lmcp_host entry points that take user_data: they pass it to Go as
 * an integer (see host.go). */
#include "bridge.h"

LMCP_BRIDGE_DEFINE_SETTERS(host)

lmcp_status lmcp_host_call_tool(lmcp_host *host, const char *name, const char *args_json, size_t args_len,
                                const char *options_json, size_t options_len, lmcp_done_cb done,
                                void *user_data, lmcp_call_id *call_id_out, char **err_out) {
  return lmcpgo_host_call_tool(host, name, args_json, args_len, options_json, options_len, done,
                               (uintptr_t)user_data, call_id_out, err_out);
}

lmcp_status lmcp_host_call(lmcp_host *host, const char *server, const char *method, const char *params_json,
                           size_t params_len, const char *options_json, size_t options_len, lmcp_done_cb done,
                           void *user_data, lmcp_call_id *call_id_out, char **err_out) {
  return lmcpgo_host_call(host, server, method, params_json, params_len, options_json, options_len, done,
                          (uintptr_t)user_data, call_id_out, err_out);
}

lmcp_status lmcp_host_query(lmcp_host *host, lmcp_query query, const char *args_json, size_t args_len,
                            lmcp_done_cb done, void *user_data, lmcp_call_id *call_id_out, char **err_out) {
  return lmcpgo_host_query(host, query, args_json, args_len, done, (uintptr_t)user_data, call_id_out,
                           err_out);
}

static lmcp_status host_call_start(lmcp_bridge_submit *s, lmcp_bridge_sync *w, char **result_out,
                                   size_t *result_len_out, char **err_out) {
  return lmcpgo_host_call_sync(s->handle, s->server, s->name, s->params, s->params_len, s->options,
                               s->options_len, result_out, result_len_out, w, err_out);
}

static lmcp_status host_call_tool_start(lmcp_bridge_submit *s, lmcp_bridge_sync *w, char **result_out,
                                        size_t *result_len_out, char **err_out) {
  return lmcpgo_host_call_tool_sync(s->handle, s->name, s->params, s->params_len, s->options, s->options_len,
                                    result_out, result_len_out, w, err_out);
}

/* The call starts in Go, or is submitted to a library goroutine when its
 * server is networked; the thread then waits in C (lmcp_bridge_blocking). */
lmcp_status lmcp_host_call_sync(lmcp_host *host, const char *server, const char *method,
                                const char *params_json, size_t params_len, const char *options_json,
                                size_t options_len, char **result_out, size_t *result_len_out,
                                char **err_out) {
  lmcp_bridge_submit s = {.op = LMCP_BRIDGE_OP_HOST_CALL,
                          .handle = host,
                          .server = server,
                          .name = method,
                          .params = params_json,
                          .params_len = params_len,
                          .options = options_json,
                          .options_len = options_len};
  return lmcp_bridge_blocking(&s, host_call_start, result_out, result_len_out, err_out);
}

lmcp_status lmcp_host_call_tool_sync(lmcp_host *host, const char *name, const char *args_json,
                                     size_t args_len, const char *options_json, size_t options_len,
                                     char **result_out, size_t *result_len_out, char **err_out) {
  lmcp_bridge_submit s = {.op = LMCP_BRIDGE_OP_HOST_CALL_TOOL,
                          .handle = host,
                          .name = name,
                          .params = args_json,
                          .params_len = args_len,
                          .options = options_json,
                          .options_len = options_len};
  return lmcp_bridge_blocking(&s, host_call_tool_start, result_out, result_len_out, err_out);
}
