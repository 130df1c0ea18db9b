/* Trampolines from Go into host function pointers, and the static strings
 * the ABI returns. */
#include "bridge.h"

void lmcp_bridge_event(lmcp_event_cb cb, void *user_data, const char *kind,
                       const char *json, size_t len) {
  cb(user_data, kind, json, len);
}

void lmcp_bridge_host_request(lmcp_host_request_cb cb, void *user_data,
                              uint64_t id, const char *kind, const char *json,
                              size_t len) {
  cb(user_data, (lmcp_request_id)id, kind, json, len);
}

void lmcp_bridge_done(lmcp_done_cb cb, void *user_data, uint64_t call_id,
                      int32_t status, const char *json, size_t len) {
  cb(user_data, (lmcp_call_id)call_id, (lmcp_status)status, json, len);
}

void lmcp_bridge_destroy(lmcp_destroy_cb cb, void *user_data) {
  if (cb != NULL) {
    cb(user_data);
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
