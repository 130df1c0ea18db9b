/* Public lmcp_client entry points that take user_data: they pass it to Go
 * as an integer (see client.go). */
#include "bridge.h"

LMCP_BRIDGE_DEFINE_SETTERS(client)

lmcp_status lmcp_client_call(lmcp_client *client, const char *method, const char *params_json,
                             size_t params_len, const char *options_json, size_t options_len,
                             lmcp_done_cb done, void *user_data, lmcp_call_id *call_id_out, char **err_out) {
  return lmcpgo_client_call(client, method, params_json, params_len, options_json, options_len, done,
                            (uintptr_t)user_data, call_id_out, err_out);
}

static lmcp_status client_call_start(lmcp_bridge_submit *s, lmcp_bridge_sync *w, char **result_out,
                                     size_t *result_len_out, char **err_out) {
  return lmcpgo_client_call_sync(s->handle, s->name, s->params, s->params_len, s->options, s->options_len,
                                 result_out, result_len_out, w, err_out);
}

/* The call starts in Go, or is submitted to a library goroutine when the
 * client is networked; the thread then waits in C (lmcp_bridge_blocking). */
lmcp_status lmcp_client_call_sync(lmcp_client *client, const char *method, const char *params_json,
                                  size_t params_len, const char *options_json, size_t options_len,
                                  char **result_out, size_t *result_len_out, char **err_out) {
  lmcp_bridge_submit s = {.op = LMCP_BRIDGE_OP_CLIENT_CALL,
                          .handle = client,
                          .name = method,
                          .params = params_json,
                          .params_len = params_len,
                          .options = options_json,
                          .options_len = options_len};
  return lmcp_bridge_blocking(&s, client_call_start, result_out, result_len_out, err_out);
}
