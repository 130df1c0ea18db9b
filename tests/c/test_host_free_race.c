/*
 * test_host_free_race.c — lmcp_host_free racing every other host call, and
 * the promise that no host callback runs once free has returned.
 *
 * The header gives lmcp_host_free the guarantees of lmcp_client_free: a
 * call that comes later gets LMCP_E_INVALID_HANDLE, one already under way
 * ends cleanly, and when free returns every pending call's done has run
 * (LMCP_E_CANCELLED), every callback that had started has returned, no
 * callback starts again, and every registration's destroy has run (except,
 * when free is called from one of the host's own callbacks, for those
 * callbacks and their registration). Free never waits for a server. The
 * tests here hold the library to that:
 *
 *   test_free_races_every_call   many iterations of: a host of two ready
 *       fixture servers with progress and log events flowing and host
 *       requests coming, several threads calling every host function in a
 *       loop (callbacks call lmcp_host_ functions too), and the main thread
 *       freeing the host at a varying moment. Every callback checks whether
 *       free has already returned.
 *   test_free_inside_own_event_callback, ..._done_callback,
 *   ..._host_request_callback   free called from the host's own callbacks:
 *       no deadlock, pending calls completed before free returns, the
 *       calling callback's own destroy deferred until it returns.
 *   test_free_inside_other_hosts_callback, ..._clients_callback   a
 *       callback of host B (of a client) frees host A while A is busy.
 *   test_zz_nothing_left   no live host or client, no pending call, and the
 *       library's goroutines back to the idle baseline.
 *
 * Usage: lmcp_host_free_race [N]   (N iterations of the race; default 40,
 * or 8 under LMCP_TEST_TIME_SCALE, i.e. valgrind).
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
#define AXCHG(x, v) __atomic_exchange_n(&(x), (v), __ATOMIC_SEQ_CST)

#define HAMMERS 4

/* One host's life: what its callbacks and the threads around it saw. */
typedef struct {
  lmcp_host *h;
  int free_returned; /* set right after lmcp_host_free returns */
  int stop;          /* the hammer threads stop */
  int late;          /* callbacks that started after free returned */
  int late_destroys; /* destroys that ran after free returned */
  int running;       /* callbacks running now */
  int events, progress, logs, dones, cancelled, accepted, hostreqs, destroys;
  int bad_late_status; /* a call begun after free returned got another status */
  int statuses[16];    /* -status: how often each status came back */
  unsigned long long last_call;
  /* for the free-from-a-callback tests */
  int free_in_cb; /* which callback frees: 0 none, 1 event, 2 done, 3 host request */
  int freeing;    /* the callback that frees has been chosen */
  int dones_when_freed, destroys_when_freed;
  int free_done_in_cb; /* free returned inside the callback */
  lmcp_host *other;    /* a host to free from this one's callbacks */
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
  lmcp_host_free(l->h);
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
  char *js = NULL;
  (void)lmcp_host_servers(l->h, &js, NULL, NULL); /* a callback may call the library */
  lmcp_free(js);
  if (l->free_in_cb == 1 && AL(l->progress) >= 3 && AXCHG(l->freeing, 1) == 0) {
    free_from_callback(l);
  }
  if (l->other != NULL && AL(l->progress) >= 2 && AXCHG(l->other_freed, 1) == 0) {
    lmcp_host_free(l->other);
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
  if (l->free_in_cb == 3 && AXCHG(l->freeing, 1) == 0) {
    free_from_callback(l);
  }
  const char *answer = "{\"roots\":[{\"uri\":\"file:///tmp\",\"name\":\"tmp\"}]}";
  char *err = NULL;
  lmcp_status st = lmcp_host_respond(l->h, id, LMCP_OK, answer, strlen(answer), &err);
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
  (void)lmcp_host_cancel(l->h, id); /* already completed: NOT_FOUND or INVALID_HANDLE */
  AADD(l->dones, 1);
  free(box);
  if (l->free_in_cb == 2 && AXCHG(l->freeing, 1) == 0) {
    free_from_callback(l);
  }
  cb_exit(l);
}

/* call_tool starts a host tool call name(args) with options; counts it. */
static lmcp_status call_tool(life_t *l, const char *name, const char *args, const char *opts) {
  call_box *box = malloc(sizeof(*box));
  box->l = l;
  lmcp_call_id id = 0;
  char *err = NULL;
  lmcp_status st = lmcp_host_call_tool(l->h, name, args, strlen(args), opts, opts ? strlen(opts) : 0, on_done,
                                       box, &id, &err);
  lmcp_free(err);
  if (st == LMCP_OK) {
    AADD(l->accepted, 1);
    AST(l->last_call, id);
  } else {
    free(box); /* done never runs */
  }
  return st;
}

/* call_server starts a request to one server through lmcp_host_call. */
static lmcp_status call_server(life_t *l, const char *server, const char *method, const char *params) {
  call_box *box = malloc(sizeof(*box));
  box->l = l;
  lmcp_call_id id = 0;
  char *err = NULL;
  lmcp_status st = lmcp_host_call(l->h, server, method, params, params ? strlen(params) : 0, NULL, 0, on_done,
                                  box, &id, &err);
  lmcp_free(err);
  if (st == LMCP_OK) {
    AADD(l->accepted, 1);
    AST(l->last_call, id);
  } else {
    free(box);
  }
  return st;
}

/* one_op runs operation i of the mix against the host. */
static lmcp_status one_op(life_t *l, int i) {
  char *err = NULL, *out = NULL;
  size_t n = 0;
  lmcp_status st;
  static const char echo[] = "{\"text\":\"x\"}";
  static const char echo_call[] = "{\"name\":\"echo\",\"arguments\":{\"text\":\"y\"}}";
  static const char sync_opts[] = "{\"timeout_ms\":3000}";
  switch (i % 14) {
  case 0: st = call_tool(l, "a__slow", "{\"ms\":60,\"steps\":12}", "{\"progress\":true}"); break;
  case 1: st = call_tool(l, "b__echo", "{\"text\":\"hi\"}", NULL); break;
  case 2:
    st = lmcp_host_call_tool_sync(l->h, "b__echo", echo, strlen(echo), sync_opts, strlen(sync_opts), &out, &n,
                                  &err);
    break;
  case 3: st = call_server(l, "a", "tools/call", echo_call); break;
  case 4:
    st = lmcp_host_call_sync(l->h, "b", "tools/call", echo_call, strlen(echo_call), sync_opts, strlen(sync_opts),
                             &out, &n, &err);
    break;
  case 5: st = lmcp_host_servers(l->h, &out, &n, &err); break;
  case 6: st = lmcp_host_list_tools(l->h, &out, &n, &err); break;
  case 7: st = lmcp_host_cancel(l->h, AL(l->last_call)); break;
  case 8: st = lmcp_host_respond(l->h, 999999, LMCP_OK, "{}", 2, &err); break;
  case 9: st = call_tool(l, "a__roots", "{}", NULL); break;
  case 10: st = call_tool(l, "b__stderr", "{\"bytes\":1500}", NULL); break;
  case 11: st = lmcp_host_wait_ready(l->h, 0, &err); break;
  case 12: st = lmcp_host_list_prompts(l->h, &out, &n, &err); break;
  default:
    st = lmcp_host_connect(l->h, &err); /* already connected: INVALID_STATE */
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

static char config[2048];

/* open_host creates, registers and connects a host of two fixture servers
 * ("a" legacy, "b" modern) for l. */
static int open_host(life_t *l) {
  const char *fx = fixture_path();
  snprintf(config, sizeof config,
           "{\"tool_prefix\":\"always\","
           "\"defaults\":{\"handlers\":{\"roots\":{\"list_changed\":true}},"
           "\"timeouts\":{\"ready_ms\":5000,\"close_grace_ms\":300}},"
           "\"mcpServers\":{\"a\":{\"command\":\"%s\"},"
           "\"b\":{\"command\":\"%s\",\"protocol\":{\"mode\":\"modern\"}}}}",
           fx, fx);
  char *err = NULL;
  lmcp_status st = lmcp_host_new(config, strlen(config), &l->h, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  if (st != LMCP_OK) {
    return 0;
  }
  CHECK_ST(lmcp_host_set_event_handler(l->h, on_event, l, on_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_set_host_request_handler(l->h, on_host_request, l, on_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_connect(l->h, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  st = lmcp_host_wait_ready(l->h, 10000 * h_time_scale, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  return st == LMCP_OK;
}

static int iterations = 40;

static void test_free_races_every_call(void) {
  long long events = 0, progress = 0, logs = 0, dones = 0, cancelled = 0, hostreqs = 0, late_calls = 0;
  int failures = 0;
  for (int it = 0; it < iterations && failures < 3; it++) {
    life_t *l = calloc(1, sizeof(*l));
    if (!open_host(l)) {
      lmcp_host_free(l->h);
      free(l);
      failures++;
      continue;
    }
    /* Progress events and logs flowing before the hammers start. */
    call_tool(l, "a__slow", "{\"ms\":400,\"steps\":100}", "{\"progress\":true}");
    call_tool(l, "b__stderr", "{\"bytes\":4000}", NULL);
    pthread_t th[HAMMERS];
    for (int i = 0; i < HAMMERS; i++) {
      pthread_create(&th[i], NULL, hammer, l);
    }
    sleep_ms(2 + (it * 7) % 40);

    lmcp_host_free(l->h);
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

/* free_in_callback runs one host whose callback `which` frees it. */
static void free_in_callback(int which) {
  life_t *l = calloc(1, sizeof(*l));
  l->free_in_cb = which;
  if (!open_host(l)) {
    lmcp_host_free(l->h);
    free(l);
    return;
  }
  /* A few slow calls stay pending while the callback frees. */
  for (int i = 0; i < 3; i++) {
    CHECK_ST(call_tool(l, "a__slow", "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}"), LMCP_OK, NULL);
  }
  if (which == 2) {
    CHECK_ST(call_tool(l, "b__echo", "{\"text\":\"x\"}", NULL), LMCP_OK, NULL);
  }
  if (which == 3) {
    CHECK_ST(call_tool(l, "a__roots", "{}", NULL), LMCP_OK, NULL);
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
  CHECK_ST(lmcp_host_cancel(l->h, 1), LMCP_E_INVALID_HANDLE, NULL);
  lmcp_host_free(l->h); /* again: harmless */
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

/* check_freed_by_other: host a was freed by another's callback. */
static void check_freed_by_other(life_t *a) {
  int64_t deadline = now_ms() + 10000 * h_time_scale;
  while (AL(a->destroys) < 2 && now_ms() < deadline) {
    sleep_ms(5);
  }
  CHECKM(AL(a->destroys) == 2, NULL, "a's destroys: %d", AL(a->destroys));
  CHECKM(AL(a->dones) == AL(a->accepted), NULL, "a: %d accepted, %d completed", AL(a->accepted),
         AL(a->dones));
  CHECKM(AL(a->running) == 0, NULL, "a: callbacks still running");
  CHECK_ST(lmcp_host_cancel(a->h, 1), LMCP_E_INVALID_HANDLE, NULL);
}

static void test_free_inside_other_hosts_callback(void) {
  life_t *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
  if (!open_host(a) || !open_host(b)) {
    lmcp_host_free(a->h);
    lmcp_host_free(b->h);
    free(a);
    free(b);
    return;
  }
  for (int i = 0; i < 3; i++) {
    call_tool(a, "a__slow", "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}");
  }
  b->other = a->h;
  while (AL(a->progress) < 1) {
    sleep_ms(2);
  }
  /* b's event callback frees a. */
  call_tool(b, "a__slow", "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}");
  int64_t deadline = now_ms() + 10000 * h_time_scale;
  while (!AL(b->other_freed) && now_ms() < deadline) {
    sleep_ms(5);
  }
  CHECKM(AL(b->other_freed), NULL, "b's callback freed a");
  check_freed_by_other(a);
  char *js = NULL;
  CHECK_ST(lmcp_host_servers(b->h, &js, NULL, NULL), LMCP_OK, NULL);
  lmcp_free(js);
  lmcp_host_free(b->h);
  CHECKM(AL(b->dones) == AL(b->accepted), NULL, "b: %d accepted, %d completed", AL(b->accepted),
         AL(b->dones));
  free(a);
  free(b);
}

/* A client's event callback frees a host. */
typedef struct {
  lmcp_host *victim;
  int progress, freed;
} client_freer;

static void client_event(void *ud, const char *kind, const char *json, size_t len) {
  client_freer *f = ud;
  (void)json;
  (void)len;
  if (strcmp(kind, "progress") == 0 && AADD(f->progress, 1) >= 2 && AXCHG(f->freed, 1) == 0) {
    lmcp_host_free(f->victim);
  }
}

static void client_done(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  (void)ud, (void)id, (void)st, (void)json, (void)len;
}

static void test_free_inside_clients_callback(void) {
  life_t *a = calloc(1, sizeof(*a));
  if (!open_host(a)) {
    lmcp_host_free(a->h);
    free(a);
    return;
  }
  for (int i = 0; i < 3; i++) {
    call_tool(a, "a__slow", "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}");
  }
  client_freer f = {a->h, 0, 0};
  char cfg[1024];
  fixture_config(cfg, sizeof cfg, NULL, NULL, NULL);
  lmcp_client *c = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_client_new(cfg, strlen(cfg), &c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_set_event_handler(c, client_event, &f, NULL, &err), LMCP_OK, err);
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, 10000 * h_time_scale, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  static const char slow[] = "{\"name\":\"slow\",\"arguments\":{\"ms\":3000,\"steps\":300}}";
  CHECK_ST(lmcp_client_call(c, "tools/call", slow, strlen(slow), "{\"progress\":true}", 17, client_done, NULL,
                            NULL, &err),
           LMCP_OK, err);
  lmcp_free(err);
  int64_t deadline = now_ms() + 10000 * h_time_scale;
  while (!AL(f.freed) && now_ms() < deadline) {
    sleep_ms(5);
  }
  CHECKM(AL(f.freed), NULL, "the client's callback freed the host");
  check_freed_by_other(a);
  lmcp_client_free(c);
  free(a);
}

/* The library's goroutines once the warm-up host is gone: the idle
 * baseline test_zz_nothing_left compares with. */
static long long idle_goroutines = -1;

/* settled_goroutines polls lmcp_diagnostics until the library's goroutines
 * are down to floor (or 5 s pass); a negative floor reads them once. */
static long long settled_goroutines(long long floor) {
  h_diag d = {0};
  long long g = -1;
  int64_t deadline = now_ms() + 5000 * h_time_scale;
  for (;;) {
    if (get_diag(&d)) {
      g = d.goroutines;
    }
    if (floor < 0 || (g >= 0 && g <= floor) || now_ms() >= deadline) {
      return g;
    }
    sleep_ms(20);
  }
}

/* A first host, created and freed, so that whatever the library starts once
 * per process (the stdio transport's child reaping, ...) is running before
 * the baseline is taken. */
static void test_aa_warm_up(void) {
  life_t *l = calloc(1, sizeof(*l));
  if (open_host(l)) {
    CHECK_ST(call_tool(l, "a__echo", "{\"text\":\"x\"}", NULL), LMCP_OK, NULL);
  }
  lmcp_host_free(l->h);
  CHECKM(AL(l->dones) == AL(l->accepted), NULL, "%d accepted, %d completed", AL(l->accepted), AL(l->dones));
  free(l);
  /* The servers' teardown ends in the background: wait until the count
   * stops falling. */
  long long prev = -1, g = settled_goroutines(-1);
  for (int i = 0; i < 50 && g != prev; i++) {
    prev = g;
    sleep_ms(100);
    g = settled_goroutines(-1);
  }
  idle_goroutines = g;
  CHECK(idle_goroutines > 0);
}

/* Every host and client is gone, no call is pending, and no goroutine of
 * theirs is left once the frees are done. */
static void test_zz_nothing_left(void) {
  h_diag d = {0};
  char *js = NULL;
  long long live_hosts = -1;
  int64_t deadline = now_ms() + 5000 * h_time_scale;
  do {
    CHECK(get_diag(&d));
    CHECK_ST(lmcp_diagnostics(&js, NULL), LMCP_OK, NULL);
    CHECKM(js != NULL && json_get_int(js, "live_hosts", &live_hosts), js, "diagnostics has live_hosts");
    lmcp_free(js);
    js = NULL;
    if (d.live_clients == 0 && d.pending_calls == 0 && live_hosts == 0) {
      break;
    }
    sleep_ms(20);
  } while (now_ms() < deadline);
  CHECKM(d.live_clients == 0 && d.pending_calls == 0 && live_hosts == 0, NULL,
         "live_clients=%lld pending_calls=%lld live_hosts=%lld", d.live_clients, d.pending_calls, live_hosts);
  long long g = settled_goroutines(idle_goroutines);
  CHECKM(idle_goroutines > 0 && g <= idle_goroutines, NULL,
         "goroutines: %lld idle after the first host, %lld after every host was freed", idle_goroutines, g);
}

int main(int argc, char **argv) {
  if (getenv("LMCP_TEST_TIME_SCALE") != NULL) {
    iterations = 8;
  }
  if (argc > 1) {
    iterations = atoi(argv[1]);
  }
  RUN_TEST(test_aa_warm_up, 30);
  RUN_TEST(test_free_races_every_call, 180);
  RUN_TEST(test_free_inside_own_event_callback, 20);
  RUN_TEST(test_free_inside_own_done_callback, 20);
  RUN_TEST(test_free_inside_own_host_request_callback, 20);
  RUN_TEST(test_free_inside_other_hosts_callback, 30);
  RUN_TEST(test_free_inside_clients_callback, 30);
  RUN_TEST(test_zz_nothing_left, 20);
  temp_dir_cleanup();
  return h_finish();
}
