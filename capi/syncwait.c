/* The C half of a blocking call's wait (lmcp_bridge_sync in bridge.h): the
 * calling thread spins briefly, then sleeps on a futex, outside the Go
 * runtime; the completion (syncwait.go) stores the outcome and signals it. */
#include <linux/futex.h>
#include <stdint.h>
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

/* sync_wait returns once w's state is DONE: after up to
 * LMCP_BRIDGE_SYNC_SPIN_NS of spinning (the clock is read every 64 turns)
 * when spin_next says so, asleep on the futex. */
static void sync_wait(lmcp_bridge_sync *w) {
  uint32_t *state = &w->state;
  int64_t start = now_ns();
  if (spin_next || (++spin_probe & 15) == 0) {
    for (unsigned i = 1;; i++) {
      if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == LMCP_BRIDGE_SYNC_DONE) {
        return;
      }
      cpu_relax();
      if ((i & 63) == 0 && now_ns() - start >= LMCP_BRIDGE_SYNC_SPIN_NS) {
        break;
      }
    }
  }
  uint32_t expected = LMCP_BRIDGE_SYNC_PENDING;
  if (__atomic_compare_exchange_n(state, &expected, LMCP_BRIDGE_SYNC_SLEEPING, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(state, __ATOMIC_ACQUIRE) != LMCP_BRIDGE_SYNC_DONE) {
      /* Returns at once when the word is no longer SLEEPING; an
       * interrupted or spurious wake-up loops. */
      syscall(SYS_futex, state, FUTEX_WAIT_PRIVATE, LMCP_BRIDGE_SYNC_SLEEPING, NULL, NULL, 0);
    }
  }
  spin_next = now_ns() - start < LMCP_BRIDGE_SYNC_SPIN_NS;
}

lmcp_status lmcp_bridge_sync_finish(lmcp_bridge_sync *w, char **result_out, size_t *result_len_out,
                                    char **err_out) {
  sync_wait(w);
  if (w->status == LMCP_OK) {
    *result_out = w->json;
    if (result_len_out != NULL) {
      *result_len_out = w->len;
    }
  } else if (err_out != NULL) {
    *err_out = w->json;
  }
  return w->status;
}
