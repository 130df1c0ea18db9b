/* What the client's and the host's C side share: the trampolines from Go
 * into host function pointers, the per-thread callback frames, the static
 * version string and the interned kinds. The public wrappers of each object
 * are in client_bridge.c and host_bridge.c. (lmcp_status_string's names are
 * core.Status's: see status.go.) */
#include <pthread.h>

#include "bridge.h"

/* A callback frame: one host function running on this thread for a client
 * or a host (lmcp_host), named by its handle (key).
 * Frames live on the trampolines' stacks and are linked per thread; nested
 * callbacks (a callback whose lmcp_ call runs another) stack up. */
struct lmcp_frame {
  uintptr_t key;
  int delivering; /* on the object's delivery thread (a completion, event, or
                     a host's request) */
  struct lmcp_frame *prev;
};

static __thread struct lmcp_frame *lmcp_frames;

#define LMCP_FRAME_ENTER(c, d)                       \
  struct lmcp_frame frame = {(c), (d), lmcp_frames}; \
  lmcp_frames = &frame
#define LMCP_FRAME_EXIT() lmcp_frames = frame.prev

void lmcp_bridge_event(lmcp_event_cb cb, uintptr_t user_data, uintptr_t key, const char *kind,
                       const char *json, size_t len) {
  LMCP_FRAME_ENTER(key, 1);
  cb((void *)user_data, kind, json, len);
  LMCP_FRAME_EXIT();
}

void lmcp_bridge_app_request(lmcp_app_request_cb cb, uintptr_t user_data, uintptr_t key, int delivering,
                             uint64_t id, const char *kind, const char *json, size_t len) {
  LMCP_FRAME_ENTER(key, delivering);
  cb((void *)user_data, (lmcp_request_id)id, kind, json, len);
  LMCP_FRAME_EXIT();
}

void lmcp_bridge_done(lmcp_done_cb cb, uintptr_t user_data, uintptr_t key, uint64_t call_id, int32_t status,
                      const char *json, size_t len) {
  LMCP_FRAME_ENTER(key, 1);
  cb((void *)user_data, (lmcp_call_id)call_id, (lmcp_status)status, json, len);
  LMCP_FRAME_EXIT();
}

void lmcp_bridge_destroy(lmcp_destroy_cb cb, uintptr_t user_data, uintptr_t key) {
  if (cb != NULL) {
    LMCP_FRAME_ENTER(key, 0);
    cb((void *)user_data);
    LMCP_FRAME_EXIT();
  }
}

const char *lmcp_bridge_version(void) {
  return LMCP_VERSION_STRING;
}

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

/* lmcp_bridge_frames: the freed object's callback frames on this thread.
 * Free waits for the object's running callbacks but these, and when one of
 * them is on its delivery thread, it delivers the remaining completions
 * itself. */
int lmcp_bridge_frames(uintptr_t key, int *delivering) {
  int callbacks = 0;
  *delivering = 0;
  for (const struct lmcp_frame *f = lmcp_frames; f != NULL; f = f->prev) {
    if (f->key == key) {
      callbacks++;
      *delivering |= f->delivering;
    }
  }
  return callbacks;
}
