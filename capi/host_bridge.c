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

/* The call starts in Go; the thread then waits in C (lmcp_bridge_sync). */
lmcp_status lmcp_host_call_sync(lmcp_host *host, const char *server, const char *method,
                                const char *params_json, size_t params_len, const char *options_json,
                                size_t options_len, char **result_out, size_t *result_len_out,
                                char **err_out) {
  lmcp_bridge_sync w = {0};
  lmcp_status st = lmcpgo_host_call_sync(host, server, method, params_json, params_len, options_json,
                                         options_len, result_out, result_len_out, &w, err_out);
  return st == LMCP_BRIDGE_SYNC_STARTED ? lmcp_bridge_sync_finish(&w, result_out, result_len_out, err_out)
                                        : st;
}

lmcp_status lmcp_host_call_tool_sync(lmcp_host *host, const char *name, const char *args_json,
                                     size_t args_len, const char *options_json, size_t options_len,
                                     char **result_out, size_t *result_len_out, char **err_out) {
  lmcp_bridge_sync w = {0};
  lmcp_status st = lmcpgo_host_call_tool_sync(host, name, args_json, args_len, options_json, options_len,
                                              result_out, result_len_out, &w, err_out);
  return st == LMCP_BRIDGE_SYNC_STARTED ? lmcp_bridge_sync_finish(&w, result_out, result_len_out, err_out)
                                        : st;
}
