/*
 * test_free_race.c — lmcp_client_free racing every other call, and the
 * promise that no callback runs once free has returned.
 *
 * The header lets lmcp_client_free race any call on the same handle: a call
 * that comes later gets LMCP_E_INVALID_HANDLE, one already under way ends
 * cleanly, and when free returns every pending call's done has run, every
 * callback that had started has returned, no callback starts again, and
 * every registration's destroy has run (except, when free is called from
 * one of the client's own callbacks, for those callbacks and their
 * registration). The tests here hold the library to that:
 *
 *   test_free_races_every_call   many iterations of: a ready client with
 *       progress and log events flowing and host requests coming, several
 *       threads calling call/call_sync/notify/state/server_info/cancel/
 *       respond/wait_ready/connect in a loop (callbacks call lmcp_ functions
 *       too), and the main thread freeing the client at a varying moment.
 *       Every callback checks whether free has already returned.
 *   test_free_inside_own_event_callback, ..._done_callback,
 *   ..._host_request_callback   free called from the client's own
 *       callbacks: no deadlock, pending calls completed before free returns,
 *       the calling callback's own destroy deferred until it returns.
 *   test_free_other_client_inside_callback   a callback of client B frees
 *       client A while A is busy.
 *
 * Usage: lmcp_free_race [N]   (N iterations of the race; default 100, or
 * 12 under LMCP_TEST_TIME_SCALE, i.e. valgrind).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define AL(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define AST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define AADD(x, n) __atomic_add_fetch(&(x), (n), __ATOMIC_SEQ_CST)

#define HAMMERS 4

/* One client's life: what its callbacks and the threads around it saw. */
typedef struct {
  lmcp_client *c;
  int free_returned; /* set right after lmcp_client_free returns */
  int stop;          /* the hammer threads stop */
  int late;          /* callbacks that started after free returned */
  int late_destroys; /* destroys that ran after free returned */
  int running;       /* callbacks running now */
  int events, progress, logs, dones, cancelled, accepted, hostreqs, destroys;
  int bad_late_status; /* a call begun after free returned got another status */
  int statuses[16];    /* -status: how often each status came back */
  unsigned long long last_call;
  /* for the free-from-a-callback tests */
  int free_in_cb; /* which callback frees: 0 none, 1 event, 2 done, 3 host */
  int freeing;    /* the callback that frees has been chosen */
  int dones_when_freed, accepted_when_freed, destroys_when_freed;
  int free_done_in_cb; /* free returned inside the callback */
  lmcp_client *other;  /* a client to free from this one's callbacks */
  int other_freed;
} life_t;

static void cb_enter(life_t *l) {
  if (AL(l->free_returned)) {
    AADD(l->late, 1);
  }
  AADD(l->running, 1);
}

static void cb_exit(life_t *l) {
  AADD(l->running, -1);
}

static void note_status(life_t *l, lmcp_status st) {
  int i = -st;
  if (i >= 0 && i < 16) {
    AADD(l->statuses[i], 1);
  }
}

/* free_from_callback is what the callback chosen to free does. */
static void free_from_callback(life_t *l) {
  lmcp_client_free(l->c);
  AST(l->dones_when_freed, AL(l->dones));
  AST(l->destroys_when_freed, AL(l->destroys));
  AST(l->free_done_in_cb, 1);
}

static void on_event(void *ud, const char *kind, const char *json, size_t len) {
  life_t *l = ud;
  cb_enter(l);
  (void)json;
  (void)len;
  AADD(l->events, 1);
  if (strcmp(kind, "progress") == 0) {
    AADD(l->progress, 1);
  } else if (strcmp(kind, "log") == 0) {
    AADD(l->logs, 1);
  }
  lmcp_state s;
  (void)lmcp_client_state(l->c, &s); /* a callback may call the library */
  if (l->free_in_cb == 1 && AL(l->progress) >= 3 &&
      __atomic_exchange_n(&l->freeing, 1, __ATOMIC_SEQ_CST) == 0) {
    AST(l->accepted_when_freed, AL(l->accepted));
    free_from_callback(l);
  }
  if (l->other != NULL && AL(l->progress) >= 2 &&
      __atomic_exchange_n(&l->other_freed, 1, __ATOMIC_SEQ_CST) == 0) {
    lmcp_client_free(l->other);
  }
  cb_exit(l);
}

static void on_destroy(void *ud) {
  life_t *l = ud;
  if (AL(l->free_returned)) {
    AADD(l->late_destroys, 1);
  }
  AADD(l->destroys, 1);
}

static void on_host_request(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  life_t *l = ud;
  cb_enter(l);
  (void)kind;
  (void)json;
  (void)len;
  AADD(l->hostreqs, 1);
  if (l->free_in_cb == 3 && __atomic_exchange_n(&l->freeing, 1, __ATOMIC_SEQ_CST) == 0) {
    AST(l->accepted_when_freed, AL(l->accepted));
    free_from_callback(l);
  }
  const char *answer = "{\"roots\":[{\"uri\":\"file:///tmp\",\"name\":\"tmp\"}]}";
  char *err = NULL;
  lmcp_status st = lmcp_client_respond(l->c, id, LMCP_OK, answer, strlen(answer), &err);
  note_status(l, st);
  lmcp_free(err);
  cb_exit(l);
}

/* A call's user_data: the life it belongs to. Freed by done. */
typedef struct {
  life_t *l;
} call_box;

static void on_done(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  call_box *box = ud;
  life_t *l = box->l;
  cb_enter(l);
  (void)json;
  (void)len;
  if (st == LMCP_E_CANCELLED) {
    AADD(l->cancelled, 1);
  }
  (void)lmcp_client_cancel(l->c, id); /* already completed: NOT_FOUND or INVALID_HANDLE */
  AADD(l->dones, 1);
  free(box);
  if (l->free_in_cb == 2 && __atomic_exchange_n(&l->freeing, 1, __ATOMIC_SEQ_CST) == 0) {
    AST(l->accepted_when_freed, AL(l->accepted));
    free_from_callback(l);
  }
  cb_exit(l);
}

/* call_async starts tools/call name(args) with options; counts it. */
static lmcp_status call_async(life_t *l, const char *name, const char *args, const char *opts) {
  char params[256];
  snprintf(params, sizeof(params), "{\"name\":\"%s\",\"arguments\":%s}", name, args);
  call_box *box = malloc(sizeof(*box));
  box->l = l;
  lmcp_call_id id = 0;
  char *err = NULL;
  lmcp_status st = lmcp_client_call(l->c, "tools/call", params, strlen(params), opts, opts ? strlen(opts) : 0,
                                    on_done, box, &id, &err);
  lmcp_free(err);
  if (st == LMCP_OK) {
    AADD(l->accepted, 1);
    AST(l->last_call, id);
  } else {
    free(box); /* done never runs */
  }
  return st;
}

/* one_op runs operation i of the mix against the client. */
static lmcp_status one_op(life_t *l, int i) {
  char *err = NULL, *out = NULL;
  size_t n = 0;
  lmcp_status st;
  lmcp_state s;
  static const char echo[] = "{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}";
  static const char notif[] = "notifications/roots/list_changed";
  switch (i % 12) {
  case 0: st = call_async(l, "slow", "{\"ms\":60,\"steps\":12}", "{\"progress\":true}"); break;
  case 1: st = call_async(l, "echo", "{\"text\":\"hi\"}", NULL); break;
  case 2:
    st = lmcp_client_call_sync(l->c, "tools/call", echo, strlen(echo), "{\"timeout_ms\":3000}",
                               strlen("{\"timeout_ms\":3000}"), &out, &n, &err);
    break;
  case 3: st = lmcp_client_notify(l->c, notif, NULL, 0, &err); break;
  case 4: st = lmcp_client_state(l->c, &s); break;
  case 5: st = lmcp_client_server_info(l->c, &out, &n, &err); break;
  case 6: st = lmcp_client_cancel(l->c, AL(l->last_call)); break;
  case 7: st = lmcp_client_respond(l->c, 999999, LMCP_OK, "{}", 2, &err); break;
  case 8: st = call_async(l, "roots", "{}", NULL); break;
  case 9: st = call_async(l, "stderr", "{\"bytes\":1500}", NULL); break;
  case 10: st = lmcp_client_wait_ready(l->c, 0, &err); break;
  default:
    st = lmcp_client_connect(l->c, &err); /* already connected: INVALID_STATE */
    break;
  }
  lmcp_free(out);
  lmcp_free(err);
  return st;
}

static int hammer_seed;

static void *hammer(void *arg) {
  life_t *l = arg;
  for (int i = AADD(hammer_seed, 5); !AL(l->stop); i++) {
    int after = AL(l->free_returned);
    lmcp_status st = one_op(l, i);
    note_status(l, st);
    if (after && st != LMCP_E_INVALID_HANDLE) {
      AADD(l->bad_late_status, 1);
    }
    if (st == LMCP_E_INVALID_HANDLE) {
      sleep_ms(1); /* freed: a few late calls are enough, do not spin */
    }
  }
  return NULL;
}

static char config[1024];

/* open_client creates, registers and connects a client for l. */
static int open_client(life_t *l) {
  fixture_config(config, sizeof(config), NULL, NULL, "\"handlers\":{\"roots\":{\"list_changed\":true}}");
  char *err = NULL;
  lmcp_status st = lmcp_client_new(config, strlen(config), &l->c, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  if (st != LMCP_OK) {
    return 0;
  }
  CHECK_ST(lmcp_client_set_event_handler(l->c, on_event, l, on_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_client_set_host_request_handler(l->c, on_host_request, l, on_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_client_connect(l->c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  st = lmcp_client_wait_ready(l->c, 10000 * h_time_scale, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  return st == LMCP_OK;
}

static int iterations = 100;

static void test_free_races_every_call(void) {
  long long events = 0, progress = 0, logs = 0, dones = 0, cancelled = 0, hostreqs = 0, late_calls = 0;
  int failures = 0;
  for (int it = 0; it < iterations && failures < 3; it++) {
    life_t *l = calloc(1, sizeof(*l));
    if (!open_client(l)) {
      lmcp_client_free(l->c);
      free(l);
      failures++;
      continue;
    }
    /* Progress events flowing before the hammers start. */
    call_async(l, "slow", "{\"ms\":400,\"steps\":100}", "{\"progress\":true}");
    call_async(l, "stderr", "{\"bytes\":4000}", NULL);
    pthread_t th[HAMMERS];
    for (int i = 0; i < HAMMERS; i++) {
      pthread_create(&th[i], NULL, hammer, l);
    }
    sleep_ms(2 + (it * 7) % 40);

    lmcp_client_free(l->c);
    int running = AL(l->running);
    AST(l->free_returned, 1);
    int dones_at_free = AL(l->dones), destroys_at_free = AL(l->destroys);

    sleep_ms(15 * h_time_scale); /* time for a late callback to show up */
    AST(l->stop, 1);
    for (int i = 0; i < HAMMERS; i++) {
      pthread_join(th[i], NULL);
    }
    int ok = 1;
    ok &= CHECKM(running == 0, NULL, "iteration %d: %d callbacks still running when free returned", it,
                 running);
    ok &= CHECKM(AL(l->late) == 0, NULL, "iteration %d: %d callbacks started after free returned", it,
                 AL(l->late));
    ok &= CHECKM(destroys_at_free == 2 && AL(l->late_destroys) == 0, NULL,
                 "iteration %d: %d destroys when free returned (want 2), %d after", it, destroys_at_free,
                 AL(l->late_destroys));
    ok &= CHECKM(AL(l->dones) == dones_at_free, NULL, "iteration %d: %d completions after free returned", it,
                 AL(l->dones) - dones_at_free);
    ok &= CHECKM(AL(l->accepted) == AL(l->dones), NULL, "iteration %d: %d calls accepted, %d completed", it,
                 AL(l->accepted), AL(l->dones));
    ok &= CHECKM(AL(l->bad_late_status) == 0, NULL,
                 "iteration %d: %d calls made after free returned did not get LMCP_E_INVALID_HANDLE", it,
                 AL(l->bad_late_status));
    ok &= CHECKM(AL(l->statuses[14]) == 0, NULL, "iteration %d: %d calls returned LMCP_E_INTERNAL", it,
                 AL(l->statuses[14]));
    if (!ok) {
      failures++;
    }
    events += l->events;
    progress += l->progress;
    logs += l->logs;
    dones += l->dones;
    cancelled += l->cancelled;
    hostreqs += l->hostreqs;
    late_calls += l->statuses[2];
    free(l);
  }
  printf(
      "  %d iterations: %lld events (%lld progress, %lld log), %lld completions (%lld cancelled), %lld host "
      "requests, %lld calls answered LMCP_E_INVALID_HANDLE\n",
      iterations, events, progress, logs, dones, cancelled, hostreqs, late_calls);
  CHECKM(progress > 0 && logs > 0 && hostreqs > 0, NULL, "events and host requests must have flowed");
  CHECKM(cancelled > 0, NULL, "some calls must have been pending when free ran");
}

/* free_in_callback runs one client whose callback `which` frees it. */
static void free_in_callback(int which) {
  life_t *l = calloc(1, sizeof(*l));
  l->free_in_cb = which;
  if (!open_client(l)) {
    lmcp_client_free(l->c);
    free(l);
    return;
  }
  /* A few slow calls stay pending while the callback frees. */
  for (int i = 0; i < 3; i++) {
    CHECK_ST(call_async(l, "slow", "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}"), LMCP_OK, NULL);
  }
  if (which == 2) {
    CHECK_ST(call_async(l, "echo", "{\"text\":\"x\"}", NULL), LMCP_OK, NULL);
  }
  if (which == 3) {
    CHECK_ST(call_async(l, "roots", "{}", NULL), LMCP_OK, NULL);
  }
  int64_t deadline = now_ms() + 10000 * h_time_scale;
  while (!AL(l->free_done_in_cb) && now_ms() < deadline) {
    sleep_ms(5);
  }
  CHECKM(AL(l->free_done_in_cb), NULL, "the callback's free did not return");
  AST(l->free_returned, 1);
  /* The callback that freed is its own exception: the rest ran before free
   * returned. The destroy of the registration whose callback freed runs
   * once it returns. */
  while (AL(l->destroys) < 2 && now_ms() < deadline) {
    sleep_ms(5);
  }
  sleep_ms(15 * h_time_scale);
  CHECKM(AL(l->dones_when_freed) == AL(l->accepted), NULL,
         "%d calls accepted, %d completed when free returned", AL(l->accepted), AL(l->dones_when_freed));
  CHECKM(AL(l->cancelled) >= 3, NULL, "the pending calls complete cancelled (%d)", AL(l->cancelled));
  /* A done callback belongs to no registration: both destroys ran. */
  int want = which == 2 ? 2 : 1;
  CHECKM(AL(l->destroys_when_freed) == want, NULL, "%d destroys when free returned (want %d)",
         AL(l->destroys_when_freed), want);
  CHECKM(AL(l->destroys) == 2, NULL, "both destroys ran in the end: %d", AL(l->destroys));
  CHECKM(AL(l->late) == 0, NULL, "%d callbacks started after free returned", AL(l->late));
  lmcp_state s;
  CHECK_ST(lmcp_client_state(l->c, &s), LMCP_E_INVALID_HANDLE, NULL);
  lmcp_client_free(l->c); /* again: harmless */
  free(l);
}

static void test_free_inside_own_event_callback(void) {
  free_in_callback(1);
}
static void test_free_inside_own_done_callback(void) {
  free_in_callback(2);
}
static void test_free_inside_own_host_request_callback(void) {
  free_in_callback(3);
}

static void test_free_other_client_inside_callback(void) {
  life_t *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
  if (!open_client(a) || !open_client(b)) {
    lmcp_client_free(a->c);
    lmcp_client_free(b->c);
    free(a);
    free(b);
    return;
  }
  for (int i = 0; i < 3; i++) {
    call_async(a, "slow", "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}");
  }
  b->other = a->c;
  while (AL(a->progress) < 1) {
    sleep_ms(2);
  }
  /* b's event callback frees a. */
  call_async(b, "slow", "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}");
  int64_t deadline = now_ms() + 10000 * h_time_scale;
  while (AL(a->destroys) < 2 && now_ms() < deadline) {
    sleep_ms(5);
  }
  CHECKM(AL(b->other_freed), NULL, "b's callback freed a");
  CHECKM(AL(a->destroys) == 2, NULL, "a's destroys: %d", AL(a->destroys));
  CHECKM(AL(a->dones) == AL(a->accepted), NULL, "a: %d accepted, %d completed", AL(a->accepted),
         AL(a->dones));
  CHECKM(AL(a->running) == 0, NULL, "a: callbacks still running");
  lmcp_state s;
  CHECK_ST(lmcp_client_state(a->c, &s), LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(lmcp_client_state(b->c, &s), LMCP_OK, NULL);
  lmcp_client_free(b->c);
  CHECKM(AL(b->dones) == AL(b->accepted), NULL, "b: %d accepted, %d completed", AL(b->accepted),
         AL(b->dones));
  free(a);
  free(b);
}

/* Every client is gone and no call is pending once the frees are done. */
static void test_zz_nothing_left(void) {
  h_diag d = {0};
  int64_t deadline = now_ms() + 5000 * h_time_scale;
  do {
    CHECK(get_diag(&d));
    if (d.live_clients == 0 && d.pending_calls == 0) {
      break;
    }
    sleep_ms(20);
  } while (now_ms() < deadline);
  CHECKM(d.live_clients == 0 && d.pending_calls == 0, NULL, "live_clients=%lld pending_calls=%lld",
         d.live_clients, d.pending_calls);
}

int main(int argc, char **argv) {
  if (getenv("LMCP_TEST_TIME_SCALE") != NULL) {
    iterations = 12;
  }
  if (argc > 1) {
    iterations = atoi(argv[1]);
  }
  RUN_TEST(test_free_races_every_call, 120);
  RUN_TEST(test_free_inside_own_event_callback, 20);
  RUN_TEST(test_free_inside_own_done_callback, 20);
  RUN_TEST(test_free_inside_own_host_request_callback, 20);
  RUN_TEST(test_free_other_client_inside_callback, 20);
  RUN_TEST(test_zz_nothing_left, 20);
  temp_dir_cleanup();
  return h_finish();
}
