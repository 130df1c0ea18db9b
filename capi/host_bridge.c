/* Public lmcp_host entry points that take user_data: they pass it to Go as
 * an integer (see host.go). */
#include "host_bridge.h"

lmcp_status lmcp_host_set_event_handler(lmcp_host *host, lmcp_event_cb cb,
                                        void *user_data,
                                        lmcp_destroy_cb destroy,
                                        char **err_out) {
  return lmcpgo_host_set_event_handler(host, cb, (uintptr_t)user_data, destroy,
                                       err_out);
}

lmcp_status lmcp_host_set_telemetry_handler(lmcp_host *host,
                                            lmcp_telemetry_cb cb,
                                            void *user_data,
                                            lmcp_destroy_cb destroy,
                                            char **err_out) {
  return lmcpgo_host_set_telemetry_handler(host, cb, (uintptr_t)user_data,
                                           destroy, err_out);
}

lmcp_status lmcp_host_set_host_request_handler(lmcp_host *host,
                                               lmcp_host_request_cb cb,
                                               void *user_data,
                                               lmcp_destroy_cb destroy,
                                               char **err_out) {
  return lmcpgo_host_set_host_request_handler(host, cb, (uintptr_t)user_data,
                                              destroy, err_out);
}

lmcp_status lmcp_host_call_tool(lmcp_host *host, const char *name,
                                const char *args_json, size_t args_len,
                                const char *options_json, size_t options_len,
                                lmcp_done_cb done, void *user_data,
                                lmcp_call_id *call_id_out, char **err_out) {
  return lmcpgo_host_call_tool(host, name, args_json, args_len, options_json,
                               options_len, done, (uintptr_t)user_data,
                               call_id_out, err_out);
}

lmcp_status lmcp_host_call(lmcp_host *host, const char *server,
                           const char *method, const char *params_json,
                           size_t params_len, const char *options_json,
                           size_t options_len, lmcp_done_cb done,
                           void *user_data, lmcp_call_id *call_id_out,
                           char **err_out) {
  return lmcpgo_host_call(host, server, method, params_json, params_len,
                          options_json, options_len, done,
                          (uintptr_t)user_data, call_id_out, err_out);
}

/* lmcp_host_free counts the freed host's callback frames on this thread, as
 * lmcp_client_free does a client's (bridge.c): Free waits for the host's
 * running callbacks but these, and when one of them is a completion, event
 * or request (this thread is the host's delivery thread) it delivers the
 * remaining completions itself. */
void lmcp_host_free(lmcp_host *host) {
  int delivering;
  int callbacks = lmcp_bridge_frames((uintptr_t)host, &delivering);
  lmcpgo_host_free(host, callbacks, delivering);
}
