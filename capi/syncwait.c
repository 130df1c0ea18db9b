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
static int sync_wait_for(lmcp_bridge_sync *w, int32_t timeout_ms) {
  uint32_t *state = &w->state;
  int64_t start = now_ns();
  int64_t limit = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000;
  if (spin_next || (++spin_probe & 15) == 0) {
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
  sync_wait_for(w, -1);
  return sync_take(w, result_out, result_len_out, err_out);
}

lmcp_status lmcp_sync_call_wait(lmcp_sync_call *call, int32_t timeout_ms, int *done_out, char **result_out,
                                size_t *result_len_out, char **err_out) {
  if (call == NULL || done_out == NULL || result_out == NULL) {
    return LMCP_E_INVALID_ARGUMENT;
  }
  *result_out = NULL;
  *done_out = sync_wait_for(call, timeout_ms);
  return *done_out ? sync_take(call, result_out, result_len_out, err_out) : LMCP_OK;
}
