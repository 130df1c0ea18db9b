/*
 * test_queue.c — completion queues (the QUEUE section of lemonmcp.h):
 * lmcp_queue_new, lmcp_client_call_queued, lmcp_queue_pop, lmcp_queue_free.
 *
 *   test_queue_echo_calls          calls complete into the queue, each tag
 *       once, with its call id and a valid NUL-terminated result; the
 *       descriptor is readable exactly while completions wait
 *   test_queue_pop_batches         max limits a pop; what is left stays
 *       readable; each completion comes out once
 *   test_queue_bad_input           NULL and freed handles, NULL out-params
 *   test_queue_cancel_and_timeout  cancelled and timed-out calls complete
 *       into the queue with their status and an error object
 *   test_queue_client_freed        lmcp_client_free queues the pending
 *       calls' LMCP_E_CANCELLED; the queue outlives the client
 *   test_queue_freed_with_calls_pending   the queue is freed first: the
 *       calls still complete inside the library, nothing is left behind
 *   test_queue_free_races_pop      threads popping and polling while
 *       another frees the queue: a blocked poller wakes, later pops get
 *       LMCP_E_INVALID_HANDLE
 *   test_queue_held_sends          requests sent between lmcp_client_hold_sends
 *       and the last lmcp_client_release_sends reach the server only at
 *       that release (nothing completes before it), then all complete;
 *       NULL and freed clients are refused
 *   test_zz_nothing_left           no queue, client or pending call remains
 */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define AL(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define AST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define AADD(x, n) __atomic_add_fetch(&(x), (n), __ATOMIC_SEQ_CST)

static const char ECHO[] = "{\"name\":\"echo\",\"arguments\":{\"text\":\"q\"}}";

static int readable(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static long long diag(const char *key) {
  char *json = NULL;
  long long v = -1;
  if (lmcp_diagnostics(&json, NULL) == LMCP_OK) json_get_int(json, key, &v);
  lmcp_free(json);
  return v;
}

static lmcp_queue *new_queue(int *fd) {
  lmcp_queue *q = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_queue_new(&q, fd, &err), LMCP_OK, err);
  CHECK(err == NULL);
  CHECK(q != NULL && *fd >= 0);
  return q;
}

/* The legacy era: these tests wait for pending_calls to drop to 0, and in
 * the 2026-07-28 era the library keeps its own subscriptions/listen request
 * open (and counted) while the client is ready. The queue behaves the same
 * in both eras. */
static lmcp_client *fixture(void) {
  char cfg[2048];
  return start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"protocol\":{\"mode\":\"legacy\"}"),
                      NULL);
}

static lmcp_status queued(lmcp_client *c, const char *params, const char *opts, lmcp_queue *q, uint64_t tag,
                          lmcp_call_id *id) {
  char *err = NULL;
  lmcp_status st = lmcp_client_call_queued(c, "tools/call", params, strlen(params), opts,
                                           opts ? strlen(opts) : 0, q, tag, id, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  return st;
}

/* A completion's invariants: json inside the block, NUL-terminated, valid. */
static void check_record(const lmcp_completion *r, const lmcp_completion *batch, size_t size) {
  const char *lo = (const char *)batch, *hi = lo + size;
  CHECKM(r->json >= lo && r->json + r->len < hi, NULL, "json points into the batch");
  CHECKM(r->json[r->len] == '\0', NULL, "json is NUL-terminated");
  CHECKM(json_valid(r->json, r->len), NULL, "json is valid: %.*s", (int)r->len, r->json);
  CHECK(r->reserved == 0);
}

/* Pops until want completions arrived (bounded), recording them by tag. */
static int drain(lmcp_queue *q, int fd, int want, lmcp_status *status_by_tag, lmcp_call_id *id_by_tag,
                 int *seen_by_tag, int ntags) {
  int got = 0;
  int64_t deadline = now_ms() + T(10000);
  while (got < want && now_ms() < deadline) {
    if (!readable(fd, 100)) continue;
    lmcp_completion *batch = NULL;
    size_t n = 0, size = 0;
    CHECK_ST(lmcp_queue_pop(q, 0, &batch, &n, &size), LMCP_OK, NULL);
    CHECKM(n > 0, NULL, "a readable queue has completions");
    for (size_t i = 0; i < n; i++) {
      const lmcp_completion *r = &batch[i];
      check_record(r, batch, size);
      if (r->tag < (uint64_t)ntags) {
        seen_by_tag[r->tag]++;
        status_by_tag[r->tag] = r->status;
        id_by_tag[r->tag] = r->call_id;
      } else {
        CHECKM(0, NULL, "unexpected tag %llu", (unsigned long long)r->tag);
      }
      got++;
    }
    lmcp_free(batch);
  }
  return got;
}

static void test_queue_echo_calls(void) {
  enum { N = 32 };
  lmcp_client *c = fixture();
  if (c == NULL) return;
  int fd = -1;
  lmcp_queue *q = new_queue(&fd);
  CHECKM(!readable(fd, 0), NULL, "an empty queue is not readable");
  lmcp_completion *batch = (lmcp_completion *)1;
  size_t n = 99;
  CHECK_ST(lmcp_queue_pop(q, 0, &batch, &n, NULL), LMCP_OK, NULL);
  CHECK(batch == NULL && n == 0);

  lmcp_call_id issued[N], got_id[N];
  lmcp_status st[N];
  int seen[N] = {0};
  for (int i = 0; i < N; i++) queued(c, ECHO, NULL, q, (uint64_t)i, &issued[i]);
  CHECK(drain(q, fd, N, st, got_id, seen, N) == N);
  for (int i = 0; i < N; i++) {
    CHECKM(seen[i] == 1, NULL, "tag %d completed %d times", i, seen[i]);
    CHECK_ST(st[i], LMCP_OK, NULL);
    CHECKM(got_id[i] == issued[i], NULL, "tag %d: call id %llu, issued %llu", i,
           (unsigned long long)got_id[i], (unsigned long long)issued[i]);
  }
  CHECKM(!readable(fd, 0), NULL, "a drained queue is not readable");
  lmcp_queue_free(q);
  stop_client(c, NULL);
}

static void test_queue_pop_batches(void) {
  enum { N = 10 };
  lmcp_client *c = fixture();
  if (c == NULL) return;
  int fd = -1;
  lmcp_queue *q = new_queue(&fd);
  for (int i = 0; i < N; i++) queued(c, ECHO, NULL, q, (uint64_t)i, NULL);
  /* Wait for every call to finish, so the pops below see all of them. */
  int64_t deadline = now_ms() + T(10000);
  while (diag("pending_calls") != 0 && now_ms() < deadline) sleep_ms(5);
  CHECK(diag("pending_calls") == 0);
  size_t sizes[] = {4, 4, 0};
  size_t want[] = {4, 4, 2};
  int seen[N] = {0};
  for (int b = 0; b < 3; b++) {
    CHECKM(readable(fd, 0), NULL, "readable before pop %d", b);
    lmcp_completion *batch = NULL;
    size_t n = 0, size = 0;
    CHECK_ST(lmcp_queue_pop(q, sizes[b], &batch, &n, &size), LMCP_OK, NULL);
    CHECKM(n == want[b], NULL, "pop %d: %zu completions, want %zu", b, n, want[b]);
    for (size_t i = 0; i < n; i++) {
      check_record(&batch[i], batch, size);
      CHECKM(batch[i].tag < N && !seen[batch[i].tag], NULL, "tag %llu once",
             (unsigned long long)batch[i].tag);
      if (batch[i].tag < N) seen[batch[i].tag] = 1;
    }
    lmcp_free(batch);
  }
  CHECK(!readable(fd, 0));
  lmcp_queue_free(q);
  stop_client(c, NULL);
}

static void test_queue_bad_input(void) {
  char *err = NULL;
  int fd = -1;
  CHECK_ST(lmcp_queue_new(NULL, &fd, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;

  lmcp_queue *q = NULL;
  CHECK_ST(lmcp_queue_new(&q, NULL, NULL), LMCP_OK, NULL); /* fd_out may be NULL */
  lmcp_completion *batch = NULL;
  size_t n = 0;
  CHECK_ST(lmcp_queue_pop(q, 0, NULL, &n, NULL), LMCP_E_INVALID_ARGUMENT, NULL);
  CHECK_ST(lmcp_queue_pop(q, 0, &batch, NULL, NULL), LMCP_E_INVALID_ARGUMENT, NULL);
  CHECK_ST(lmcp_queue_pop(NULL, 0, &batch, &n, NULL), LMCP_E_INVALID_HANDLE, NULL);

  lmcp_client *c = fixture();
  if (c != NULL) {
    lmcp_call_id id = 0;
    CHECK_ST(lmcp_client_call_queued(c, "tools/call", ECHO, strlen(ECHO), NULL, 0, NULL, 1, &id, &err),
             LMCP_E_INVALID_HANDLE, err);
    CHECK_ERR_JSON(err, LMCP_E_INVALID_HANDLE);
    CHECKM(err != NULL && strstr(err, "queue") != NULL, err, "the message names the queue");
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_client_call_queued(c, NULL, ECHO, strlen(ECHO), NULL, 0, q, 1, &id, &err),
             LMCP_E_INVALID_ARGUMENT, err);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_client_call_queued(c, "tools/call", "[1]", 3, NULL, 0, q, 1, &id, &err),
             LMCP_E_INVALID_ARGUMENT, err);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_client_call_queued(c, "tools/call", ECHO, strlen(ECHO), "{\"timeout_ms\":\"x\"}", 19, q, 1,
                                     &id, &err),
             LMCP_E_INVALID_ARGUMENT, err);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_queue_pop(q, 0, &batch, &n, NULL), LMCP_OK, NULL);
    CHECKM(n == 0, NULL, "a refused call queues nothing");
    stop_client(c, NULL);
    /* A freed client. */
    CHECK_ST(lmcp_client_call_queued(c, "tools/call", ECHO, strlen(ECHO), NULL, 0, q, 1, &id, &err),
             LMCP_E_INVALID_HANDLE, err);
    lmcp_free(err);
    err = NULL;
  }
  lmcp_queue_free(q);
  CHECK_ST(lmcp_queue_pop(q, 0, &batch, &n, NULL), LMCP_E_INVALID_HANDLE, NULL);
  lmcp_queue_free(q);    /* twice: harmless */
  lmcp_queue_free(NULL); /* NULL: a no-op */
}

static void test_queue_cancel_and_timeout(void) {
  lmcp_client *c = fixture();
  if (c == NULL) return;
  int fd = -1;
  lmcp_queue *q = new_queue(&fd);
  static const char SLOW[] = "{\"name\":\"slow\",\"arguments\":{\"ms\":20000,\"steps\":2}}";
  lmcp_call_id cancelled = 0, timed = 0;
  queued(c, SLOW, NULL, q, 0, &cancelled);
  queued(c, SLOW, "{\"timeout_ms\":100}", q, 1, &timed);
  CHECK_ST(lmcp_client_cancel(c, cancelled), LMCP_OK, NULL);
  lmcp_status st[2] = {0, 0};
  lmcp_call_id ids[2] = {0, 0};
  int seen[2] = {0, 0};
  CHECK(drain(q, fd, 2, st, ids, seen, 2) == 2);
  CHECK_ST(st[0], LMCP_E_CANCELLED, NULL);
  CHECK_ST(st[1], LMCP_E_TIMEOUT, NULL);
  CHECK(ids[0] == cancelled && ids[1] == timed);
  CHECK_ST(lmcp_client_cancel(c, cancelled), LMCP_E_NOT_FOUND, NULL);
  lmcp_queue_free(q);
  stop_client(c, NULL);
}

static void test_queue_client_freed(void) {
  enum { N = 5 };
  lmcp_client *c = fixture();
  if (c == NULL) return;
  int fd = -1;
  lmcp_queue *q = new_queue(&fd);
  static const char SLOW[] = "{\"name\":\"slow\",\"arguments\":{\"ms\":20000,\"steps\":2}}";
  for (int i = 0; i < N; i++) queued(c, SLOW, NULL, q, (uint64_t)i, NULL);
  lmcp_client_free(c);
  lmcp_status st[N];
  lmcp_call_id ids[N];
  int seen[N] = {0};
  CHECK(drain(q, fd, N, st, ids, seen, N) == N);
  for (int i = 0; i < N; i++) {
    CHECKM(seen[i] == 1, NULL, "tag %d: %d completions", i, seen[i]);
    CHECK_ST(st[i], LMCP_E_CANCELLED, NULL);
  }
  lmcp_queue_free(q);
}

static void test_queue_freed_with_calls_pending(void) {
  lmcp_client *c = fixture();
  if (c == NULL) return;
  int fd = -1;
  long long queues0 = diag("live_queues");
  lmcp_queue *q = new_queue(&fd);
  CHECK(diag("live_queues") == queues0 + 1);
  static const char SLOW[] = "{\"name\":\"slow\",\"arguments\":{\"ms\":300,\"steps\":2}}";
  for (int i = 0; i < 4; i++) queued(c, ECHO, NULL, q, (uint64_t)i, NULL);
  for (int i = 0; i < 4; i++) queued(c, SLOW, NULL, q, (uint64_t)(10 + i), NULL);
  sleep_ms(50); /* the echoes are waiting in the queue, the slow calls are not done */
  lmcp_queue_free(q);
  CHECK(diag("live_queues") == queues0);
  /* The slow calls finish into a freed queue. */
  int64_t deadline = now_ms() + T(10000);
  while (diag("pending_calls") != 0 && now_ms() < deadline) sleep_ms(10);
  CHECK(diag("pending_calls") == 0);
  expect_echo(c, "still usable");
  stop_client(c, NULL);
}

typedef struct {
  lmcp_queue *q;
  int fd;
  int stop;
  int woke;    /* the blocked poller returned */
  int invalid; /* pops that got LMCP_E_INVALID_HANDLE */
  int errors;  /* any other unexpected status */
} race_t;

static void *popper(void *arg) {
  race_t *r = arg;
  while (!AL(r->stop)) {
    lmcp_completion *batch = NULL;
    size_t n = 0;
    lmcp_status st = lmcp_queue_pop(r->q, 2, &batch, &n, NULL);
    if (st == LMCP_E_INVALID_HANDLE) {
      AADD(r->invalid, 1);
      break;
    }
    if (st != LMCP_OK) AADD(r->errors, 1);
    lmcp_free(batch);
  }
  return NULL;
}

static void *poller(void *arg) {
  race_t *r = arg;
  struct pollfd p = {r->fd, POLLIN, 0};
  int k = poll(&p, 1, T(10000));
  AST(r->woke, k == 1 ? 1 : -1);
  return NULL;
}

static void test_queue_free_races_pop(void) {
  lmcp_client *c = fixture();
  if (c == NULL) return;
  for (int round = 0; round < 20; round++) {
    race_t r = {0};
    int qfd = -1;
    r.q = new_queue(&qfd);
    /* The poller watches a duplicate of the queue's descriptor: if it only
     * reaches poll() after lmcp_queue_free closed the original (a slow
     * thread under valgrind), the number may already name another file,
     * while the duplicate still names the eventfd that free signalled. */
    r.fd = dup(qfd);
    pthread_t pl;
    pthread_create(&pl, NULL, poller, &r);
    sleep_ms(5);
    pthread_t pops[3];
    for (int i = 0; i < 3; i++) pthread_create(&pops[i], NULL, popper, &r);
    for (int i = 0; i < 20; i++) {
      lmcp_status st =
          lmcp_client_call_queued(c, "tools/call", ECHO, strlen(ECHO), NULL, 0, r.q, (uint64_t)i, NULL, NULL);
      CHECK_ST(st, LMCP_OK, NULL);
    }
    sleep_ms(round % 5);
    lmcp_queue_free(r.q);
    pthread_join(pl, NULL);
    close(r.fd);
    for (int i = 0; i < 3; i++) pthread_join(pops[i], NULL);
    CHECKM(AL(r.woke) == 1, NULL, "round %d: the poller woke", round);
    CHECKM(AL(r.invalid) == 3, NULL, "round %d: %d poppers saw the free", round, AL(r.invalid));
    CHECK(AL(r.errors) == 0);
    /* Later calls with the freed queue are refused. */
    char *err = NULL;
    CHECK_ST(lmcp_client_call_queued(c, "tools/call", ECHO, strlen(ECHO), NULL, 0, r.q, 0, NULL, &err),
             LMCP_E_INVALID_HANDLE, err);
    lmcp_free(err);
  }
  stop_client(c, NULL);
}

static void test_queue_held_sends(void) {
  enum { N = 8 };
  lmcp_client *c = fixture();
  if (c == NULL) return;
  int fd = -1;
  lmcp_queue *q = new_queue(&fd);
  CHECK_ST(lmcp_client_hold_sends(c), LMCP_OK, NULL);
  CHECK_ST(lmcp_client_hold_sends(c), LMCP_OK, NULL); /* holds nest */
  lmcp_call_id issued[N], got_id[N];
  lmcp_status st[N];
  int seen[N] = {0};
  for (int i = 0; i < N; i++) queued(c, ECHO, NULL, q, (uint64_t)i, &issued[i]);
  CHECK_ST(lmcp_client_release_sends(c), LMCP_OK, NULL);
  /* The requests are still held: the server has none to answer. */
  CHECKM(!readable(fd, T(200)), NULL, "a call completed while its request was held");
  CHECK_ST(lmcp_client_release_sends(c), LMCP_OK, NULL);
  CHECK(drain(q, fd, N, st, got_id, seen, N) == N);
  for (int i = 0; i < N; i++) {
    CHECKM(seen[i] == 1, NULL, "tag %d completed %d times", i, seen[i]);
    CHECK_ST(st[i], LMCP_OK, NULL);
  }
  CHECK_ST(lmcp_client_hold_sends(NULL), LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(lmcp_client_release_sends(NULL), LMCP_E_INVALID_HANDLE, NULL);
  lmcp_client_close(c, T(2000), NULL);
  lmcp_client_free(c);
  CHECK_ST(lmcp_client_hold_sends(c), LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(lmcp_client_release_sends(c), LMCP_E_INVALID_HANDLE, NULL);
  lmcp_queue_free(q);
}

static void test_zz_nothing_left(void) {
  int64_t deadline = now_ms() + T(5000);
  while (now_ms() < deadline &&
         (diag("live_queues") != 0 || diag("live_clients") != 0 || diag("pending_calls") != 0)) {
    sleep_ms(20);
  }
  CHECKM(diag("live_queues") == 0, NULL, "live_queues=%lld", diag("live_queues"));
  CHECKM(diag("live_clients") == 0, NULL, "live_clients=%lld", diag("live_clients"));
  CHECKM(diag("pending_calls") == 0, NULL, "pending_calls=%lld", diag("pending_calls"));
}

int main(void) {
  RUN_TEST(test_queue_echo_calls, 30);
  RUN_TEST(test_queue_pop_batches, 30);
  RUN_TEST(test_queue_bad_input, 30);
  RUN_TEST(test_queue_cancel_and_timeout, 30);
  RUN_TEST(test_queue_client_freed, 30);
  RUN_TEST(test_queue_freed_with_calls_pending, 30);
  RUN_TEST(test_queue_free_races_pop, 60);
  RUN_TEST(test_queue_held_sends, 30);
  RUN_TEST(test_zz_nothing_left, 20);
  temp_dir_cleanup();
  return h_finish();
}
