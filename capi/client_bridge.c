/* Public lmcp_client entry points that take user_data: they pass it to Go
 * as an integer (see client.go). */
#include "bridge.h"

lmcp_status lmcp_client_set_event_handler(lmcp_client *client, lmcp_event_cb cb,
                                          void *user_data,
                                          lmcp_destroy_cb destroy,
                                          char **err_out) {
  return lmcpgo_client_set_event_handler(client, cb, (uintptr_t)user_data,
                                         destroy, err_out);
}

lmcp_status lmcp_client_set_host_request_handler(lmcp_client *client,
                                                 lmcp_host_request_cb cb,
                                                 void *user_data,
                                                 lmcp_destroy_cb destroy,
                                                 char **err_out) {
  return lmcpgo_client_set_host_request_handler(
      client, cb, (uintptr_t)user_data, destroy, err_out);
}

lmcp_status lmcp_client_call(lmcp_client *client, const char *method,
                             const char *params_json, size_t params_len,
                             const char *options_json, size_t options_len,
                             lmcp_done_cb done, void *user_data,
                             lmcp_call_id *call_id_out, char **err_out) {
  return lmcpgo_client_call(client, method, params_json, params_len,
                            options_json, options_len, done,
                            (uintptr_t)user_data, call_id_out, err_out);
}
