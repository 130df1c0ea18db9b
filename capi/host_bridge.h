/* The Go side of the lmcp_host functions whose public wrappers live in
 * host_bridge.c (they take user_data, which crosses into Go as an integer;
 * see bridge.h). */
#ifndef LMCP_HOST_BRIDGE_H
#define LMCP_HOST_BRIDGE_H

#include "bridge.h"

LMCP_INTERNAL lmcp_status lmcpgo_host_set_event_handler(
    lmcp_host *host, lmcp_event_cb cb, uintptr_t user_data,
    lmcp_destroy_cb destroy, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_set_telemetry_handler(
    lmcp_host *host, lmcp_telemetry_cb cb, uintptr_t user_data,
    lmcp_destroy_cb destroy, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_set_host_request_handler(
    lmcp_host *host, lmcp_host_request_cb cb, uintptr_t user_data,
    lmcp_destroy_cb destroy, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_call_tool(
    lmcp_host *host, cchar_t *name, cchar_t *args_json, size_t args_len,
    cchar_t *options_json, size_t options_len, lmcp_done_cb done,
    uintptr_t user_data, lmcp_call_id *call_id_out, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_call(
    lmcp_host *host, cchar_t *server, cchar_t *method, cchar_t *params_json,
    size_t params_len, cchar_t *options_json, size_t options_len,
    lmcp_done_cb done, uintptr_t user_data, lmcp_call_id *call_id_out,
    char **err_out);
LMCP_INTERNAL void lmcpgo_host_free(lmcp_host *host, int callbacks,
                                    int delivering);

#endif
