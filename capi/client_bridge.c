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

/* The call starts in Go; the thread then waits in C (lmcp_bridge_sync). */
lmcp_status lmcp_client_call_sync(lmcp_client *client, const char *method, const char *params_json,
                                  size_t params_len, const char *options_json, size_t options_len,
                                  char **result_out, size_t *result_len_out, char **err_out) {
  lmcp_bridge_sync w = {0};
  lmcp_status st = lmcpgo_client_call_sync(client, method, params_json, params_len, options_json, options_len,
                                           result_out, result_len_out, &w, err_out);
  return st == LMCP_BRIDGE_SYNC_STARTED ? lmcp_bridge_sync_finish(&w, result_out, result_len_out, err_out)
                                        : st;
}
