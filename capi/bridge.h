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

/* user_data crosses into Go as an integer: it is the host's opaque value
 * (often a small integer or an address Go does not own), which Go must never
 * hold as a pointer. The trampolines cast it back.
 *
 * The trampolines are internal: hidden, so that only the lmcp_ functions of
 * the header are exported. */
#define LMCP_INTERNAL __attribute__((visibility("hidden")))

/* Each trampoline also takes the client's handle, as an integer: while the
 * host's function runs, the calling thread records it in a callback frame
 * (see bridge.c), so that lmcp_client_free knows when it is called from
 * inside one of the freed client's own callbacks. Completions and events run
 * on the client's delivery goroutine, and their frames say so. */
LMCP_INTERNAL void lmcp_bridge_event(lmcp_event_cb cb, uintptr_t user_data,
                       uintptr_t client, const char *kind,
                       const char *json, size_t len);
LMCP_INTERNAL void lmcp_bridge_host_request(lmcp_host_request_cb cb, uintptr_t user_data,
                              uintptr_t client, uint64_t id, const char *kind,
                              const char *json, size_t len);
LMCP_INTERNAL void lmcp_bridge_done(lmcp_done_cb cb, uintptr_t user_data,
                      uintptr_t client, uint64_t call_id,
                      int32_t status, const char *json, size_t len);
LMCP_INTERNAL void lmcp_bridge_destroy(lmcp_destroy_cb cb, uintptr_t user_data,
                         uintptr_t client);

/* A host (lmcp_host) uses the same trampolines with its own handle as the
 * key (handle values of clients and hosts never coincide: see
 * internal/handles). Its completions, events and host requests all run on
 * its one delivery goroutine, so its host requests go through this
 * trampoline, whose frame says so. */
LMCP_INTERNAL void lmcp_bridge_queued_host_request(lmcp_host_request_cb cb,
                                                   uintptr_t user_data,
                                                   uintptr_t key, uint64_t id,
                                                   const char *kind,
                                                   const char *json, size_t len);

/* lmcp_bridge_frames counts the callback frames of key on the calling
 * thread; *delivering is set when one of them is a completion or event
 * (or a host's request): this thread is then key's delivery thread. */
LMCP_INTERNAL int lmcp_bridge_frames(uintptr_t key, int *delivering);
LMCP_INTERNAL const char *lmcp_bridge_version(void);
/* lmcp_bridge_intern returns a NUL-terminated copy of s (n bytes) that lives
 * as long as the process: the event and host-request kinds handed to host
 * callbacks as static text. The copies are held by a C table, never only by
 * Go memory, so that leak checkers (valgrind) see them as reachable. */
LMCP_INTERNAL const char *lmcp_bridge_intern(const char *s, size_t n);

/* The Go side of the functions whose public wrappers live in bridge.c. */
LMCP_INTERNAL lmcp_status lmcpgo_client_set_event_handler(
    lmcp_client *client, lmcp_event_cb cb, uintptr_t user_data,
    lmcp_destroy_cb destroy, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_client_set_host_request_handler(
    lmcp_client *client, lmcp_host_request_cb cb, uintptr_t user_data,
    lmcp_destroy_cb destroy, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_client_set_telemetry_handler(
    lmcp_client *client, lmcp_telemetry_cb cb, uintptr_t user_data,
    lmcp_destroy_cb destroy, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_client_call(
    lmcp_client *client, cchar_t *method, cchar_t *params_json,
    size_t params_len, cchar_t *options_json, size_t options_len,
    lmcp_done_cb done, uintptr_t user_data, lmcp_call_id *call_id_out,
    char **err_out);
LMCP_INTERNAL void lmcpgo_client_free(lmcp_client *client, int callbacks,
                                      int delivering);

#endif
