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

/* Each trampoline also takes the handle of the client or host (lmcp_host)
 * it serves, as an integer: while the host's function runs, the calling
 * thread records it in a callback frame (see bridge.c), so that
 * lmcp_client_free and lmcp_host_free know when they are called from inside
 * one of the freed object's own callbacks (handle values of clients and
 * hosts never coincide: see internal/handles). Completions and events run
 * on the object's delivery goroutine, and their frames say so; so do a
 * host's requests (delivering 1), while a client's run on its reader
 * (delivering 0). */
LMCP_INTERNAL void lmcp_bridge_event(lmcp_event_cb cb, uintptr_t user_data, uintptr_t key, const char *kind,
                                     const char *json, size_t len);
LMCP_INTERNAL void lmcp_bridge_app_request(lmcp_app_request_cb cb, uintptr_t user_data, uintptr_t key,
                                           int delivering, uint64_t id, const char *kind, const char *json,
                                           size_t len);
LMCP_INTERNAL void lmcp_bridge_done(lmcp_done_cb cb, uintptr_t user_data, uintptr_t key, uint64_t call_id,
                                    int32_t status, const char *json, size_t len);
LMCP_INTERNAL void lmcp_bridge_destroy(lmcp_destroy_cb cb, uintptr_t user_data, uintptr_t key);

/* lmcp_bridge_frames counts the callback frames of key on the calling
 * thread; *delivering is set when one of them is a completion or event
 * (or a host's request): this thread is then key's delivery thread. */
LMCP_INTERNAL int lmcp_bridge_frames(uintptr_t key, int *delivering);
LMCP_INTERNAL const char *lmcp_bridge_version(void);
/* lmcp_bridge_intern returns a NUL-terminated copy of s (n bytes) that lives
 * as long as the process: the event and app-request kinds handed to host
 * callbacks as static text. The copies are held by a C table, never only by
 * Go memory, so that leak checkers (valgrind) see them as reachable. */
LMCP_INTERNAL const char *lmcp_bridge_intern(const char *s, size_t n);

/* The handler setters of a handle kind (client, host): the Go halves,
 * declared here so that a drift from their cgo exports fails the build, and
 * the public wrappers, defined once per kind in <kind>_bridge.c, which pass
 * user_data to Go as an integer. Both kinds' setters are these by
 * construction. */
#define LMCP_BRIDGE_DECLARE_SETTERS(kind)                                                                    \
  LMCP_INTERNAL lmcp_status lmcpgo_##kind##_set_event_handler(                                               \
      lmcp_##kind *handle, lmcp_event_cb cb, uintptr_t user_data, lmcp_destroy_cb destroy, char **err_out);  \
  LMCP_INTERNAL lmcp_status lmcpgo_##kind##_set_app_request_handler(                                         \
      lmcp_##kind *handle, lmcp_app_request_cb cb, uintptr_t user_data, lmcp_destroy_cb destroy,             \
      char **err_out);                                                                                       \
  LMCP_INTERNAL lmcp_status lmcpgo_##kind##_set_telemetry_handler(lmcp_##kind *handle, lmcp_telemetry_cb cb, \
                                                                  uintptr_t user_data,                       \
                                                                  lmcp_destroy_cb destroy, char **err_out)

#define LMCP_BRIDGE_DEFINE_SETTERS(kind)                                                                     \
  lmcp_status lmcp_##kind##_set_event_handler(lmcp_##kind *handle, lmcp_event_cb cb, void *user_data,        \
                                              lmcp_destroy_cb destroy, char **err_out) {                     \
    return lmcpgo_##kind##_set_event_handler(handle, cb, (uintptr_t)user_data, destroy, err_out);            \
  }                                                                                                          \
  lmcp_status lmcp_##kind##_set_app_request_handler(lmcp_##kind *handle, lmcp_app_request_cb cb,             \
                                                    void *user_data, lmcp_destroy_cb destroy,                \
                                                    char **err_out) {                                        \
    return lmcpgo_##kind##_set_app_request_handler(handle, cb, (uintptr_t)user_data, destroy, err_out);      \
  }                                                                                                          \
  lmcp_status lmcp_##kind##_set_telemetry_handler(                                                           \
      lmcp_##kind *handle, lmcp_telemetry_cb cb, void *user_data, lmcp_destroy_cb destroy, char **err_out) { \
    return lmcpgo_##kind##_set_telemetry_handler(handle, cb, (uintptr_t)user_data, destroy, err_out);        \
  }

LMCP_BRIDGE_DECLARE_SETTERS(client);
LMCP_BRIDGE_DECLARE_SETTERS(host);

/* The Go side of lmcp_server_set_event_handler (server_bridge.c). */
LMCP_INTERNAL lmcp_status lmcpgo_server_set_event_handler(lmcp_server *server, lmcp_event_cb cb,
                                                          uintptr_t user_data, lmcp_destroy_cb destroy,
                                                          char **err_out);

/* The Go side of the calls whose public wrappers live in client_bridge.c
 * and host_bridge.c. */
LMCP_INTERNAL lmcp_status lmcpgo_client_call(lmcp_client *client, cchar_t *method, cchar_t *params_json,
                                             size_t params_len, cchar_t *options_json, size_t options_len,
                                             lmcp_done_cb done, uintptr_t user_data,
                                             lmcp_call_id *call_id_out, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_call_tool(lmcp_host *host, cchar_t *name, cchar_t *args_json,
                                                size_t args_len, cchar_t *options_json, size_t options_len,
                                                lmcp_done_cb done, uintptr_t user_data,
                                                lmcp_call_id *call_id_out, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_call(lmcp_host *host, cchar_t *server, cchar_t *method,
                                           cchar_t *params_json, size_t params_len, cchar_t *options_json,
                                           size_t options_len, lmcp_done_cb done, uintptr_t user_data,
                                           lmcp_call_id *call_id_out, char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_query(lmcp_host *host, lmcp_query query, cchar_t *args_json,
                                            size_t args_len, lmcp_done_cb done, uintptr_t user_data,
                                            lmcp_call_id *call_id_out, char **err_out);

/* A blocking call's wait (lmcp_client_call_sync, lmcp_host_call_sync,
 * lmcp_host_call_tool_sync): the calling thread starts the call in Go
 * (lmcpgo_*_call_sync), which returns LMCP_BRIDGE_SYNC_STARTED; the
 * thread then waits here, in C, on state,
 * which the completion (syncwait.go, on whichever library goroutine ends
 * the call) sets to DONE after storing the outcome. So a C thread is never
 * parked in the Go scheduler, and the completion wakes it with one futex
 * wake, and none when the thread is still spinning. The struct lives on
 * the waiting thread's stack; Go writes it only before setting DONE. */
enum {
  LMCP_BRIDGE_SYNC_PENDING = 0,  /* the call runs; the waiter spins */
  LMCP_BRIDGE_SYNC_DONE = 1,     /* the outcome is stored */
  LMCP_BRIDGE_SYNC_SLEEPING = 2, /* the waiter sleeps on the futex: wake it */
  /* what lmcpgo_*_call_sync return when the call started and the outcome
   * arrives through the lmcp_bridge_sync (never a public status) */
  LMCP_BRIDGE_SYNC_STARTED = 1,
  /* what lmcpgo_*_call_sync return for a call the thread should submit
   * (lmcp_bridge_submit below) instead: the client is networked */
  LMCP_BRIDGE_SYNC_SUBMIT = 2,
};
/* How long a waiter spins before it sleeps (when its thread's last call
 * ended within that time: see syncwait.c): a completion that arrives
 * within it costs no wake-up of the waiter, and the waiter's CPU does not
 * go idle, whose wake-up costs tens of microseconds in a virtual machine
 * (docs/abi-cost.md has the traces and figures). */
#define LMCP_BRIDGE_SYNC_SPIN_NS 50000
/* The public lmcp_sync_call (lemonmcp.h) is this wait's struct: state is
 * LMCP_BRIDGE_SYNC_*, a futex word; status the completion's; json the
 * result (LMCP_OK) or the error JSON (when the caller passed err_out),
 * library memory, of len bytes. */
typedef lmcp_sync_call lmcp_bridge_sync;

/* lmcp_bridge_sync_finish waits for w's outcome and hands it to the
 * caller's outputs, as lmcp_client_call_sync documents them. */
LMCP_INTERNAL lmcp_status lmcp_bridge_sync_finish(lmcp_bridge_sync *w, char **result_out,
                                                  size_t *result_len_out, char **err_out);
/* A blocking call to a networked client whose exchanges run on library
 * goroutines (core.SyncSubmit) is not started by the calling thread: a thread that returns from Go to C keeps
 * its P in the syscall state while it waits, so the library's goroutines,
 * which make the HTTP exchange, run short of Ps, and sysmon retakes the
 * sleeper's P about once per call (docs/abi-cost.md). The thread instead
 * pushes the call on a lock-free stack (lmcp_bridge_submitted) and, when
 * the stack was empty, writes the eventfd lmcp_bridge_submit_fd, which a
 * library goroutine waits on in the netpoller (syncqueue.go). That
 * goroutine starts each call on a goroutine of its own, which makes the
 * exchange as a Go caller's goroutine does (core.Client.CallWaiting), and
 * the completion fills w and wakes the thread as for a call started in
 * Go. The thread never enters Go for such a call; the struct lives on its
 * stack, and Go reads the arguments in place (the thread waits until the
 * completion, so they stay valid). */
enum {
  LMCP_BRIDGE_OP_CLIENT_CALL = 1, /* lmcp_client_call_sync: name is the method */
  LMCP_BRIDGE_OP_HOST_CALL_TOOL,  /* lmcp_host_call_tool_sync: name is the tool */
  LMCP_BRIDGE_OP_HOST_CALL,       /* lmcp_host_call_sync: server, name the method */
};
typedef struct lmcp_bridge_submit {
  lmcp_bridge_sync w;              /* the outcome, as lmcp_bridge_sync_finish takes it */
  struct lmcp_bridge_submit *next; /* the stack's link */
  int32_t op;                      /* LMCP_BRIDGE_OP_* */
  int32_t want_err;                /* the caller passed err_out */
  /* set by the completion: the call's server is networked, so the next
   * call of this handle is submitted too (a host's servers may differ) */
  int32_t networked;
  void *handle; /* the lmcp_client or lmcp_host */
  cchar_t *server, *name;
  cchar_t *params;
  size_t params_len;
  cchar_t *options;
  size_t options_len;
} lmcp_bridge_submit;
/* The stack of submitted calls (Go takes it whole with an atomic swap) and
 * the eventfd that wakes the goroutine serving it (-1 until it runs). */
extern lmcp_bridge_submit *lmcp_bridge_submitted;
extern int lmcp_bridge_submit_fd;
/* The blocking calls under way (lmcp_bridge_blocking counts them) and
 * GOMAXPROCS (set by Go): a call is submitted only while fewer blocking
 * calls are under way than there are Ps, as a call started in Go waits in
 * C (syncwait.go); past that, every caller parks in Go, where many waiting
 * threads share the Ps best. */
extern int lmcp_bridge_blocking_calls;
extern int lmcp_bridge_procs;
/* lmcp_bridge_start is a blocking call's Go half (lmcpgo_*_call_sync) for
 * s's arguments, w its wait. */
typedef lmcp_status (*lmcp_bridge_start)(lmcp_bridge_submit *s, lmcp_bridge_sync *w, char **result_out,
                                         size_t *result_len_out, char **err_out);
/* lmcp_bridge_blocking makes the blocking call s describes: submitted when
 * this thread learned that its handle's calls are (a per-thread record of
 * a few handles, which a handle's outcome keeps up to date; a freed
 * handle's record is harmless, the submitter checks every handle as the
 * exports do), else started in Go by start, which may answer
 * LMCP_BRIDGE_SYNC_SUBMIT; then it waits in C for the outcome. */
LMCP_INTERNAL lmcp_status lmcp_bridge_blocking(lmcp_bridge_submit *s, lmcp_bridge_start start,
                                               char **result_out, size_t *result_len_out, char **err_out);

LMCP_INTERNAL lmcp_status lmcpgo_client_call_sync(lmcp_client *client, cchar_t *method, cchar_t *params_json,
                                                  size_t params_len, cchar_t *options_json,
                                                  size_t options_len, char **result_out,
                                                  size_t *result_len_out, lmcp_bridge_sync *sync,
                                                  char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_call_tool_sync(lmcp_host *host, cchar_t *name, cchar_t *args_json,
                                                     size_t args_len, cchar_t *options_json,
                                                     size_t options_len, char **result_out,
                                                     size_t *result_len_out, lmcp_bridge_sync *sync,
                                                     char **err_out);
LMCP_INTERNAL lmcp_status lmcpgo_host_call_sync(lmcp_host *host, cchar_t *server, cchar_t *method,
                                                cchar_t *params_json, size_t params_len,
                                                cchar_t *options_json, size_t options_len, char **result_out,
                                                size_t *result_len_out, lmcp_bridge_sync *sync,
                                                char **err_out);

#endif
