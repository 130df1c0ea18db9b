/* Trampolines from Go into host function pointers, the per-thread callback
 * frames, and the static version string. (lmcp_status_string's names are
 * core.Status's: see exports.go.) */
#include <pthread.h>

#include "bridge.h"

/* A callback frame: one host function running on this thread for a client
 * or a host (lmcp_host), named by its handle.
 * Frames live on the trampolines' stacks and are linked per thread; nested
 * callbacks (a callback whose lmcp_ call runs another) stack up. */
struct lmcp_frame {
  uintptr_t client;
  int delivering; /* a completion or event: the client's delivery thread */
  struct lmcp_frame *prev;
};

static __thread struct lmcp_frame *lmcp_frames;

#define LMCP_FRAME_ENTER(c, d)                                                 \
  struct lmcp_frame frame = {(c), (d), lmcp_frames};                           \
  lmcp_frames = &frame
#define LMCP_FRAME_EXIT() lmcp_frames = frame.prev

void lmcp_bridge_event(lmcp_event_cb cb, uintptr_t user_data, uintptr_t client,
                       const char *kind, const char *json, size_t len) {
  LMCP_FRAME_ENTER(client, 1);
  cb((void *)user_data, kind, json, len);
  LMCP_FRAME_EXIT();
}

void lmcp_bridge_host_request(lmcp_host_request_cb cb, uintptr_t user_data,
                              uintptr_t client, uint64_t id, const char *kind,
                              const char *json, size_t len) {
  LMCP_FRAME_ENTER(client, 0);
  cb((void *)user_data, (lmcp_request_id)id, kind, json, len);
  LMCP_FRAME_EXIT();
}

void lmcp_bridge_done(lmcp_done_cb cb, uintptr_t user_data, uintptr_t client,
                      uint64_t call_id, int32_t status, const char *json,
                      size_t len) {
  LMCP_FRAME_ENTER(client, 1);
  cb((void *)user_data, (lmcp_call_id)call_id, (lmcp_status)status, json, len);
  LMCP_FRAME_EXIT();
}

void lmcp_bridge_queued_host_request(lmcp_host_request_cb cb,
                                     uintptr_t user_data, uintptr_t key,
                                     uint64_t id, const char *kind,
                                     const char *json, size_t len) {
  LMCP_FRAME_ENTER(key, 1);
  cb((void *)user_data, (lmcp_request_id)id, kind, json, len);
  LMCP_FRAME_EXIT();
}

void lmcp_bridge_destroy(lmcp_destroy_cb cb, uintptr_t user_data,
                         uintptr_t client) {
  if (cb != NULL) {
    LMCP_FRAME_ENTER(client, 0);
    cb((void *)user_data);
    LMCP_FRAME_EXIT();
  }
}

const char *lmcp_bridge_version(void) { return LMCP_VERSION_STRING; }

/* The interned kinds: a small, closed set (a few dozen names), so a linear
 * search under a mutex is enough; Go caches the pointers it gets. */
static pthread_mutex_t intern_mu = PTHREAD_MUTEX_INITIALIZER;
static char **interned;
static size_t n_interned, cap_interned;

const char *lmcp_bridge_intern(const char *s, size_t n) {
  const char *out = NULL;
  pthread_mutex_lock(&intern_mu);
  for (size_t i = 0; i < n_interned && out == NULL; i++) {
    if (strlen(interned[i]) == n && memcmp(interned[i], s, n) == 0) {
      out = interned[i];
    }
  }
  if (out == NULL) {
    if (n_interned == cap_interned) {
      size_t cap = cap_interned ? cap_interned * 2 : 32;
      char **grown = realloc(interned, cap * sizeof *grown);
      if (grown != NULL) {
        interned = grown;
        cap_interned = cap;
      }
    }
    char *copy = n_interned < cap_interned ? malloc(n + 1) : NULL;
    if (copy != NULL) {
      memcpy(copy, s, n);
      copy[n] = 0;
      interned[n_interned++] = copy;
    }
    out = copy != NULL ? copy : "";
  }
  pthread_mutex_unlock(&intern_mu);
  return out;
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

lmcp_status lmcp_client_set_telemetry_handler(lmcp_client *client,
                                              lmcp_telemetry_cb cb,
                                              void *user_data,
                                              lmcp_destroy_cb destroy,
                                              char **err_out) {
  return lmcpgo_client_set_telemetry_handler(client, cb, (uintptr_t)user_data,
                                             destroy, err_out);
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

/* lmcp_client_free counts the freed client's callback frames on this
 * thread: Free waits for the client's running callbacks but these, and
 * when one of them is a completion or event (this thread is the client's
 * delivery thread) it delivers the remaining completions itself. */
int lmcp_bridge_frames(uintptr_t key, int *delivering) {
  int callbacks = 0;
  *delivering = 0;
  for (const struct lmcp_frame *f = lmcp_frames; f != NULL; f = f->prev) {
    if (f->client == key) {
      callbacks++;
      *delivering |= f->delivering;
    }
  }
  return callbacks;
}

void lmcp_client_free(lmcp_client *client) {
  int delivering;
  int callbacks = lmcp_bridge_frames((uintptr_t)client, &delivering);
  lmcpgo_client_free(client, callbacks, delivering);
}
