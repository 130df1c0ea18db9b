/* The C half of a blocking call's wait (lmcp_bridge_sync in bridge.h): the
 * calling thread spins briefly, then sleeps on a futex, outside the Go
 * runtime; the completion (syncwait.go) stores the outcome and signals it. */
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <string.h>

#include "bridge.h"

/* cpu_relax tells the CPU this is a spin loop (less power, and no
 * memory-order mis-speculation when the word changes). */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* spin_next: this thread's last blocking call ended within the spin time,
 * so the next one spins too; after one that did not, the thread sleeps at
 * once, but for every 16th call, which spins to learn whether calls are
 * fast again (a sleeping waiter's wake-up may itself make them slow). A
 * thread whose calls take longer (HTTP, a slow tool) so rarely burns CPU
 * that the server and the library need to answer it. */
static __thread int spin_next = 1;
static __thread unsigned spin_probe;

/* sync_wait_for returns 1 once w's state is DONE, waiting up to
 * timeout_ms (negative: without limit): after up to
 * LMCP_BRIDGE_SYNC_SPIN_NS of spinning (the clock is read every 64 turns)
 * when spin_next says so, asleep on the futex. With a limit it returns 0
 * when the time is up or a signal handler ran (so that the caller can act
 * on the signal), leaving the state SLEEPING for the next slice. */
static int sync_wait_for(lmcp_bridge_sync *w, int32_t timeout_ms, int may_spin) {
  uint32_t *state = &w->state;
  int64_t start = now_ns();
  int64_t limit = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000;
  if (may_spin && (spin_next || (++spin_probe & 15) == 0)) {
    for (unsigned i = 1;; i++) {
      if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == LMCP_BRIDGE_SYNC_DONE) {
        return 1;
      }
      cpu_relax();
      if ((i & 63) == 0) {
        int64_t spent = now_ns() - start;
        if (spent >= LMCP_BRIDGE_SYNC_SPIN_NS || (limit >= 0 && spent >= limit)) {
          break;
        }
      }
    }
  }
  uint32_t expected = LMCP_BRIDGE_SYNC_PENDING;
  /* A previous slice may have left it SLEEPING: the CAS then fails, and
   * the wait goes on below. */
  __atomic_compare_exchange_n(state, &expected, LMCP_BRIDGE_SYNC_SLEEPING, 0, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  while (__atomic_load_n(state, __ATOMIC_ACQUIRE) != LMCP_BRIDGE_SYNC_DONE) {
    struct timespec rel, *relp = NULL;
    if (limit >= 0) {
      int64_t left = limit - (now_ns() - start);
      if (left <= 0) {
        return 0;
      }
      rel.tv_sec = left / 1000000000;
      rel.tv_nsec = left % 1000000000;
      relp = &rel;
    }
    /* Returns at once when the word is no longer SLEEPING; a spurious
     * wake-up loops, and so does a signal when there is no limit. */
    long r = syscall(SYS_futex, state, FUTEX_WAIT_PRIVATE, LMCP_BRIDGE_SYNC_SLEEPING, relp, NULL, 0);
    if (r != 0 && errno == EINTR && limit >= 0 &&
        __atomic_load_n(state, __ATOMIC_ACQUIRE) != LMCP_BRIDGE_SYNC_DONE) {
      return 0;
    }
  }
  spin_next = now_ns() - start < LMCP_BRIDGE_SYNC_SPIN_NS;
  return 1;
}

/* sync_take hands a done call's outcome to the caller's outputs, as
 * lmcp_client_call_sync documents them. */
static lmcp_status sync_take(lmcp_bridge_sync *w, char **result_out, size_t *result_len_out, char **err_out) {
  if (w->status == LMCP_OK) {
    *result_out = w->json;
    if (result_len_out != NULL) {
      *result_len_out = w->len;
    }
  } else if (err_out != NULL) {
    *err_out = w->json;
  } else {
    free(w->json); /* copied only when err_out was given at begin: never here */
  }
  w->json = NULL;
  return w->status;
}

lmcp_status lmcp_bridge_sync_finish(lmcp_bridge_sync *w, char **result_out, size_t *result_len_out,
                                    char **err_out) {
  sync_wait_for(w, -1, 1);
  return sync_take(w, result_out, result_len_out, err_out);
}

lmcp_status lmcp_sync_call_wait(lmcp_sync_call *call, int32_t timeout_ms, int *done_out, char **result_out,
                                size_t *result_len_out, char **err_out) {
  if (call == NULL || done_out == NULL || result_out == NULL) {
    return LMCP_E_INVALID_ARGUMENT;
  }
  *result_out = NULL;
  *done_out = sync_wait_for(call, timeout_ms, 1);
  return *done_out ? sync_take(call, result_out, result_len_out, err_out) : LMCP_OK;
}

lmcp_bridge_submit *lmcp_bridge_submitted;
int lmcp_bridge_submit_fd = -1;
int lmcp_bridge_blocking_calls;
int lmcp_bridge_procs = 1;

/* The handles whose calls this thread submits: a few, replaced in turn. */
enum { SUBMIT_ROUTES = 4 };
static __thread const void *submit_routes[SUBMIT_ROUTES];
static __thread unsigned submit_route_next;

static int submitting(const void *handle) {
  for (int i = 0; i < SUBMIT_ROUTES; i++) {
    if (submit_routes[i] == handle) {
      return handle != NULL;
    }
  }
  return 0;
}

static void route(const void *handle, int submit) {
  for (int i = 0; i < SUBMIT_ROUTES; i++) {
    if (submit_routes[i] == handle) {
      if (!submit) {
        submit_routes[i] = NULL;
      }
      return;
    }
  }
  if (submit) {
    submit_routes[submit_route_next++ % SUBMIT_ROUTES] = handle;
  }
}

/* submit_wait pushes s on the stack, wakes the submitter when the stack
 * was empty, and waits for the outcome. alone: no other blocking call is
 * under way, so the wait may spin (with others, the library's goroutines
 * keep the CPUs busy, and a spin would only take CPU from them). */
static lmcp_status submit_wait(lmcp_bridge_submit *s, int alone, char **result_out, size_t *result_len_out,
                               char **err_out) {
  if (err_out != NULL) {
    *err_out = NULL;
  }
  s->want_err = err_out != NULL;
  lmcp_bridge_submit *head = __atomic_load_n(&lmcp_bridge_submitted, __ATOMIC_RELAXED);
  do {
    s->next = head;
  } while (
      !__atomic_compare_exchange_n(&lmcp_bridge_submitted, &head, s, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  if (head == NULL) {
    /* The stack was empty: the submitter may be asleep (it takes the whole
     * stack after each wake-up, so one write per burst is enough). A full
     * counter (EAGAIN) means a wake-up is pending anyway. */
    uint64_t one = 1;
    int fd = __atomic_load_n(&lmcp_bridge_submit_fd, __ATOMIC_ACQUIRE);
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }
  sync_wait_for(&s->w, -1, alone);
  lmcp_status st = sync_take(&s->w, result_out, result_len_out, err_out);
  route(s->handle, s->networked);
  return st;
}

lmcp_status lmcp_bridge_blocking(lmcp_bridge_submit *s, lmcp_bridge_start start, char **result_out,
                                 size_t *result_len_out, char **err_out) {
  int n = __atomic_add_fetch(&lmcp_bridge_blocking_calls, 1, __ATOMIC_RELAXED);
  int few = n < __atomic_load_n(&lmcp_bridge_procs, __ATOMIC_RELAXED);
  lmcp_status st;
  if (result_out != NULL && few && submitting(s->handle)) {
    *result_out = NULL;
    st = submit_wait(s, n == 1, result_out, result_len_out, err_out);
  } else {
    lmcp_bridge_sync w = {0};
    st = start(s, &w, result_out, result_len_out, err_out);
    if (st == LMCP_BRIDGE_SYNC_STARTED) {
      st = lmcp_bridge_sync_finish(&w, result_out, result_len_out, err_out);
    } else if (st == LMCP_BRIDGE_SYNC_SUBMIT) {
      st = submit_wait(s, n == 1, result_out, result_len_out, err_out);
    }
  }
  __atomic_sub_fetch(&lmcp_bridge_blocking_calls, 1, __ATOMIC_RELAXED);
  return st;
}
