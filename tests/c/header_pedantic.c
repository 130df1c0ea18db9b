/* header_pedantic.c — include/lemonmcp.h compiles as strict ISO C99:
 * gcc -std=c99 -pedantic -Wall -Wextra -Werror -c (compile only). */
#include "lemonmcp.h"

/* Take the address of every declared function so a signature typo fails. */
typedef void (*any_fn)(void);
static const any_fn every_function[] = {
    (any_fn)lmcp_version,
    (any_fn)lmcp_abi_version,
    (any_fn)lmcp_status_string,
    (any_fn)lmcp_free,
    (any_fn)lmcp_features,
    (any_fn)lmcp_diagnostics,
    (any_fn)lmcp_validate_answer,
    (any_fn)lmcp_host_file_server,
    (any_fn)lmcp_client_new,
    (any_fn)lmcp_client_set_event_handler,
    (any_fn)lmcp_client_set_app_request_handler,
    (any_fn)lmcp_client_connect,
    (any_fn)lmcp_client_wait_ready,
    (any_fn)lmcp_client_state,
    (any_fn)lmcp_client_call,
    (any_fn)lmcp_client_call_sync,
    (any_fn)lmcp_client_cancel,
    (any_fn)lmcp_client_notify,
    (any_fn)lmcp_client_respond,
    (any_fn)lmcp_client_server_info,
    (any_fn)lmcp_client_close,
    (any_fn)lmcp_client_free,
    (any_fn)lmcp_client_set_telemetry_handler,
};

int lmcp_pedantic_count(void);
int lmcp_pedantic_count(void) {
  return (int)(sizeof every_function / sizeof every_function[0]) + LMCP_ABI_VERSION + LMCP_STATE_FAILED +
         (LMCP_E_INTERNAL < 0);
}
