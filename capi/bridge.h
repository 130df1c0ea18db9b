/* Declarations shared by the cgo preambles and bridge.c. Go cannot call C
 * function pointers directly, so every host callback goes through one of
 * these trampolines. */
#ifndef LMCP_BRIDGE_H
#define LMCP_BRIDGE_H

#include <stdlib.h>
#include <string.h>
#include "lemonmcp.h"

/* Exported Go functions use this type for `const char *` parameters, so the
 * prototypes cgo generates agree with lemonmcp.h (both are compiled into one
 * translation unit: any drift between them fails the build). */
typedef const char cchar_t;

/* The trampolines are internal: hidden, so that only the lmcp_ functions of
 * the header are exported. */
#define LMCP_INTERNAL __attribute__((visibility("hidden")))

LMCP_INTERNAL void lmcp_bridge_event(lmcp_event_cb cb, void *user_data, const char *kind,
                       const char *json, size_t len);
LMCP_INTERNAL void lmcp_bridge_host_request(lmcp_host_request_cb cb, void *user_data,
                              uint64_t id, const char *kind, const char *json,
                              size_t len);
LMCP_INTERNAL void lmcp_bridge_done(lmcp_done_cb cb, void *user_data, uint64_t call_id,
                      int32_t status, const char *json, size_t len);
LMCP_INTERNAL void lmcp_bridge_destroy(lmcp_destroy_cb cb, void *user_data);
LMCP_INTERNAL const char *lmcp_bridge_status_string(int32_t status);
LMCP_INTERNAL const char *lmcp_bridge_version(void);

#endif
