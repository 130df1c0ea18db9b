/* Trampolines from Go into host function pointers, and the static strings
 * the ABI returns. */
#include "bridge.h"

void lmcp_bridge_event(lmcp_event_cb cb, uintptr_t user_data, const char *kind,
                       const char *json, size_t len) {
  cb((void *)user_data, kind, json, len);
}

void lmcp_bridge_host_request(lmcp_host_request_cb cb, uintptr_t user_data,
                              uint64_t id, const char *kind, const char *json,
                              size_t len) {
  cb((void *)user_data, (lmcp_request_id)id, kind, json, len);
}

void lmcp_bridge_done(lmcp_done_cb cb, uintptr_t user_data, uint64_t call_id,
                      int32_t status, const char *json, size_t len) {
  cb((void *)user_data, (lmcp_call_id)call_id, (lmcp_status)status, json, len);
}

void lmcp_bridge_destroy(lmcp_destroy_cb cb, uintptr_t user_data) {
  if (cb != NULL) {
    cb((void *)user_data);
  }
}

const char *lmcp_bridge_version(void) { return LMCP_VERSION_STRING; }

const char *lmcp_bridge_status_string(int32_t status) {
  switch (status) {
  case LMCP_OK: return "ok";
  case LMCP_E_INVALID_ARGUMENT: return "invalid argument";
  case LMCP_E_INVALID_HANDLE: return "invalid handle";
  case LMCP_E_INVALID_STATE: return "invalid state";
  case LMCP_E_NOT_FOUND: return "not found";
  case LMCP_E_TIMEOUT: return "timeout";
  case LMCP_E_CANCELLED: return "cancelled";
  case LMCP_E_CLOSED: return "closed";
  case LMCP_E_TRANSPORT: return "transport error";
  case LMCP_E_PROTOCOL: return "protocol error";
  case LMCP_E_UNSUPPORTED: return "unsupported";
  case LMCP_E_AUTH_REQUIRED: return "authorization required";
  case LMCP_E_POLICY_DENIED: return "denied by policy";
  case LMCP_E_ABI_MISMATCH: return "ABI version mismatch";
  case LMCP_E_INTERNAL: return "internal error";
  default: return "unknown status";
  }
}

/* Public entry points that take user_data: they pass it to Go as an
 * integer (see exports.go). */

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
