/* The public lmcp_server entry point that takes user_data: it passes it to
 * Go as an integer (see server.go). */
#include "bridge.h"

lmcp_status lmcp_server_set_event_handler(lmcp_server *server, lmcp_event_cb cb, void *user_data,
                                          lmcp_destroy_cb destroy, char **err_out) {
  return lmcpgo_server_set_event_handler(server, cb, (uintptr_t)user_data, destroy, err_out);
}
