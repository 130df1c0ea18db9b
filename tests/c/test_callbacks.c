/*
 * test_callbacks.c — callbacks: app requests and their expiry, every
 * callback and destroy exactly once, callbacks that call back into the
 * library, and server notifications delivered as events.
 * Registered in test_main.c; shared set-up in harness.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "harness.h"
#include "suite.h"

/* ---- app requests */

void test_app_requests_expire(void) {
  char cfg[2048], log[256], args[400];
  char *err = NULL, *res, *e;
  temp_path(log, sizeof log, "host.log");
  snprintf(args, sizeof args, "\"-log-file\",\"%s\"", log);

  /* Server-to-client requests over a session, and the initialize request's
   * capabilities: legacy-era behaviour, pinned (the default, "auto", speaks
   * 2026-07-28 to the dual-era fixture, where they become MRTR). */
#define LEGACY "\"protocol\":{\"mode\":\"legacy\"},"
  /* never answered: expires after app_request_ms */
  hostrec_t hr;
  hostrec_init(&hr, NULL);
  lmcp_client *c =
      new_client(fixture_config(cfg, sizeof cfg, args, NULL,
                                LEGACY "\"handlers\":{\"roots\":{}},\"timeouts\":{\"app_request_ms\":300}"),
                 NULL);
  if (c == NULL) return;
  hr.client = c;
  CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, &hr, hostrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  /* capabilities are advertised only for configured handlers */
  long long init_id = request_id_in_log(log, "\"initialize\"", NULL);
  char *text = read_file(log, NULL);
  char *line = text ? strstr(text, "\"initialize\"") : NULL;
  if (line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
  }
  CHECKE(init_id >= 0 && line && strstr(line, "\"roots\"") && !strstr(line, "\"sampling\"") &&
             !strstr(line, "\"elicitation\""),
         line);
  free(text);

  /* The call's own timeout, like the default app_request_ms, is 10 minutes:
   * only app_request_ms 300 can end the roots/list request, and so the call,
   * before the watchdog fails the test. */
  int64_t t0 = now_ms();
  CHECK_ST(tool_sync(c, "roots", NULL, "{\"timeout_ms\":600000}", &res, &e), LMCP_OK, e);
  int64_t dt = now_ms() - t0;
  CHECKE(res && strstr(res, "\"isError\":true") && strstr(res, "did not answer roots/list within 300 ms"),
         res);
  printf("  expired app request → %s (%lld ms)\n", res ? res : "(null)", (long long)dt);
  CHECKM(dt >= 250, res, "the request expired after %lld ms", (long long)dt);
  lmcp_free(res);
  lmcp_free(e);
  CHECK(hostrec_wait(&hr, 1, 0) == 1);
  CHECK(strcmp(hr.kinds[0], "roots") == 0);
  CHECKE(hr.payloads[0] && strstr(hr.payloads[0], "\"method\":\"roots/list\"") &&
             json_valid(hr.payloads[0], strlen(hr.payloads[0])),
         hr.payloads[0]);
  CHECK(hr.ids[0] != 0);
  const char *ans = "{\"roots\":[]}";
  CHECK_ST(lmcp_client_respond(c, hr.ids[0], LMCP_OK, ans, strlen(ans), &err), LMCP_E_NOT_FOUND, err);
  CHECK_ERR_JSON(err, LMCP_E_NOT_FOUND);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_respond(c, 987654, LMCP_OK, ans, strlen(ans), &err), LMCP_E_NOT_FOUND, err);
  lmcp_free(err);
  err = NULL;
  stop_client(c, NULL);
  CHECK(hr.destroys == 1);
  hostrec_free(&hr);

  /* answered inside the callback */
  const char *roots = "{\"roots\":[{\"uri\":\"file:///tmp\",\"name\":\"tmp\"}]}";
  hostrec_init(&hr, roots);
  c = new_client(
      fixture_config(cfg, sizeof cfg, NULL, NULL, LEGACY "\"handlers\":{\"roots\":{\"list_changed\":true}}"),
      NULL);
  if (c == NULL) return;
  hr.client = c;
  CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, &hr, hostrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(tool_sync(c, "roots", NULL, NULL, &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "file:///tmp") && !strstr(res, "\"isError\":true"), res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK(hostrec_wait(&hr, 1, 0) == 1);
  CHECK_ST(hr.respond_status[0], LMCP_OK, NULL);
  CHECK_ST(lmcp_client_respond(c, hr.ids[0], LMCP_OK, roots, strlen(roots), &err), LMCP_E_NOT_FOUND, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_notify(c, "notifications/roots/list_changed", NULL, 0, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  stop_client(c, NULL);
  CHECK(hr.destroys == 1);
  hostrec_free(&hr);

  /* answered later, from another thread, with an error */
  hostrec_init(&hr, NULL);
  c = new_client(fixture_config(cfg, sizeof cfg, NULL, NULL, LEGACY "\"handlers\":{\"roots\":{}}"), NULL);
  if (c == NULL) return;
  hr.client = c;
  CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, &hr, hostrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  donerec_t rec;
  donerec_init(&rec, 1);
  CHECK_ST(tool_async(c, "roots", NULL, NULL, &rec.slots[0], NULL), LMCP_OK, NULL);
  if (hostrec_wait(&hr, 1, T(3000)) == 1) {
    CHECK_ST(lmcp_client_respond(c, hr.ids[0], LMCP_OK, "[1]", 3, &err), LMCP_E_INVALID_ARGUMENT, err);
    lmcp_free(err);
    err = NULL;
    const char *deny = "{\"message\":\"host says no\"}";
    CHECK_ST(lmcp_client_respond(c, hr.ids[0], LMCP_E_POLICY_DENIED, deny, strlen(deny), &err), LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
  } else {
    CHECKM(0, NULL, "no roots app request arrived");
  }
  CHECK(donerec_wait_slot(&rec, 0, T(3000)) == 1);
  CHECK_ST(rec.slots[0].status, LMCP_OK, rec.slots[0].json);
  CHECKE(rec.slots[0].json && strstr(rec.slots[0].json, "\"isError\":true") &&
             strstr(rec.slots[0].json, "host says no"),
         rec.slots[0].json);
  stop_client(c, NULL);
  donerec_free(&rec);
  CHECK(hr.destroys == 1);
  hostrec_free(&hr);

  /* handlers configured but no app-request handler: connect refuses (any era) */
  c = new_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"handlers\":{\"roots\":{}}"), NULL);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;
  lmcp_client_free(c);
#undef LEGACY
}

/* ---- callbacks exactly once, destroy exactly once */

typedef struct {
  pthread_mutex_t mu;
  int in_cb, events, destroyed_in_cb, destroys;
} slowev_t;

static void slow_event(void *ud, const char *kind, const char *json, size_t len) {
  slowev_t *s = ud;
  (void)kind, (void)json, (void)len;
  pthread_mutex_lock(&s->mu);
  s->in_cb = 1;
  s->events++;
  int first = s->events == 1;
  pthread_mutex_unlock(&s->mu);
  if (first) sleep_ms(300);
  pthread_mutex_lock(&s->mu);
  s->in_cb = 0;
  pthread_mutex_unlock(&s->mu);
}

static void slow_destroy(void *ud) {
  slowev_t *s = ud;
  pthread_mutex_lock(&s->mu);
  if (s->in_cb) s->destroyed_in_cb++;
  s->destroys++;
  pthread_mutex_unlock(&s->mu);
}

void test_callbacks_exactly_once(void) {
  char cfg[2048];
  char *err = NULL;
  fixture_config(cfg, sizeof cfg, NULL, NULL, "\"handlers\":{\"roots\":{}}");

  /* replacing runs the old destroy once; free runs the current ones once */
  evrec_t a, b, nul, d;
  hostrec_t h1, h2;
  evrec_init(&a);
  evrec_init(&b);
  evrec_init(&nul);
  evrec_init(&d);
  hostrec_init(&h1, NULL);
  hostrec_init(&h2, NULL);
  lmcp_client *c = new_client(cfg, &a);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_set_event_handler(c, evrec_cb, &b, evrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK(a.destroys == 1 && b.destroys == 0);
  /* a NULL cb removes the handler; its destroy still runs once, later */
  CHECK_ST(lmcp_client_set_event_handler(c, NULL, &nul, evrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK(b.destroys == 1 && nul.destroys == 0);
  CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, &h1, hostrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, &h2, hostrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK(h1.destroys == 1 && h2.destroys == 0);
  CHECK_ST(lmcp_client_set_event_handler(c, evrec_cb, &d, evrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK(nul.destroys == 1); /* the NULL-cb registration was replaced */
  CHECK(d.destroys == 0);
  /* connect: the host handler can no longer change (its destroy runs at once) */
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_app_request_handler(c, never_host, NULL, count_destroy, &err),
           LMCP_E_INVALID_STATE, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_STATE);
  lmcp_free(err);
  err = NULL;
  CHECK(destroy_count == 1);
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK(evrec_wait(&d, "ready", NULL, 1, T(1000)) == 1);

  /* pending async calls at free complete with CANCELLED exactly once */
  donerec_t rec;
  donerec_init(&rec, 4);
  for (int i = 0; i < 4; i++)
    CHECK_ST(tool_async(c, "slow", "{\"ms\":3000}", NULL, &rec.slots[i], NULL), LMCP_OK, NULL);
  sleep_ms(50);
  lmcp_client_free(c);
  CHECK(donerec_wait_all(&rec, T(3000)) == 4);
  CHECK(evrec_wait_destroys(&d, 1, T(2000)) == 1);
  CHECK(hostrec_wait(&h2, 0, 0) == 0);
  for (int64_t end = now_ms() + T(2000); h2.destroys == 0 && now_ms() < end;) sleep_ms(10);
  sleep_ms(300);
  for (int i = 0; i < 4; i++) {
    CHECKM(rec.slots[i].count == 1, NULL, "pending call %d completed %d times", i, rec.slots[i].count);
    CHECK_ST(rec.slots[i].status, LMCP_E_CANCELLED, rec.slots[i].json);
    CHECK_ERR_JSON(rec.slots[i].json, LMCP_E_CANCELLED);
  }
  CHECK(a.destroys == 1 && b.destroys == 1 && nul.destroys == 1 && d.destroys == 1);
  CHECK(h1.destroys == 1 && h2.destroys == 1);
  CHECK(a.n == 0 && b.n == 0 && nul.n == 0);
  CHECKM(d.after_destroy == 0, NULL, "%d events after destroy", d.after_destroy);
  CHECK(d.max_inflight <= 1);
  donerec_free(&rec);
  evrec_free(&a);
  evrec_free(&b);
  evrec_free(&nul);
  evrec_free(&d);
  hostrec_free(&h1);
  hostrec_free(&h2);

  /* a failed registration on a freed handle still runs destroy once */
  evrec_t f;
  evrec_init(&f);
  CHECK_ST(lmcp_client_set_event_handler(c, evrec_cb, &f, evrec_destroy, NULL), LMCP_E_INVALID_HANDLE, NULL);
  CHECK(evrec_wait_destroys(&f, 1, 100) == 1);
  hostrec_t hf;
  hostrec_init(&hf, NULL);
  CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, &hf, hostrec_destroy, NULL),
           LMCP_E_INVALID_HANDLE, NULL);
  CHECK(hf.destroys == 1);
  sleep_ms(50);
  CHECK(f.destroys == 1 && hf.destroys == 1 && f.n == 0);
  evrec_free(&f);
  hostrec_free(&hf);

  /* destroy waits for a running callback: replace the handler while it runs */
  slowev_t s;
  memset(&s, 0, sizeof s);
  pthread_mutex_init(&s.mu, NULL);
  fixture_config(cfg, sizeof cfg, "\"-banner\",\"3\"", NULL, NULL);
  c = new_client(cfg, NULL);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_set_event_handler(c, slow_event, &s, slow_destroy, NULL), LMCP_OK, NULL);
  CHECK_ST(lmcp_client_connect(c, NULL), LMCP_OK, NULL);
  int in = 0;
  for (int64_t end = now_ms() + T(3000); !in && now_ms() < end; sleep_ms(5)) {
    pthread_mutex_lock(&s.mu);
    in = s.in_cb;
    pthread_mutex_unlock(&s.mu);
  }
  CHECKM(in, NULL, "no event arrived");
  CHECK_ST(lmcp_client_set_event_handler(c, NULL, NULL, NULL, NULL), LMCP_OK, NULL);
  for (int64_t end = now_ms() + T(2000); now_ms() < end; sleep_ms(10)) {
    pthread_mutex_lock(&s.mu);
    int dn = s.destroys;
    pthread_mutex_unlock(&s.mu);
    if (dn) break;
  }
  pthread_mutex_lock(&s.mu);
  int events_at_destroy = s.events;
  CHECKM(s.destroys == 1, NULL, "destroy ran %d times", s.destroys);
  CHECKM(s.destroyed_in_cb == 0, NULL, "destroy ran while a callback was running");
  pthread_mutex_unlock(&s.mu);
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), NULL), LMCP_OK, NULL);
  expect_echo(c, "after replace");
  stop_client(c, NULL);
  sleep_ms(50);
  pthread_mutex_lock(&s.mu);
  CHECKM(s.events == events_at_destroy, NULL, "%d events after destroy", s.events - events_at_destroy);
  CHECK(s.destroys == 1);
  pthread_mutex_unlock(&s.mu);
  pthread_mutex_destroy(&s.mu);
}

/* ---- callbacks may call the library; they run on library threads */

typedef struct {
  lmcp_client *c;
  doneslot_t *next; /* the call made from inside the callback */
  lmcp_status chained_st;
  lmcp_status sync_st;
  char *sync_res;
  lmcp_state state;
  pthread_t cb_thread;
} reent_t;

static donerec_t reent_rec;

static void reent_done(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  reent_t *r = ud;
  (void)id, (void)st, (void)json, (void)len;
  r->cb_thread = pthread_self();
  lmcp_client_state(r->c, &r->state);
  const char *p = "{\"name\":\"echo\",\"arguments\":{\"text\":\"chained\"}}";
  r->next->caller = pthread_self();
  h_in_call = 1;
  r->chained_st = lmcp_client_call(r->c, "tools/call", p, strlen(p), NULL, 0, done_cb, r->next, NULL, NULL);
  h_in_call = 0;
  const char *q = "{\"name\":\"echo\",\"arguments\":{\"text\":\"sync-in-callback\"}}";
  size_t n;
  r->sync_st = lmcp_client_call_sync(r->c, "tools/call", q, strlen(q), "{\"timeout_ms\":3000}", 19,
                                     &r->sync_res, &n, NULL);
  /* signal completion through the recorder's slot 0 */
  done_cb(&reent_rec.slots[0], 1, LMCP_OK, "{}", 2);
}

void test_callbacks_reenter_library(void) {
  char cfg[2048];
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), NULL);
  if (c == NULL) return;
  donerec_init(&reent_rec, 2);
  reent_t r = {c, &reent_rec.slots[1], -100, -100, NULL, -1, pthread_self()};
  pthread_t me = pthread_self();
  const char *p = "{\"name\":\"echo\",\"arguments\":{\"text\":\"first\"}}";
  CHECK_ST(lmcp_client_call(c, "tools/call", p, strlen(p), NULL, 0, reent_done, &r, NULL, NULL), LMCP_OK,
           NULL);
  CHECK(donerec_wait_slot(&reent_rec, 0, T(5000)) == 1);
  CHECK(donerec_wait_slot(&reent_rec, 1, T(3000)) == 1);
  CHECK(!pthread_equal(r.cb_thread, me));
  CHECK(r.state == LMCP_STATE_READY);
  CHECK_ST(r.chained_st, LMCP_OK, NULL);
  CHECK_ST(r.sync_st, LMCP_OK, NULL);
  CHECKE(r.sync_res && strstr(r.sync_res, "sync-in-callback"), r.sync_res);
  lmcp_free(r.sync_res);
  CHECKE(reent_rec.slots[1].json && strstr(reent_rec.slots[1].json, "chained"), reent_rec.slots[1].json);
  CHECK(!reent_rec.slots[1].on_caller_thread);
  /* cancel from a thread while completions run */
  stop_client(c, NULL);
  donerec_free(&reent_rec);
}

void test_notifications(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  /* logging/setLevel and notifications over a session: the legacy era */
  lmcp_client *c =
      start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"protocol\":{\"mode\":\"legacy\"}"), &ev);
  if (c == NULL) return;
  char *info = NULL, *res, *err;
  lmcp_client_server_info(c, &info, NULL, NULL);
  int logging = info && strstr(info, "\"logging\":");
  lmcp_free(info);
  if (logging) {
    CHECK_ST(call_sync(c, "logging/setLevel", "{\"level\":\"info\"}", NULL, &res, &err), LMCP_OK, err);
    lmcp_free(res);
    lmcp_free(err);
  }
  CHECK_ST(tool_sync(c, "notify", NULL, NULL, &res, &err), LMCP_OK, err);
  lmcp_free(res);
  lmcp_free(err);
  CHECK(evrec_wait(&ev, "notification", "\"method\":\"notifications/tools/list_changed\"", 1, T(2000)) >= 1);
  if (logging) CHECK(evrec_wait(&ev, "notification", "notify called", 1, T(2000)) >= 1);
  CHECK_ST(call_sync(c, "tools/list", NULL, "{\"all_pages\":true}", &res, &err), LMCP_OK, err);
  CHECKE(res && strstr(res, "\"dynamic_1\""), res);
  lmcp_free(res);
  lmcp_free(err);
  stop_client(c, &ev);
}
