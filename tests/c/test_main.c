/*
 * test_main.c — the C host tests: a host written in C links liblemonmcp.so,
 * drives the fixture MCP server (build/fixtures/mcpfixture) over stdio and
 * checks every promise of include/lemonmcp.h it can observe.
 *
 * Usage: lmcp_ctest [BASELINE_FILE] [TEST_NAME_SUBSTRING...]
 *   BASELINE_FILE — the idle goroutine count written by lmcp_smoke ("-" for none)
 *   names         — run only the tests whose name contains one of them
 * Environment: LMCP_FIXTURE (fixture path), LMCP_TEST_TIME_SCALE (multiplies
 * the deadlines that only bound waits, for slow runs such as valgrind).
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

static int g_scale = 1;              /* LMCP_TEST_TIME_SCALE */
static long long g_baseline = -1;    /* idle goroutines */
static long long g_smoke_baseline = -1; /* the same, measured by lmcp_smoke */
#define T(ms) ((ms) * g_scale)       /* a bounded wait, scaled */

/* --------------------------------------------------------------- helpers */

static void finish_recorder(evrec_t *rec);

static lmcp_client *new_client(const char *cfg, evrec_t *rec) {
  lmcp_client *c = NULL;
  char *err = NULL;
  lmcp_status st = lmcp_client_new(cfg, strlen(cfg), &c, &err);
  CHECK_ST(st, LMCP_OK, err);
  CHECK(err == NULL);
  lmcp_free(err);
  if (st != LMCP_OK) return NULL;
  if (rec != NULL) {
    err = NULL;
    st = lmcp_client_set_event_handler(c, evrec_cb, rec, evrec_destroy, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
  }
  return c;
}

/* new + event handler + connect + wait_ready */
static lmcp_client *start_client(const char *cfg, evrec_t *rec) {
  lmcp_client *c = new_client(cfg, rec);
  if (c == NULL) return NULL;
  char *err = NULL;
  lmcp_status st = lmcp_client_connect(c, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  if (st == LMCP_OK) {
    st = lmcp_client_wait_ready(c, T(5000), &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
  }
  if (st != LMCP_OK) {
    lmcp_client_free(c);
    if (rec != NULL) finish_recorder(rec); /* callers just return */
    return NULL;
  }
  return c;
}

/* Checks the recorder's invariants (one delivery at a time, valid payloads,
 * nothing after destroy, destroy exactly once) and releases it. Call after
 * the client was freed. */
static void finish_recorder(evrec_t *rec) {
  if (!rec->live) return; /* already finished (start_client failed) */
  int d = evrec_wait_destroys(rec, 1, T(2000));
  sleep_ms(20);
  pthread_mutex_lock(&rec->mu);
  d = rec->destroys;
  int maxin = rec->max_inflight, after = rec->after_destroy, bad = rec->bad_payloads;
  pthread_mutex_unlock(&rec->mu);
  CHECKM(d == 1, NULL, "event handler destroy ran %d times", d);
  CHECKM(maxin <= 1, NULL, "%d event callbacks of one client ran at once", maxin);
  CHECKM(after == 0, NULL, "%d events delivered after destroy", after);
  CHECKM(bad == 0, NULL, "%d event payloads invalid or not NUL-terminated", bad);
  evrec_free(rec);
}

/* close (must succeed) + free + recorder checks */
static void stop_client(lmcp_client *c, evrec_t *rec) {
  if (c != NULL) {
    char *err = NULL;
    lmcp_status st = lmcp_client_close(c, T(5000), &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
    lmcp_client_free(c);
  }
  if (rec != NULL) finish_recorder(rec);
}

static lmcp_status call_sync(lmcp_client *c, const char *method, const char *params,
                             const char *opts, char **result, char **err) {
  size_t rlen = 0;
  *result = NULL;
  *err = NULL;
  lmcp_status st = lmcp_client_call_sync(c, method, params, params ? strlen(params) : 0, opts,
                                         opts ? strlen(opts) : 0, result, &rlen, err);
  if (st == LMCP_OK) {
    CHECK(*result != NULL && rlen == strlen(*result));
    CHECKE(json_valid(*result, rlen), *result);
    CHECK(*err == NULL);
  } else {
    CHECK(*result == NULL);
    CHECK_ERR_JSON(*err, st);
  }
  return st;
}

static lmcp_status tool_sync(lmcp_client *c, const char *tool, const char *args, const char *opts,
                             char **result, char **err) {
  char params[1024];
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", tool, args ? args : "{}");
  return call_sync(c, "tools/call", params, opts, result, err);
}

static lmcp_status tool_async(lmcp_client *c, const char *tool, const char *args, const char *opts,
                              doneslot_t *slot, lmcp_call_id *id_out) {
  char params[1024];
  char *err = NULL;
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", tool, args ? args : "{}");
  slot->caller = pthread_self();
  h_in_call = 1;
  lmcp_status st = lmcp_client_call(c, "tools/call", params, strlen(params), opts,
                                    opts ? strlen(opts) : 0, done_cb, slot, id_out, &err);
  h_in_call = 0;
  if (st != LMCP_OK) {
    CHECK_ERR_JSON(err, st);
  } else {
    CHECK(err == NULL);
    CHECK(id_out == NULL || *id_out != 0);
  }
  lmcp_free(err);
  return st;
}

static lmcp_state state_of(lmcp_client *c) {
  lmcp_state s = -1;
  CHECK_ST(lmcp_client_state(c, &s), LMCP_OK, NULL);
  return s;
}

/* Expects a successful echo of text. */
static void expect_echo(lmcp_client *c, const char *text) {
  char *res, *err;
  char args[256], want[300];
  snprintf(args, sizeof args, "{\"text\":\"%s\"}", text);
  snprintf(want, sizeof want, "\"text\":\"%s\"", text);
  lmcp_status st = tool_sync(c, "echo", args, NULL, &res, &err);
  CHECK_ST(st, LMCP_OK, err);
  CHECKE(res != NULL && strstr(res, want) != NULL, res);
  lmcp_free(res);
  lmcp_free(err);
}

/* Reads the integer text of a tool result ({"content":[{"type":"text","text":"123"}]}). */
static long long tool_int(lmcp_client *c, const char *tool) {
  char *res, *err;
  long long v = -1;
  char text[64];
  lmcp_status st = tool_sync(c, tool, NULL, NULL, &res, &err);
  CHECK_ST(st, LMCP_OK, err);
  if (st == LMCP_OK && json_get_str(res, "text", text, sizeof text)) v = atoll(text);
  CHECKE(v > 0, res);
  lmcp_free(res);
  lmcp_free(err);
  return v;
}

/* The JSON-RPC id of the first line of the log file containing both needles. */
static long long request_id_in_log(const char *log, const char *n1, const char *n2) {
  char *text = read_file(log, NULL);
  long long id = -1;
  if (text == NULL) return -1;
  for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (strstr(line, n1) && (n2 == NULL || strstr(line, n2)) && json_get_int(line, "id", &id)) break;
    id = -1;
  }
  free(text);
  return id;
}

/* Waits until the log file has a notifications/cancelled line for request id. */
static int wait_cancelled_in_log(const char *log, long long id, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  for (;;) {
    char *text = read_file(log, NULL);
    int found = 0;
    if (text != NULL) {
      for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        long long rid;
        if (strstr(line, "\"notifications/cancelled\"") && json_get_int(line, "requestId", &rid) &&
            rid == id) {
          found = 1;
          break;
        }
      }
      free(text);
    }
    if (found) return 1;
    if (now_ms() > end) return 0;
    sleep_ms(20);
  }
}

/* Waits until the log file contains needle. */
static int wait_in_file(const char *path, const char *needle, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  for (;;) {
    char *text = read_file(path, NULL);
    int found = text != NULL && strstr(text, needle) != NULL;
    free(text);
    if (found) return 1;
    if (now_ms() > end) return 0;
    sleep_ms(20);
  }
}

/* ------------------------------------------------------------------ tests */

static const char *const k_tools[] = {"echo", "add", "slow", "large", "fail", "roots", "sample",
                                      "elicit", "crash", "huge_line", "stderr", "grandchild",
                                      "notify", "pid", "touch"};

static void test_happy_path(void) {
  char cfg[2048];
  evrec_t rec;
  evrec_init(&rec);
  fixture_config(cfg, sizeof cfg, "\"-page-size\",\"5\"", NULL, NULL);
  lmcp_client *c = new_client(cfg, &rec);
  if (c == NULL) {
    evrec_free(&rec);
    return;
  }
  CHECK(state_of(c) == LMCP_STATE_NEW);
  char *err = NULL;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  CHECK(state_of(c) == LMCP_STATE_READY);
  CHECK(evrec_wait(&rec, "ready", "\"server\"", 1, T(2000)) == 1);
  char *ready = evrec_first(&rec, "ready", NULL);
  CHECKE(ready != NULL && strstr(ready, "lemon-fixture") != NULL, ready);
  free(ready);

  /* server_info */
  char *info = NULL;
  size_t ilen = 0;
  err = NULL;
  CHECK_ST(lmcp_client_server_info(c, &info, &ilen, &err), LMCP_OK, err);
  lmcp_free(err);
  CHECKE(info != NULL && json_valid(info, ilen) && ilen == strlen(info), info);
  CHECKE(strstr(info, "\"transport\":\"stdio\"") != NULL, info);
  CHECKE(strstr(info, "\"serverInfo\":{") != NULL && strstr(info, "\"name\":\"lemon-fixture\""), info);
  CHECKE(strstr(info, "\"protocolVersion\":\"") != NULL && strstr(info, "\"capabilities\":{"), info);
  lmcp_free(info);

  char *res, *e;
  /* tools/list: one page without all_pages, every tool with it */
  CHECK_ST(call_sync(c, "tools/list", NULL, NULL, &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "\"nextCursor\""), res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(call_sync(c, "tools/list", NULL, "{\"all_pages\":true}", &res, &e), LMCP_OK, e);
  for (size_t i = 0; res && i < sizeof k_tools / sizeof k_tools[0]; i++) {
    char want[64];
    snprintf(want, sizeof want, "\"name\":\"%s\"", k_tools[i]);
    CHECKM(strstr(res, want) != NULL, NULL, "tools/list all_pages lacks %s", k_tools[i]);
  }
  CHECKE(res && strstr(res, "\"nextCursor\"") == NULL, res);
  lmcp_free(res);
  lmcp_free(e);

  /* tools/call echo and add */
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"hello lemon\"}", NULL, &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "\"text\":\"hello lemon\"") && strstr(res, "\"structuredContent\""), res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(tool_sync(c, "add", "{\"a\":40,\"b\":2}", NULL, &res, &e), LMCP_OK, e);
  long long sum = 0;
  CHECKE(res && strstr(res, "\"text\":\"42\"") && json_get_int(res, "sum", &sum) && sum == 42, res);
  lmcp_free(res);
  lmcp_free(e);

  /* resources */
  CHECK_ST(call_sync(c, "resources/list", NULL, "{\"all_pages\":true}", &res, &e), LMCP_OK, e);
  for (int i = 1; res && i <= 25; i++) {
    char want[64];
    snprintf(want, sizeof want, "\"fixture://item/%02d\"", i);
    CHECKM(count_substr(res, want) == 1, NULL, "resources/list: %s appears %d times", want,
           count_substr(res, want));
  }
  CHECKE(res && strstr(res, "\"fixture://blob\""), res);
  CHECKE(res && strstr(res, "\"nextCursor\"") == NULL, res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(call_sync(c, "resources/read", "{\"uri\":\"fixture://item/03\"}", NULL, &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "\"contents\":[") && strstr(res, "fixture://item/03"), res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(call_sync(c, "resources/templates/list", NULL, "{\"all_pages\":true}", &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "fixture://items/{id}"), res);
  lmcp_free(res);
  lmcp_free(e);

  /* prompts */
  CHECK_ST(call_sync(c, "prompts/list", NULL, "{\"all_pages\":true}", &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "\"name\":\"greet\"") && strstr(res, "\"name\":\"plain\""), res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(call_sync(c, "prompts/get", "{\"name\":\"greet\",\"arguments\":{\"name\":\"Lemon\"}}", NULL,
                     &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "\"messages\":[") && strstr(res, "Lemon"), res);
  lmcp_free(res);
  lmcp_free(e);

  /* close: a "closed" event with requested true, before free */
  err = NULL;
  CHECK_ST(lmcp_client_close(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  CHECK(state_of(c) == LMCP_STATE_CLOSED);
  CHECK(evrec_wait(&rec, "closed", "\"requested\":true", 1, T(2000)) == 1);
  char *closed = evrec_first(&rec, "closed", NULL);
  long long cst = 1;
  CHECKE(closed && json_get_int(closed, "status", &cst) && strstr(closed, "\"reason\":\""), closed);
  free(closed);
  CHECK(evrec_index(&rec, "ready", NULL) < evrec_index(&rec, "closed", NULL));
  CHECK(evrec_count(&rec, "closed", NULL) == 1);
  CHECK(evrec_count(&rec, "failed", NULL) == 0);
  /* close is idempotent */
  err = NULL;
  CHECK_ST(lmcp_client_close(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  sleep_ms(50);
  CHECK(evrec_count(&rec, "closed", NULL) == 1);
  CHECK(rec.destroys == 0);
  lmcp_client_free(c);
  finish_recorder(&rec);
}

/* ---- 64 concurrent calls from 8 threads */

typedef struct {
  lmcp_client *c;
  donerec_t *rec;
  int t;
  lmcp_status st[8];
} conc_arg;

static void *conc_thread(void *p) {
  conc_arg *a = p;
  for (int i = 0; i < 8; i++) {
    doneslot_t *s = &a->rec->slots[a->t * 8 + i];
    char args[128];
    snprintf(args, sizeof args, "{\"text\":\"thread-%d-call-%d\"}", a->t, i);
    a->st[i] = tool_async(a->c, "echo", args, NULL, s, &s->issued_call_id);
  }
  return NULL;
}

/* The 2026-07-28 era: protocol.mode "auto" probes with server/discover and
 * the fixture (go-sdk, dual-era) answers it, so no initialize happens; calls
 * work as before and a removed method is refused locally. */
static void test_modern_era_happy_path(void) {
  char cfg[2048];
  fixture_config(cfg, sizeof cfg, NULL, NULL, "\"protocol\":{\"mode\":\"auto\"}");
  lmcp_client *c = start_client(cfg, NULL);
  if (c == NULL) return;
  char *info = NULL, *err = NULL;
  size_t ilen = 0;
  CHECK_ST(lmcp_client_server_info(c, &info, &ilen, &err), LMCP_OK, err);
  lmcp_free(err);
  CHECKE(info && strstr(info, "\"era\":\"modern\"") && strstr(info, "\"protocolVersion\":\"2026-07-28\""), info);
  CHECKE(info && strstr(info, "\"name\":\"lemon-fixture\""), info);
  lmcp_free(info);

  char *res, *e;
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"modern lemon\"}", NULL, &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "\"text\":\"modern lemon\""), res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(call_sync(c, "tools/list", NULL, "{\"all_pages\":true}", &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "\"name\":\"echo\"") && strstr(res, "\"nextCursor\"") == NULL, res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(call_sync(c, "ping", NULL, NULL, &res, &e), LMCP_E_UNSUPPORTED, e);
  CHECKE(e && strstr(e, "2026-07-28"), e);
  lmcp_free(res);
  lmcp_free(e);
  stop_client(c, NULL);
}

static void test_concurrent_calls(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), &ev);
  if (c == NULL) return;
  donerec_t rec;
  donerec_init(&rec, 64);
  pthread_t th[8];
  conc_arg args[8];
  for (int t = 0; t < 8; t++) {
    args[t] = (conc_arg){c, &rec, t, {0}};
    pthread_create(&th[t], NULL, conc_thread, &args[t]);
  }
  for (int t = 0; t < 8; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < 8; t++)
    for (int i = 0; i < 8; i++) CHECK_ST(args[t].st[i], LMCP_OK, NULL);
  CHECK(donerec_wait_all(&rec, T(10000)) == 64);
  sleep_ms(100); /* a duplicate completion would show now */
  pthread_mutex_lock(&rec.mu);
  for (int t = 0; t < 8; t++) {
    for (int i = 0; i < 8; i++) {
      doneslot_t *s = &rec.slots[t * 8 + i];
      char want[64];
      snprintf(want, sizeof want, "\"text\":\"thread-%d-call-%d\"", t, i);
      CHECKM(s->count == 1, NULL, "call %d/%d completed %d times", t, i, s->count);
      CHECK_ST(s->status, LMCP_OK, s->json);
      CHECKE(s->json && strstr(s->json, want), s->json);
      CHECK(!s->bad_payload);
      CHECKM(s->cb_call_id == s->issued_call_id, NULL, "callback id %llu, issued %llu",
             (unsigned long long)s->cb_call_id, (unsigned long long)s->issued_call_id);
      CHECKM(!s->on_caller_thread, NULL, "done ran on the caller's thread inside lmcp_client_call");
      for (int j = 0; j < t * 8 + i; j++)
        CHECKM(rec.slots[j].issued_call_id != s->issued_call_id, NULL, "call id %llu reused",
               (unsigned long long)s->issued_call_id);
    }
  }
  CHECKM(rec.total == 64, NULL, "%d completions for 64 calls", rec.total);
  CHECKM(rec.max_inflight <= 1, NULL, "%d completions of one client ran at once", rec.max_inflight);
  pthread_mutex_unlock(&rec.mu);
  stop_client(c, &ev);
  donerec_free(&rec);
}

static void test_call_before_ready(void) {
  char cfg[2048];
  char *err = NULL;
  donerec_t rec;
  donerec_init(&rec, 4);

  /* NEW: calls, server_info, notify and wait_ready refuse */
  lmcp_client *c = new_client(fixture_config(cfg, sizeof cfg, "\"-no-init\"", NULL, NULL), NULL);
  if (c == NULL) goto out;
  CHECK_ST(tool_async(c, "echo", "{\"text\":\"x\"}", NULL, &rec.slots[0], NULL), LMCP_E_INVALID_STATE, NULL);
  char *info = (char *)1;
  CHECK_ST(lmcp_client_server_info(c, &info, NULL, &err), LMCP_E_INVALID_STATE, err);
  CHECK(info == NULL);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_STATE);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_notify(c, "notifications/roots/list_changed", NULL, 0, &err), LMCP_E_INVALID_STATE, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, 100, &err), LMCP_E_INVALID_STATE, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_STATE);
  lmcp_free(err);
  err = NULL;

  /* CONNECTING (the server never answers initialize) */
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK(state_of(c) == LMCP_STATE_CONNECTING);
  CHECK_ST(tool_async(c, "echo", "{\"text\":\"x\"}", NULL, &rec.slots[1], NULL), LMCP_E_INVALID_STATE, NULL);
  char *res, *e;
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"x\"}", NULL, &res, &e), LMCP_E_INVALID_STATE, e);
  lmcp_free(res);
  lmcp_free(e);
  /* a second connect is refused */
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_E_INVALID_STATE, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_STATE);
  lmcp_free(err);
  err = NULL;
  sleep_ms(300);
  CHECK(donerec_count(&rec, 0) == 0 && donerec_count(&rec, 1) == 0);
  lmcp_client_free(c);
  sleep_ms(100);
  CHECK(donerec_count(&rec, 0) == 0 && donerec_count(&rec, 1) == 0);

  /* wait_ready:true queues the call (before connect and while connecting) */
  c = new_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), NULL);
  if (c == NULL) goto out;
  lmcp_call_id id2 = 0, id3 = 0;
  CHECK_ST(tool_async(c, "echo", "{\"text\":\"queued-before-connect\"}", "{\"wait_ready\":true}",
                      &rec.slots[2], &id2), LMCP_OK, NULL);
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(tool_async(c, "echo", "{\"text\":\"queued-connecting\"}", "{\"wait_ready\":true}",
                      &rec.slots[3], &id3), LMCP_OK, NULL);
  CHECK(id2 != 0 && id3 != 0 && id2 != id3);
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"sync-queued\"}", "{\"wait_ready\":true}", &res, &e), LMCP_OK, e);
  CHECKE(res && strstr(res, "sync-queued"), res);
  lmcp_free(res);
  lmcp_free(e);
  CHECK(donerec_wait_slot(&rec, 2, T(3000)) == 1);
  CHECK(donerec_wait_slot(&rec, 3, T(3000)) == 1);
  CHECK_ST(rec.slots[2].status, LMCP_OK, rec.slots[2].json);
  CHECK_ST(rec.slots[3].status, LMCP_OK, rec.slots[3].json);
  CHECKE(rec.slots[2].json && strstr(rec.slots[2].json, "queued-before-connect"), rec.slots[2].json);
  CHECKE(rec.slots[3].json && strstr(rec.slots[3].json, "queued-connecting"), rec.slots[3].json);
  stop_client(c, NULL);
  sleep_ms(50);
  CHECK(donerec_count(&rec, 2) == 1 && donerec_count(&rec, 3) == 1);
out:
  donerec_free(&rec);
}

static void test_wait_ready_timeout(void) {
  char cfg[2048];
  char *err = NULL;
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = new_client(fixture_config(cfg, sizeof cfg, "\"-no-init\"", NULL, NULL), &ev);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  int64_t t0 = now_ms();
  CHECK_ST(lmcp_client_wait_ready(c, 200, &err), LMCP_E_TIMEOUT, err);
  int64_t dt = now_ms() - t0;
  CHECK_ERR_JSON(err, LMCP_E_TIMEOUT);
  lmcp_free(err);
  err = NULL;
  CHECKM(dt >= 180 && dt < T(1500), NULL, "wait_ready(200) took %lld ms", (long long)dt);
  CHECK(state_of(c) == LMCP_STATE_CONNECTING); /* the handshake goes on */
  CHECK(evrec_count(&ev, "failed", NULL) == 0);
  /* wait_ready(0) polls */
  CHECK_ST(lmcp_client_wait_ready(c, 0, &err), LMCP_E_TIMEOUT, err);
  lmcp_free(err);
  err = NULL;
  /* close while connecting */
  t0 = now_ms();
  CHECK_ST(lmcp_client_close(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK(state_of(c) == LMCP_STATE_CLOSED);
  CHECK_ST(lmcp_client_wait_ready(c, 100, &err), LMCP_E_INVALID_STATE, err);
  lmcp_free(err);
  err = NULL;
  CHECK(evrec_wait(&ev, "closed", "\"requested\":true", 1, T(2000)) == 1);
  lmcp_client_free(c);
  finish_recorder(&ev);

  /* timeouts.ready_ms: the handshake itself gives up, FAILED with TIMEOUT */
  evrec_init(&ev);
  donerec_t rec;
  donerec_init(&rec, 1);
  c = new_client(fixture_config(cfg, sizeof cfg, "\"-no-init\"", NULL, "\"timeouts\":{\"ready_ms\":300}"), &ev);
  if (c == NULL) {
    donerec_free(&rec);
    return;
  }
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(tool_async(c, "echo", "{\"text\":\"q\"}", "{\"wait_ready\":true}", &rec.slots[0], NULL), LMCP_OK, NULL);
  t0 = now_ms();
  CHECK_ST(lmcp_client_wait_ready(c, T(3000), &err), LMCP_E_TIMEOUT, err);
  dt = now_ms() - t0;
  CHECK_ERR_JSON(err, LMCP_E_TIMEOUT);
  lmcp_free(err);
  err = NULL;
  CHECKM(dt < T(2000), NULL, "ready_ms 300 but wait_ready returned after %lld ms", (long long)dt);
  CHECK(state_of(c) == LMCP_STATE_FAILED);
  CHECK(evrec_wait(&ev, "failed", "\"status\":-5", 1, T(2000)) == 1);
  /* the queued call fails (exactly once) with the handshake's failure */
  CHECK(donerec_wait_slot(&rec, 0, T(2000)) == 1);
  CHECK(rec.slots[0].status != LMCP_OK);
  /* FAILED is sticky: wait_ready reports the failure again */
  CHECK_ST(lmcp_client_wait_ready(c, 100, &err), LMCP_E_TIMEOUT, err);
  lmcp_free(err);
  err = NULL;
  stop_client(c, &ev);
  CHECK(donerec_count(&rec, 0) == 1);
  donerec_free(&rec);
}

static void test_initialize_error(void) {
  char cfg[2048];
  char *err = NULL;
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = new_client(fixture_config(cfg, sizeof cfg, "\"-init-error\"", NULL, NULL), &ev);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_E_PROTOCOL, err);
  CHECK_ERR_JSON(err, LMCP_E_PROTOCOL);
  long long code = 0;
  CHECKE(json_get_int(err, "code", &code) && code == -32603, err);
  lmcp_free(err);
  err = NULL;
  CHECK(state_of(c) == LMCP_STATE_FAILED);
  CHECK(evrec_wait(&ev, "failed", "-32603", 1, T(2000)) == 1);
  char *f = evrec_first(&ev, "failed", NULL);
  CHECKE(f && strstr(f, "\"status\":-9"), f);
  free(f);
  CHECK(evrec_count(&ev, "ready", NULL) == 0);
  char *res, *e;
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"x\"}", NULL, &res, &e), LMCP_E_INVALID_STATE, e);
  lmcp_free(res);
  lmcp_free(e);
  CHECK_ST(lmcp_client_wait_ready(c, 100, &err), LMCP_E_PROTOCOL, err);
  lmcp_free(err);
  err = NULL;
  stop_client(c, &ev);

  /* an unsupported protocol version */
  evrec_init(&ev);
  c = new_client(fixture_config(cfg, sizeof cfg, "\"-protocol\",\"1999-01-01\"", NULL, NULL), &ev);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_E_UNSUPPORTED, err);
  CHECK_ERR_JSON(err, LMCP_E_UNSUPPORTED);
  CHECKE(err && strstr(err, "1999-01-01"), err);
  lmcp_free(err);
  err = NULL;
  CHECK(state_of(c) == LMCP_STATE_FAILED);
  CHECK(evrec_wait(&ev, "failed", "1999-01-01", 1, T(2000)) == 1);
  stop_client(c, &ev);

  /* an older supported version is accepted */
  evrec_init(&ev);
  c = start_client(fixture_config(cfg, sizeof cfg, "\"-protocol\",\"2024-11-05\"", NULL, NULL), &ev);
  if (c == NULL) return;
  char *info = NULL;
  CHECK_ST(lmcp_client_server_info(c, &info, NULL, &err), LMCP_OK, err);
  CHECKE(info && strstr(info, "\"protocolVersion\":\"2024-11-05\""), info);
  lmcp_free(info);
  lmcp_free(err);
  expect_echo(c, "old protocol");
  stop_client(c, &ev);
}

static void test_call_timeout_sends_cancelled(void) {
  char cfg[2048], log[256], args[400];
  temp_path(log, sizeof log, "timeout.log");
  snprintf(args, sizeof args, "\"-log-file\",\"%s\"", log);
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, args, NULL, NULL), &ev);
  if (c == NULL) return;
  char *res, *err;
  int64_t t0 = now_ms();
  CHECK_ST(tool_sync(c, "slow", "{\"ms\":5000}", "{\"timeout_ms\":200}", &res, &err), LMCP_E_TIMEOUT, err);
  int64_t dt = now_ms() - t0;
  CHECKM(dt >= 180 && dt < T(2000), err, "timeout_ms 200 returned after %lld ms", (long long)dt);
  lmcp_free(res);
  lmcp_free(err);
  long long id = request_id_in_log(log, "\"tools/call\"", "\"slow\"");
  CHECKM(id >= 0, NULL, "no tools/call slow request in %s", log);
  CHECKM(wait_cancelled_in_log(log, id, T(2000)), NULL, "no notifications/cancelled for request %lld", id);
  char line[64];
  snprintf(line, sizeof line, "cancelled %lld\n", id);
  CHECKM(wait_in_file(log, line, T(2000)), NULL, "the fixture did not see the cancellation of %lld", id);
  /* the client stays usable, and the late "context canceled" reply is ignored */
  CHECK(state_of(c) == LMCP_STATE_READY);
  expect_echo(c, "after timeout");
  sleep_ms(100);
  expect_echo(c, "after late reply");
  /* the client default timeouts.call_ms applies as well */
  stop_client(c, &ev);

  evrec_init(&ev);
  c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"timeouts\":{\"call_ms\":150}"), &ev);
  if (c == NULL) return;
  CHECK_ST(tool_sync(c, "slow", "{\"ms\":3000}", NULL, &res, &err), LMCP_E_TIMEOUT, err);
  lmcp_free(res);
  lmcp_free(err);
  /* a per-call timeout_ms overrides it */
  CHECK_ST(tool_sync(c, "slow", "{\"ms\":300}", "{\"timeout_ms\":3000}", &res, &err), LMCP_OK, err);
  lmcp_free(res);
  lmcp_free(err);
  stop_client(c, &ev);
}

static void test_cancel(void) {
  char cfg[2048], log[256], args[400];
  temp_path(log, sizeof log, "cancel.log");
  snprintf(args, sizeof args, "\"-log-file\",\"%s\"", log);
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, args, NULL, NULL), &ev);
  if (c == NULL) return;
  donerec_t rec;
  donerec_init(&rec, 1);
  lmcp_call_id id = 0;
  CHECK_ST(tool_async(c, "slow", "{\"ms\":5000}", NULL, &rec.slots[0], &id), LMCP_OK, NULL);
  sleep_ms(150);
  CHECK(donerec_count(&rec, 0) == 0);
  int64_t t0 = now_ms();
  CHECK_ST(lmcp_client_cancel(c, id), LMCP_OK, NULL);
  CHECK(donerec_wait_slot(&rec, 0, T(1000)) == 1);
  CHECKM(now_ms() - t0 < T(1000), NULL, "cancel took %lld ms", (long long)(now_ms() - t0));
  CHECK_ST(rec.slots[0].status, LMCP_E_CANCELLED, rec.slots[0].json);
  CHECK_ERR_JSON(rec.slots[0].json, LMCP_E_CANCELLED);
  CHECK(rec.slots[0].cb_call_id == id);
  CHECK_ST(lmcp_client_cancel(c, id), LMCP_E_NOT_FOUND, NULL);
  CHECK_ST(lmcp_client_cancel(c, id + 1000000), LMCP_E_NOT_FOUND, NULL);
  CHECK_ST(lmcp_client_cancel(c, 0), LMCP_E_NOT_FOUND, NULL);
  long long rid = request_id_in_log(log, "\"tools/call\"", "\"slow\"");
  CHECKM(rid >= 0, NULL, "no tools/call slow request in %s", log);
  CHECKM(wait_cancelled_in_log(log, rid, T(2000)), NULL, "no notifications/cancelled for request %lld", rid);
  sleep_ms(200); /* the server's late reply must not complete the call again */
  CHECKM(donerec_count(&rec, 0) == 1, NULL, "done ran %d times", donerec_count(&rec, 0));
  expect_echo(c, "after cancel");
  stop_client(c, &ev);
  donerec_free(&rec);
}

static void test_progress(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), &ev);
  if (c == NULL) return;
  donerec_t rec;
  donerec_init(&rec, 2);
  lmcp_call_id id = 0, id2 = 0;
  CHECK_ST(tool_async(c, "slow", "{\"ms\":300,\"steps\":3}", "{\"progress\":true}", &rec.slots[0], &id), LMCP_OK, NULL);
  CHECK(donerec_wait_slot(&rec, 0, T(3000)) == 1);
  CHECK_ST(rec.slots[0].status, LMCP_OK, rec.slots[0].json);
  char needle[64];
  snprintf(needle, sizeof needle, "\"call_id\":%llu", (unsigned long long)id);
  CHECK(evrec_wait(&ev, "progress", needle, 3, T(1000)) >= 3);
  sleep_ms(100);
  int n = evrec_count(&ev, "progress", needle);
  CHECKM(n == 3, NULL, "%d progress events for call %llu", n, (unsigned long long)id);
  CHECK(evrec_count(&ev, "progress", "\"progress\":3") == 1);
  CHECK(evrec_count(&ev, "progress", "\"total\":3") == 3);
  CHECK(evrec_count(&ev, "progress", "\"message\":\"step 2\"") == 1);
  /* without "progress" there are none */
  CHECK_ST(tool_async(c, "slow", "{\"ms\":100,\"steps\":2}", NULL, &rec.slots[1], &id2), LMCP_OK, NULL);
  CHECK(donerec_wait_slot(&rec, 1, T(3000)) == 1);
  snprintf(needle, sizeof needle, "\"call_id\":%llu", (unsigned long long)id2);
  sleep_ms(50);
  CHECK(evrec_count(&ev, "progress", needle) == 0);
  CHECK(evrec_count(&ev, "notification", "notifications/progress") == 0);
  stop_client(c, &ev);
  donerec_free(&rec);
}

static void test_reset_timeout_on_progress(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), &ev);
  if (c == NULL) return;
  char *res, *err;
  CHECK_ST(tool_sync(c, "slow", "{\"ms\":1500,\"steps\":10}",
                     "{\"timeout_ms\":400,\"reset_timeout_on_progress\":true}", &res, &err), LMCP_OK, err);
  CHECKE(res && strstr(res, "\"text\":\"done\""), res);
  lmcp_free(res);
  lmcp_free(err);
  CHECK_ST(tool_sync(c, "slow", "{\"ms\":1500,\"steps\":10}", "{\"timeout_ms\":400}", &res, &err),
           LMCP_E_TIMEOUT, err);
  lmcp_free(res);
  lmcp_free(err);
  /* max_total_ms bounds a call that keeps reporting progress */
  int64_t t0 = now_ms();
  CHECK_ST(tool_sync(c, "slow", "{\"ms\":3000,\"steps\":30}",
                     "{\"timeout_ms\":400,\"reset_timeout_on_progress\":true,\"max_total_ms\":700}", &res, &err),
           LMCP_E_TIMEOUT, err);
  int64_t dt = now_ms() - t0;
  CHECKM(dt >= 600 && dt < T(2000), err, "max_total_ms 700 returned after %lld ms", (long long)dt);
  lmcp_free(res);
  lmcp_free(err);
  stop_client(c, &ev);
}

static void test_server_crash_mid_call(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  /* banner and stderr text must never reach error messages */
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, "\"-banner\",\"2\",\"-stderr-flood\",\"1000\"", NULL, NULL), &ev);
  if (c == NULL) return;
  donerec_t rec;
  donerec_init(&rec, 2);
  CHECK_ST(tool_async(c, "slow", "{\"ms\":5000}", NULL, &rec.slots[1], NULL), LMCP_OK, NULL);
  int64_t t0 = now_ms();
  CHECK_ST(tool_async(c, "crash", "{}", NULL, &rec.slots[0], NULL), LMCP_OK, NULL);
  CHECK(donerec_wait_all(&rec, T(3000)) == 2);
  int64_t dt = now_ms() - t0;
  CHECKM(dt < T(2000), NULL, "the crash was noticed after %lld ms", (long long)dt);
  for (int i = 0; i < 2; i++) {
    const char *j = rec.slots[i].json;
    CHECK_ST(rec.slots[i].status, LMCP_E_CLOSED, j);
    CHECK_ERR_JSON(j, LMCP_E_CLOSED);
    char msg[512] = "";
    json_get_str(j, "message", msg, sizeof msg);
    CHECKM(strstr(msg, "exit") && strstr(msg, "3"), j, "the message does not give the exit status");
    CHECKM(!strstr(msg, "banner line") && !strstr(msg, "flood line"), j, "raw subprocess output in a message");
  }
  CHECK(evrec_wait(&ev, "closed", "\"exit_code\":3", 1, T(2000)) == 1);
  char *closed = evrec_first(&ev, "closed", NULL);
  CHECKE(closed && strstr(closed, "\"requested\":false") && strstr(closed, "\"status\":-7"), closed);
  free(closed);
  CHECK(state_of(c) == LMCP_STATE_CLOSED);
  char *res, *err;
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"x\"}", NULL, &res, &err), LMCP_E_INVALID_STATE, err);
  lmcp_free(res);
  lmcp_free(err);
  CHECK_ST(tool_async(c, "echo", "{\"text\":\"x\"}", NULL, &rec.slots[0], NULL), LMCP_E_INVALID_STATE, NULL);
  sleep_ms(50);
  CHECK(donerec_count(&rec, 0) == 1 && donerec_count(&rec, 1) == 1);
  stop_client(c, &ev); /* close after a crash still succeeds */
  CHECK(evrec_count(&ev, "closed", NULL) <= 1);
  donerec_free(&rec);
}

static void test_close_kills_grandchild(void) {
  char cfg[2048], pidfile[256], args[400];
  temp_path(pidfile, sizeof pidfile, "grandchild.pid");
  snprintf(args, sizeof args, "\"-grandchild\",\"-pidfile\",\"%s\"", pidfile);
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, args, NULL, NULL), &ev);
  if (c == NULL) return;
  long long gpid = tool_int(c, "grandchild");
  long long spid = tool_int(c, "pid");
  char *pf = read_file(pidfile, NULL);
  CHECKE(pf && atoll(pf) == gpid, pf);
  free(pf);
  CHECK(gpid > 0 && kill((pid_t)gpid, 0) == 0);
  CHECK(spid > 0 && !pid_reaped((pid_t)spid));
  char *err = NULL;
  CHECK_ST(lmcp_client_close(c, T(8000), &err), LMCP_OK, err);
  lmcp_free(err);
  if (gpid > 0) CHECKM(wait_pid_gone((pid_t)gpid, T(3000)), NULL, "grandchild %lld still runs", gpid);
  if (spid > 0) CHECKM(wait_pid_reaped((pid_t)spid, T(3000)), NULL, "server %lld not reaped (zombie?)", spid);
  lmcp_client_free(c);
  finish_recorder(&ev);
  if (gpid > 0 && !pid_gone((pid_t)gpid)) kill((pid_t)gpid, SIGKILL);

  /* a server that ignores SIGTERM and stdin EOF: close escalates to SIGKILL */
  evrec_init(&ev);
  c = start_client(fixture_config(cfg, sizeof cfg, "\"-ignore-sigterm\",\"-ignore-stdin-eof\"", NULL,
                                  "\"timeouts\":{\"close_grace_ms\":200}"), &ev);
  if (c == NULL) return;
  spid = tool_int(c, "pid");
  int64_t t0 = now_ms();
  err = NULL;
  CHECK_ST(lmcp_client_close(c, -1, &err), LMCP_OK, err); /* -1: 3 x 200 + 1000 ms */
  int64_t dt = now_ms() - t0;
  lmcp_free(err);
  CHECKM(dt < T(1600), NULL, "close took %lld ms", (long long)dt);
  if (spid > 0) CHECKM(wait_pid_reaped((pid_t)spid, T(2000)), NULL, "server %lld not gone", spid);
  CHECK(evrec_wait(&ev, "closed", NULL, 1, T(1000)) == 1);
  char *closed = evrec_first(&ev, "closed", NULL);
  CHECKE(closed && strstr(closed, "\"requested\":true") && strstr(closed, "\"signal\":\""), closed);
  free(closed);
  lmcp_client_free(c);
  finish_recorder(&ev);
  if (spid > 0 && !pid_reaped((pid_t)spid)) kill((pid_t)spid, SIGKILL);

  /* free without close reaps the server (and its group) in the background */
  temp_path(pidfile, sizeof pidfile, "grandchild.pid");
  snprintf(args, sizeof args, "\"-grandchild\",\"-pidfile\",\"%s\"", pidfile);
  c = start_client(fixture_config(cfg, sizeof cfg, args, NULL, "\"timeouts\":{\"close_grace_ms\":200}"), NULL);
  if (c == NULL) return;
  gpid = tool_int(c, "grandchild");
  spid = tool_int(c, "pid");
  lmcp_client_free(c);
  if (spid > 0) CHECKM(wait_pid_reaped((pid_t)spid, T(3000)), NULL, "server %lld not reaped after free", spid);
  if (gpid > 0) CHECKM(wait_pid_gone((pid_t)gpid, T(3000)), NULL, "grandchild %lld survives free", gpid);
  if (gpid > 0 && !pid_gone((pid_t)gpid)) kill((pid_t)gpid, SIGKILL);
}

static void test_stderr_flood(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  /* LMCP_TEST_STDERR_FLOOD lowers the size for slow runs (valgrind); any
   * size well past the 64 KiB pipe buffer wedges a client that does not drain. */
  const char *flood_env = getenv("LMCP_TEST_STDERR_FLOOD");
  long flood = flood_env ? atol(flood_env) : 5000000;
  char args[128], extra[128];
  snprintf(args, sizeof args, "\"-stderr-flood\",\"%ld\"", flood);
  snprintf(extra, sizeof extra, "\"timeouts\":{\"ready_ms\":%d}", T(10000));
  int64_t t0 = now_ms();
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, args, NULL, extra), &ev);
  if (c == NULL) return;
  printf("  ready after a %ld-byte stderr flood in %lld ms\n", flood, (long long)(now_ms() - t0));
  expect_echo(c, "after flood");
  CHECK(evrec_wait(&ev, "log", "\"source\":\"stderr\"", 1, T(2000)) >= 1);
  char *l = evrec_first(&ev, "log", "\"source\":\"stderr\"");
  CHECKE(l && strstr(l, "fixture stderr flood line") && strstr(l, "\"level\":\""), l);
  free(l);
  /* more stderr mid-session does not wedge either */
  char *res, *err;
  CHECK_ST(tool_sync(c, "stderr", "{\"bytes\":1000000}", "{\"timeout_ms\":60000}", &res, &err), LMCP_OK, err);
  lmcp_free(res);
  lmcp_free(err);
  expect_echo(c, "after more stderr");
  printf("  %d stderr log events received\n", evrec_count(&ev, "log", "\"source\":\"stderr\""));
  stop_client(c, &ev);

  /* stderr "discard" and "merge" modes also come up */
  evrec_init(&ev);
  c = start_client(fixture_config(cfg, sizeof cfg, "\"-stderr-flood\",\"200000\"", "\"stderr\":\"discard\"", NULL), &ev);
  if (c) expect_echo(c, "discard");
  CHECK(evrec_count(&ev, "log", "\"source\":\"stderr\"") == 0);
  stop_client(c, &ev);
  evrec_init(&ev);
  c = start_client(fixture_config(cfg, sizeof cfg, "\"-stderr-flood\",\"20000\"", "\"stderr\":\"merge\"", NULL), &ev);
  if (c) expect_echo(c, "merge");
  stop_client(c, &ev);
}

static void test_banner_lines(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, "\"-banner\",\"5\"", NULL, NULL), &ev);
  if (c == NULL) return;
  int n = evrec_wait(&ev, "log", "\"source\":\"stdout\"", 5, T(2000));
  CHECKM(n >= 5, NULL, "%d stdout log events for 5 banner lines", n);
  CHECK(evrec_count(&ev, "log", "banner line 5") == 1);
  expect_echo(c, "after banner");
  stop_client(c, &ev);
}

static void test_over_long_line(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"limits\":{\"max_message_bytes\":65536}"), &ev);
  if (c == NULL) return;
  char *res, *err;
  CHECK_ST(tool_sync(c, "huge_line", "{\"bytes\":200000}", NULL, &res, &err), LMCP_OK, err);
  CHECKE(res && strstr(res, "\"text\":\"ok\""), res);
  lmcp_free(res);
  lmcp_free(err);
  CHECK(evrec_wait(&ev, "log", "\"level\":\"warning\"", 1, T(2000)) >= 1);
  int n = evrec_count(&ev, "log", "200000") + evrec_count(&ev, "log", "200001");
  CHECKM(n >= 1, NULL, "no log event mentions the skipped size");
  char *w = evrec_first(&ev, "log", "\"level\":\"warning\"");
  CHECKE(w && strstr(w, "xxxxxxxx") == NULL, w); /* the line itself is not copied */
  printf("  %s\n", w ? w : "(none)");
  free(w);
  expect_echo(c, "after huge line");
  /* a result larger than the limit is skipped too; its head names the
   * request, so the call fails at once (not at its timeout) */
  CHECK_ST(tool_sync(c, "large", "{\"bytes\":100000}", "{\"timeout_ms\":30000}", &res, &err), LMCP_E_PROTOCOL, err);
  CHECKE(err && strstr(err, "larger than the limit of 65536 bytes"), err);
  lmcp_free(res);
  lmcp_free(err);
  expect_echo(c, "still going");
  stop_client(c, &ev);

  /* an over-long line at startup, before the handshake */
  evrec_init(&ev);
  c = start_client(fixture_config(cfg, sizeof cfg, "\"-huge-line\",\"300000\"", NULL,
                                  "\"limits\":{\"max_message_bytes\":65536}"), &ev);
  if (c) expect_echo(c, "after startup huge line");
  CHECK(evrec_count(&ev, "log", "300000") + evrec_count(&ev, "log", "300001") >= 1);
  stop_client(c, &ev);
}

/* ---- a server that stops reading its stdin never blocks lmcp_client_call:
 * the fixture's stall_stdin stops its reader (until SIGUSR1), the test
 * issues 2 MiB of calls into a 64 KiB pipe, sees every call return before
 * any completed, then lets the server read and gets every answer whole.
 * LMCP_TEST_PIPE_PAD (bytes per call) lowers the size for slow runs
 * (valgrind); 16 calls of any size past 4 KiB overfill the pipe. */
static void test_full_pipe_never_blocks(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), &ev);
  if (c == NULL) return;
  long long spid = tool_int(c, "pid");
  CHECK(spid > 0);
  char *res = NULL, *err = NULL;
  CHECK_ST(tool_sync(c, "stall_stdin", "{\"ms\":120000}", NULL, &res, &err), LMCP_OK, err);
  lmcp_free(res);
  lmcp_free(err);
  enum { N = 16 };
  const char *pad_env = getenv("LMCP_TEST_PIPE_PAD");
  const size_t PAD = pad_env && atoi(pad_env) > 4096 ? (size_t)atoi(pad_env) : (size_t)128 << 10;
  donerec_t rec;
  donerec_init(&rec, N);
  char *params = malloc(PAD + 256);
  int issued = 0;
  for (int i = 0; i < N; i++) {
    int n = snprintf(params, 64, "{\"name\":\"echo\",\"arguments\":{\"text\":\"%02d-", i);
    memset(params + n, 'a' + i % 26, PAD);
    strcpy(params + n + PAD, "\"}}");
    doneslot_t *slot = &rec.slots[i];
    slot->caller = pthread_self();
    err = NULL;
    lmcp_status st = lmcp_client_call(c, "tools/call", params, strlen(params), NULL, 0, done_cb, slot,
                                      &slot->issued_call_id, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
    if (st == LMCP_OK) issued++;
  }
  free(params);
  /* The server has read none of them: had a call waited for the pipe, it
   * would still be waiting (the stall lasts two minutes). */
  CHECKM(donerec_count_total(&rec) == 0, NULL, "%d calls completed while the server read nothing",
         donerec_count_total(&rec));
  CHECK(issued == N);
  CHECK(kill((pid_t)spid, SIGUSR1) == 0);
  CHECK(donerec_wait_all(&rec, T(20000)) == N);
  pthread_mutex_lock(&rec.mu);
  for (int i = 0; i < N; i++) {
    doneslot_t *s = &rec.slots[i];
    char want[16];
    snprintf(want, sizeof want, "\"%02d-", i);
    CHECK_ST(s->status, LMCP_OK, s->json);
    CHECKM(s->json && strstr(s->json, want) && strlen(s->json) > PAD, s->json ? "(large)" : NULL,
           "call %d came back wrong", i);
  }
  pthread_mutex_unlock(&rec.mu);
  donerec_free(&rec);
  stop_client(c, &ev);
}

static void test_large_result(void) {
  char cfg[2048];
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), NULL);
  if (c == NULL) return;
  char *res = NULL, *err = NULL;
  size_t len = 0;
  const char *p = "{\"name\":\"large\",\"arguments\":{\"bytes\":2000000}}";
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", p, strlen(p), NULL, 0, &res, &len, &err), LMCP_OK, err);
  CHECKM(res && len >= 2000000 && strlen(res) == len && json_valid(res, len), NULL, "len %zu", len);
  lmcp_free(res);
  lmcp_free(err);
  stop_client(c, NULL);
}

/* ---- handles */

static int destroy_count;
static void count_destroy(void *ud) {
  (void)ud;
  destroy_count++;
}
static void never_event(void *ud, const char *k, const char *j, size_t n) {
  (void)ud, (void)k, (void)j, (void)n;
}
static void never_host(void *ud, lmcp_request_id id, const char *k, const char *j, size_t n) {
  (void)ud, (void)id, (void)k, (void)j, (void)n;
}

static void every_function_rejects(lmcp_client *h, const char *what) {
  char *err = NULL, *out = (char *)1;
  size_t len = 7;
  lmcp_state s = 77;
  donerec_t rec;
  donerec_init(&rec, 1);
  printf("  %s handle\n", what);
#define ERR_IS_HANDLE()                                \
  do {                                                 \
    CHECK_ERR_JSON(err, LMCP_E_INVALID_HANDLE);        \
    lmcp_free(err);                                    \
    err = NULL;                                        \
  } while (0)
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_event_handler(h, never_event, NULL, count_destroy, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECKM(destroy_count == 1, NULL, "destroy ran %d times", destroy_count);
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_event_handler(h, NULL, NULL, count_destroy, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK(destroy_count == 1);
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_host_request_handler(h, never_host, NULL, count_destroy, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECKM(destroy_count == 1, NULL, "destroy ran %d times", destroy_count);
  CHECK_ST(lmcp_client_connect(h, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK_ST(lmcp_client_wait_ready(h, 10, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK_ST(lmcp_client_state(h, &s), LMCP_E_INVALID_HANDLE, NULL);
  CHECK(s == 77);
  lmcp_call_id id = 0;
  rec.slots[0].caller = pthread_self();
  CHECK_ST(lmcp_client_call(h, "tools/list", NULL, 0, NULL, 0, done_cb, &rec.slots[0], &id, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK_ST(lmcp_client_call_sync(h, "tools/list", NULL, 0, NULL, 0, &out, &len, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK(out == NULL);
  CHECK_ST(lmcp_client_cancel(h, 1), LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(lmcp_client_notify(h, "notifications/roots/list_changed", NULL, 0, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK_ST(lmcp_client_respond(h, 1, LMCP_OK, "{}", 2, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  out = (char *)1;
  CHECK_ST(lmcp_client_server_info(h, &out, &len, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK(out == NULL);
  CHECK_ST(lmcp_client_close(h, 100, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  /* err_out may be NULL */
  CHECK_ST(lmcp_client_close(h, 100, NULL), LMCP_E_INVALID_HANDLE, NULL);
  lmcp_client_free(h); /* harmless */
  lmcp_client_free(h);
  sleep_ms(20);
  CHECK(donerec_count(&rec, 0) == 0);
  donerec_free(&rec);
#undef ERR_IS_HANDLE
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)(*(void *const *)a), y = (uintptr_t)(*(void *const *)b);
  return x < y ? -1 : x > y;
}

static void test_invalid_handles(void) {
  char cfg[2048];
  fixture_config(cfg, sizeof cfg, NULL, NULL, NULL);
  every_function_rejects(NULL, "NULL");
  lmcp_client_free(NULL);

  lmcp_client *c = new_client(cfg, NULL);
  lmcp_client_free(c);
  every_function_rejects(c, "freed (never connected)");

  c = start_client(cfg, NULL);
  if (c != NULL) {
    lmcp_client_free(c);
    every_function_rejects(c, "freed (was ready)");
  }

  long local = 42;
  every_function_rejects((lmcp_client *)&local, "never issued (address of a local)");
  CHECK(local == 42);
  char *heap = malloc(1);
  every_function_rejects((lmcp_client *)heap, "never issued (heap address)");
  free(heap);

  /* 2000 new/free cycles: no handle value is ever handed out twice */
  enum { N = 2000 };
  void **seen = malloc(sizeof(void *) * N);
  int dup = 0;
  for (int i = 0; i < N; i++) {
    lmcp_client *h = NULL;
    if (lmcp_client_new(cfg, strlen(cfg), &h, NULL) != LMCP_OK || h == NULL) {
      CHECKM(0, NULL, "lmcp_client_new failed at cycle %d", i);
      break;
    }
    seen[i] = h;
    lmcp_client_free(h);
  }
  qsort(seen, N, sizeof(void *), cmp_ptr);
  for (int i = 1; i < N; i++) dup += seen[i] == seen[i - 1];
  CHECKM(dup == 0, NULL, "%d handle values were reused over %d cycles", dup, N);
  int live = 0;
  for (int i = 0; i < N; i++) {
    lmcp_state s;
    live += lmcp_client_state((lmcp_client *)seen[i], &s) != LMCP_E_INVALID_HANDLE;
  }
  CHECKM(live == 0, NULL, "%d stale handles still resolve", live);
  /* and a fresh handle is none of them */
  lmcp_client *h = new_client(cfg, NULL);
  CHECK(bsearch(&h, seen, N, sizeof(void *), cmp_ptr) == NULL);
  lmcp_client_free(h);
  free(seen);
}

/* ---- host requests */

static void test_host_requests_expire(void) {
  char cfg[2048], log[256], args[400];
  char *err = NULL, *res, *e;
  temp_path(log, sizeof log, "host.log");
  snprintf(args, sizeof args, "\"-log-file\",\"%s\"", log);

  /* never answered: expires after host_request_ms */
  hostrec_t hr;
  hostrec_init(&hr, NULL);
  lmcp_client *c = new_client(fixture_config(cfg, sizeof cfg, args, NULL,
                                             "\"handlers\":{\"roots\":{}},\"timeouts\":{\"host_request_ms\":300}"), NULL);
  if (c == NULL) return;
  hr.client = c;
  CHECK_ST(lmcp_client_set_host_request_handler(c, hostrec_cb, &hr, hostrec_destroy, &err), LMCP_OK, err);
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
             !strstr(line, "\"elicitation\""), line);
  free(text);

  int64_t t0 = now_ms();
  CHECK_ST(tool_sync(c, "roots", NULL, "{\"timeout_ms\":5000}", &res, &e), LMCP_OK, e);
  int64_t dt = now_ms() - t0;
  CHECKE(res && strstr(res, "\"isError\":true"), res);
  printf("  expired host request → %s (%lld ms)\n", res ? res : "(null)", (long long)dt);
  CHECKM(dt >= 250 && dt < T(3000), res, "the request expired after %lld ms", (long long)dt);
  lmcp_free(res);
  lmcp_free(e);
  CHECK(hostrec_wait(&hr, 1, 0) == 1);
  CHECK(strcmp(hr.kinds[0], "roots") == 0);
  CHECKE(hr.payloads[0] && strstr(hr.payloads[0], "\"method\":\"roots/list\"") &&
             json_valid(hr.payloads[0], strlen(hr.payloads[0])), hr.payloads[0]);
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
  c = new_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"handlers\":{\"roots\":{\"list_changed\":true}}"), NULL);
  if (c == NULL) return;
  hr.client = c;
  CHECK_ST(lmcp_client_set_host_request_handler(c, hostrec_cb, &hr, hostrec_destroy, &err), LMCP_OK, err);
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
  c = new_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"handlers\":{\"roots\":{}}"), NULL);
  if (c == NULL) return;
  hr.client = c;
  CHECK_ST(lmcp_client_set_host_request_handler(c, hostrec_cb, &hr, hostrec_destroy, &err), LMCP_OK, err);
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
    CHECKM(0, NULL, "no roots host request arrived");
  }
  CHECK(donerec_wait_slot(&rec, 0, T(3000)) == 1);
  CHECK_ST(rec.slots[0].status, LMCP_OK, rec.slots[0].json);
  CHECKE(rec.slots[0].json && strstr(rec.slots[0].json, "\"isError\":true") &&
             strstr(rec.slots[0].json, "host says no"), rec.slots[0].json);
  stop_client(c, NULL);
  donerec_free(&rec);
  CHECK(hr.destroys == 1);
  hostrec_free(&hr);

  /* handlers configured but no host-request handler: connect refuses */
  c = new_client(fixture_config(cfg, sizeof cfg, NULL, NULL, "\"handlers\":{\"roots\":{}}"), NULL);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;
  lmcp_client_free(c);
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

static void test_callbacks_exactly_once(void) {
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
  CHECK_ST(lmcp_client_set_host_request_handler(c, hostrec_cb, &h1, hostrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_set_host_request_handler(c, hostrec_cb, &h2, hostrec_destroy, &err), LMCP_OK, err);
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
  CHECK_ST(lmcp_client_set_host_request_handler(c, never_host, NULL, count_destroy, &err), LMCP_E_INVALID_STATE, err);
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
  for (int i = 0; i < 4; i++) CHECK_ST(tool_async(c, "slow", "{\"ms\":3000}", NULL, &rec.slots[i], NULL), LMCP_OK, NULL);
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
  CHECK_ST(lmcp_client_set_host_request_handler(c, hostrec_cb, &hf, hostrec_destroy, NULL), LMCP_E_INVALID_HANDLE, NULL);
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
  doneslot_t *next;       /* the call made from inside the callback */
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
  r->sync_st = lmcp_client_call_sync(r->c, "tools/call", q, strlen(q), "{\"timeout_ms\":3000}", 19, &r->sync_res, &n, NULL);
  /* signal completion through the recorder's slot 0 */
  done_cb(&reent_rec.slots[0], 1, LMCP_OK, "{}", 2);
}

static void test_callbacks_reenter_library(void) {
  char cfg[2048];
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), NULL);
  if (c == NULL) return;
  donerec_init(&reent_rec, 2);
  reent_t r = {c, &reent_rec.slots[1], -100, -100, NULL, -1, pthread_self()};
  pthread_t me = pthread_self();
  const char *p = "{\"name\":\"echo\",\"arguments\":{\"text\":\"first\"}}";
  CHECK_ST(lmcp_client_call(c, "tools/call", p, strlen(p), NULL, 0, reent_done, &r, NULL, NULL), LMCP_OK, NULL);
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

static void test_notifications(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), &ev);
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

static void test_config_errors(void) {
  struct {
    const char *json;
    lmcp_status want;
    const char *names; /* the message must contain it */
  } cases[] = {
      {"{", LMCP_E_INVALID_ARGUMENT, NULL},
      {"not json", LMCP_E_INVALID_ARGUMENT, NULL},
      {"[]", LMCP_E_INVALID_ARGUMENT, NULL},
      {"{}", LMCP_E_INVALID_ARGUMENT, "transport"},
      {"{\"transport\":{\"type\":\"stdio\",\"comand\":\"x\"}}", LMCP_E_INVALID_ARGUMENT, "config.transport.comand"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"comand\":\"x\"}}", LMCP_E_INVALID_ARGUMENT, "config.transport.comand"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"},\"timeouts\":{\"ready\":5}}", LMCP_E_INVALID_ARGUMENT, "config.timeouts.ready"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"},\"bogus\":1}", LMCP_E_INVALID_ARGUMENT, "bogus"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"\"}}", LMCP_E_INVALID_ARGUMENT, "command"},
      {"{\"transport\":{\"type\":\"stdio\"}}", LMCP_E_INVALID_ARGUMENT, "command"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"args\":\"-v\"}}", LMCP_E_INVALID_ARGUMENT, "args"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"stderr\":\"loud\"}}", LMCP_E_INVALID_ARGUMENT, "stderr"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"env_inherit\":\"some\"}}", LMCP_E_INVALID_ARGUMENT, "env_inherit"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"},\"timeouts\":{\"ready_ms\":\"soon\"}}", LMCP_E_INVALID_ARGUMENT, "ready_ms"},
      {"{\"transport\":{\"type\":\"pigeon\",\"command\":\"x\"}}", LMCP_E_INVALID_ARGUMENT, "type"},
      /* OAuth: named fields, secrets never echoed (checked below) */
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"},\"auth\":{\"client_id\":\"a\"}}",
       LMCP_E_INVALID_ARGUMENT, "config.auth"},
      {"{\"transport\":{\"type\":\"streamable_http\",\"url\":\"http://127.0.0.1:9/mcp\"},"
       "\"auth\":{\"client_secret\":\"hunter2-secret\"}}",
       LMCP_E_INVALID_ARGUMENT, "config.auth.client_secret"},
      {"{\"transport\":{\"type\":\"streamable_http\",\"url\":\"http://127.0.0.1:9/mcp\"},"
       "\"auth\":{\"client_id\":\"a\",\"client_secret\":\"hunter2-secret\",\"flow\":\"device\"}}",
       LMCP_E_INVALID_ARGUMENT, "config.auth.flow"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lmcp_client *c = (lmcp_client *)&cases[i];
    char *err = NULL;
    lmcp_status st = lmcp_client_new(cases[i].json, strlen(cases[i].json), &c, &err);
    CHECKM(st == cases[i].want, err, "config %s: got %d, want %d", cases[i].json, (int)st, (int)cases[i].want);
    CHECK(c == NULL);
    CHECK_ERR_JSON(err, cases[i].want);
    if (cases[i].names)
      CHECKM(err && strstr(err, cases[i].names), err, "the message does not name %s", cases[i].names);
    CHECKM(err == NULL || strstr(err, "hunter2") == NULL, err, "a secret was echoed");
    lmcp_free(err);
    if (st == LMCP_OK) lmcp_client_free(c);
  }
  /* HTTP transports: accepted when lmcp_features lists them, otherwise
   * LMCP_E_UNSUPPORTED naming the type */
  char *features = NULL;
  CHECK_ST(lmcp_features(&features, NULL), LMCP_OK, NULL);
  static const char *const http[] = {"streamable_http", "sse", "http"};
  char transports[256] = "";
  const char *tp = features ? strstr(features, "\"transports\":[") : NULL;
  if (tp != NULL) {
    const char *end = strchr(tp, ']');
    size_t n = end ? (size_t)(end - tp) : 0;
    if (n >= sizeof transports) n = sizeof transports - 1;
    memcpy(transports, tp, n);
    transports[n] = 0;
  }
  CHECKE(strstr(transports, "\"stdio\""), features);
  for (size_t i = 0; i < 3; i++) {
    char listed[64], cfg[256];
    snprintf(listed, sizeof listed, "\"%s\"", http[i]);
    int built_in = strstr(transports, listed) != NULL;
    snprintf(cfg, sizeof cfg, "{\"transport\":{\"type\":\"%s\",\"url\":\"http://127.0.0.1:1/mcp\"}}", http[i]);
    lmcp_client *hc = NULL;
    char *herr = NULL;
    lmcp_status st = lmcp_client_new(cfg, strlen(cfg), &hc, &herr);
    if (built_in) {
      CHECKM(st == LMCP_OK && hc != NULL, herr, "%s is listed by lmcp_features but refused", http[i]);
    } else {
      CHECKM(st == LMCP_E_UNSUPPORTED && hc == NULL, herr, "%s is not built in: got %d", http[i], (int)st);
      CHECK_ERR_JSON(herr, LMCP_E_UNSUPPORTED);
      CHECKE(herr && strstr(herr, http[i]), herr);
    }
    printf("  transport %s: %s\n", http[i], built_in ? "built in" : "not built in");
    lmcp_free(herr);
    lmcp_client_free(hc);
  }
  lmcp_free(features);

  /* absent config (NULL, 0) and NULL client_out */
  lmcp_client *c = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_client_new(NULL, 0, &c, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;
  const char *ok = "{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"}}";
  CHECK_ST(lmcp_client_new(ok, strlen(ok), NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;
  /* the length is honoured: trailing garbage beyond len is not read */
  char buf[128];
  snprintf(buf, sizeof buf, "%sGARBAGE", ok);
  CHECK_ST(lmcp_client_new(buf, strlen(ok), &c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  lmcp_client_free(c);

  /* executable not found: at connect, naming it, without the environment */
  const char *nf[] = {
      "{\"transport\":{\"type\":\"stdio\",\"command\":\"lmcp-no-such-server-7f3a\",\"env\":{\"LMCP_SECRET\":\"hunter2-token\"}}}",
      "{\"transport\":{\"type\":\"stdio\",\"command\":\"/nonexistent/dir/lmcp-no-such-server-7f3a\",\"env\":{\"LMCP_SECRET\":\"hunter2-token\"}}}",
  };
  for (int i = 0; i < 2; i++) {
    c = NULL;
    CHECK_ST(lmcp_client_new(nf[i], strlen(nf[i]), &c, &err), LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
    if (c == NULL) continue;
    CHECK_ST(lmcp_client_connect(c, &err), LMCP_E_INVALID_ARGUMENT, err);
    CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
    CHECKE(err && strstr(err, "lmcp-no-such-server-7f3a"), err);
    CHECKE(err && !strstr(err, "hunter2") && !strstr(err, "LMCP_SECRET") && !strstr(err, "PATH=") &&
               !strstr(err, "HOME="), err);
    lmcp_free(err);
    err = NULL;
    lmcp_state s = state_of(c);
    CHECKM(s == LMCP_STATE_FAILED || s == LMCP_STATE_NEW, NULL, "state %d after a failed connect", (int)s);
    lmcp_client_free(c);
  }
  /* a working directory that does not exist */
  char cfg[2048];
  fixture_config(cfg, sizeof cfg, NULL, "\"cwd\":\"/nonexistent/lmcp-dir\"", NULL);
  c = new_client(cfg, NULL);
  if (c != NULL) {
    CHECK_ST(lmcp_client_connect(c, &err), LMCP_E_INVALID_ARGUMENT, err);
    CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
    lmcp_free(err);
    err = NULL;
    lmcp_client_free(c);
  }
  /* env, env_inherit and cwd that do work */
  fixture_config(cfg, sizeof cfg, NULL, "\"cwd\":\"/tmp\",\"env\":{\"LMCP_X\":\"1\"},\"env_inherit\":\"all\"", NULL);
  c = start_client(cfg, NULL);
  if (c) expect_echo(c, "env ok");
  stop_client(c, NULL);
}

static void test_call_argument_errors(void) {
  char cfg[2048];
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, NULL, NULL, NULL), NULL);
  if (c == NULL) return;
  donerec_t rec;
  donerec_init(&rec, 1);
  rec.slots[0].caller = pthread_self();
  char *err = NULL, *out = NULL;
  struct {
    const char *method, *params, *opts;
  } bad[] = {
      {"", NULL, NULL},
      {"tools/list", "[1,2]", NULL},
      {"tools/list", "{", NULL},
      {"tools/list", "\"str\"", NULL},
      {"tools/list", NULL, "{"},
      {"tools/list", NULL, "{\"timeout_ms\":\"x\"}"},
      {"tools/list", NULL, "[]"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lmcp_status st = lmcp_client_call(c, bad[i].method, bad[i].params, bad[i].params ? strlen(bad[i].params) : 0,
                                      bad[i].opts, bad[i].opts ? strlen(bad[i].opts) : 0, done_cb,
                                      &rec.slots[0], NULL, &err);
    CHECKM(st == LMCP_E_INVALID_ARGUMENT, err, "call(%s, %s, %s) gave %d", bad[i].method,
           bad[i].params ? bad[i].params : "NULL", bad[i].opts ? bad[i].opts : "NULL", (int)st);
    CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
    lmcp_free(err);
    err = NULL;
    st = lmcp_client_call_sync(c, bad[i].method, bad[i].params, bad[i].params ? strlen(bad[i].params) : 0,
                               bad[i].opts, bad[i].opts ? strlen(bad[i].opts) : 0, &out, NULL, &err);
    CHECK_ST(st, LMCP_E_INVALID_ARGUMENT, err);
    CHECK(out == NULL);
    lmcp_free(err);
    err = NULL;
  }
  CHECK_ST(lmcp_client_call(c, NULL, NULL, 0, NULL, 0, done_cb, &rec.slots[0], NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_call(c, "tools/list", NULL, 0, NULL, 0, NULL, NULL, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_call_sync(c, "tools/list", NULL, 0, NULL, 0, NULL, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_server_info(c, NULL, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_state(c, NULL), LMCP_E_INVALID_ARGUMENT, NULL);
  CHECK_ST(lmcp_client_notify(c, "notifications/lemon/test", "[1]", 3, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_notify(c, "", NULL, 0, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_notify(c, NULL, NULL, 0, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_notify(c, "notifications/lemon/test", "{\"x\":1}", 7, &err), LMCP_OK, err);
  CHECK(err == NULL);
  lmcp_free(err);
  err = NULL;
  /* roots/list_changed without handlers.roots.list_changed is refused locally
   * (the library's choice of status: INVALID_STATE; the header documents
   * INVALID_STATE for "not ready" only — see the report) */
  lmcp_status nst = lmcp_client_notify(c, "notifications/roots/list_changed", NULL, 0, &err);
  CHECKM(nst == LMCP_E_INVALID_STATE || nst == LMCP_E_UNSUPPORTED, err, "status %d", (int)nst);
  CHECKE(err && strstr(err, "list_changed"), err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_respond(c, 424242, LMCP_OK, "{}", 2, &err), LMCP_E_NOT_FOUND, err);
  lmcp_free(err);
  err = NULL;
  /* params sent with a length shorter than the buffer: only len bytes count */
  const char *p = "{\"name\":\"echo\",\"arguments\":{\"text\":\"len\"}}JUNK";
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", p, strlen(p) - 4, NULL, 0, &out, NULL, &err), LMCP_OK, err);
  lmcp_free(out);
  lmcp_free(err);
  err = NULL;
  /* _meta is passed through */
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"meta\"}", "{\"_meta\":{\"lemon/trace\":\"abc\"}}", &out, &err), LMCP_OK, err);
  lmcp_free(out);
  lmcp_free(err);
  sleep_ms(50);
  CHECK(donerec_count(&rec, 0) == 0);
  stop_client(c, NULL);
  donerec_free(&rec);
}

static void test_server_errors_and_gating(void) {
  char cfg[2048], log[256], args[400];
  temp_path(log, sizeof log, "gating.log");
  snprintf(args, sizeof args, "\"-log-file\",\"%s\"", log);
  lmcp_client *c = start_client(fixture_config(cfg, sizeof cfg, args, NULL, NULL), NULL);
  if (c == NULL) return;
  char *res, *err;
  long long code = 0;
  CHECK_ST(tool_sync(c, "no_such_tool", NULL, NULL, &res, &err), LMCP_E_PROTOCOL, err);
  CHECKE(err && json_get_int(err, "code", &code) && code != 0, err);
  printf("  unknown tool → %s\n", err ? err : "(null)");
  lmcp_free(res);
  lmcp_free(err);
  CHECK_ST(call_sync(c, "resources/read", "{\"uri\":\"fixture://nope\"}", NULL, &res, &err), LMCP_E_PROTOCOL, err);
  CHECKE(err && json_get_int(err, "code", &code), err);
  lmcp_free(res);
  lmcp_free(err);
  CHECK_ST(call_sync(c, "prompts/get", "{\"name\":\"nope\"}", NULL, &res, &err), LMCP_E_PROTOCOL, err);
  CHECKE(err && json_get_int(err, "code", &code), err);
  lmcp_free(res);
  lmcp_free(err);
  CHECK_ST(call_sync(c, "no/such/method", NULL, NULL, &res, &err), LMCP_E_PROTOCOL, err);
  CHECKE(err && json_get_int(err, "code", &code) && code == -32601, err);
  lmcp_free(res);
  lmcp_free(err);
  /* an isError tool result is a successful call */
  CHECK_ST(tool_sync(c, "fail", "{\"message\":\"planned failure\"}", NULL, &res, &err), LMCP_OK, err);
  CHECKE(res && strstr(res, "\"isError\":true") && strstr(res, "planned failure"), res);
  lmcp_free(res);
  lmcp_free(err);
  CHECK_ST(call_sync(c, "ping", NULL, NULL, &res, &err), LMCP_OK, err);
  lmcp_free(res);
  lmcp_free(err);

  /* capability gating: a method the server did not declare fails locally */
  char *info = NULL;
  lmcp_client_server_info(c, &info, NULL, NULL);
  const char *gated = NULL, *gparams = NULL;
  if (info && !strstr(info, "\"completions\":")) {
    gated = "completion/complete";
    gparams = "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"},\"argument\":{\"name\":\"name\",\"value\":\"L\"}}";
  } else if (info && !strstr(info, "\"logging\":")) {
    gated = "logging/setLevel";
    gparams = "{\"level\":\"info\"}";
  }
  CHECKM(gated != NULL, info, "the fixture declares every gated capability");
  lmcp_free(info);
  if (gated) {
    donerec_t rec;
    donerec_init(&rec, 1);
    rec.slots[0].caller = pthread_self();
    int64_t t0 = now_ms();
    CHECK_ST(call_sync(c, gated, gparams, NULL, &res, &err), LMCP_E_UNSUPPORTED, err);
    CHECKM(now_ms() - t0 < T(200), NULL, "gating took %lld ms", (long long)(now_ms() - t0));
    CHECKE(err && strstr(err, strcmp(gated, "logging/setLevel") == 0 ? "logging" : "completion"), err);
    lmcp_free(res);
    lmcp_free(err);
    CHECK_ST(lmcp_client_call(c, gated, gparams, strlen(gparams), NULL, 0, done_cb, &rec.slots[0], NULL, NULL),
             LMCP_E_UNSUPPORTED, NULL);
    expect_echo(c, "barrier"); /* everything sent before this echo is in the log */
    char *text = read_file(log, NULL);
    CHECKM(text && !strstr(text, gated), NULL, "%s reached the server", gated);
    free(text);
    sleep_ms(20);
    CHECK(donerec_count(&rec, 0) == 0);
    donerec_free(&rec);
  }
  stop_client(c, NULL);
}

static void test_status_strings_and_versions(void) {
  static const struct {
    lmcp_status st;
    const char *name;
  } names[] = {
      {LMCP_OK, "ok"}, {LMCP_E_INVALID_ARGUMENT, "invalid argument"}, {LMCP_E_INVALID_HANDLE, "invalid handle"},
      {LMCP_E_INVALID_STATE, "invalid state"}, {LMCP_E_NOT_FOUND, "not found"}, {LMCP_E_TIMEOUT, "timeout"},
      {LMCP_E_CANCELLED, "cancelled"}, {LMCP_E_CLOSED, "closed"}, {LMCP_E_TRANSPORT, NULL},
      {LMCP_E_PROTOCOL, NULL}, {LMCP_E_UNSUPPORTED, "unsupported"}, {LMCP_E_AUTH_REQUIRED, NULL},
      {LMCP_E_POLICY_DENIED, NULL}, {LMCP_E_ABI_MISMATCH, NULL}, {LMCP_E_INTERNAL, NULL},
  };
  CHECK(sizeof names / sizeof names[0] == 15);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    CHECK(names[i].st == -(lmcp_status)i); /* never renumbered: 0, -1, ... -14 */
    const char *s = lmcp_status_string(names[i].st);
    CHECKM(s && *s && strcmp(s, "unknown status") != 0, NULL, "status %d", (int)names[i].st);
    if (names[i].name) CHECKM(s && strcmp(s, names[i].name) == 0, NULL, "status %d is \"%s\"", (int)names[i].st, s);
    for (size_t j = 0; j < i; j++) CHECK(strcmp(s, lmcp_status_string(names[j].st)) != 0);
    CHECK(lmcp_status_string(names[i].st) == s); /* static text */
  }
  const lmcp_status unknown[] = {1, -15, 12345, -99999, INT32_MIN, INT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    CHECK(strcmp(lmcp_status_string(unknown[i]), "unknown status") == 0);
  CHECK(strcmp(lmcp_version(), LMCP_VERSION_STRING) == 0);
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", LMCP_VERSION_MAJOR, LMCP_VERSION_MINOR, LMCP_VERSION_PATCH);
  CHECK(strcmp(v, LMCP_VERSION_STRING) == 0);
  CHECK(lmcp_abi_version() == LMCP_ABI_VERSION);
}

static void test_zz_diagnostics_back_to_baseline(void) {
  h_diag d = {-1, -1, -1};
  int64_t end = now_ms() + T(3000);
  for (;;) {
    CHECK(get_diag(&d));
    if (d.live_clients == 0 && d.pending_calls == 0 && d.goroutines <= g_baseline) break;
    if (now_ms() > end) break;
    sleep_ms(50);
  }
  printf("  final: goroutines=%lld (baseline %lld) live_clients=%lld pending_calls=%lld\n", d.goroutines,
         g_baseline, d.live_clients, d.pending_calls);
  CHECK(d.live_clients == 0);
  CHECK(d.pending_calls == 0);
  CHECKM(h_inline_completions == 0, NULL, "%d completions ran inside the initiating lmcp_client_call",
         h_inline_completions);
  CHECKM(d.goroutines <= g_baseline, NULL, "%lld goroutines left, baseline %lld", d.goroutines, g_baseline);
  if (g_smoke_baseline >= 0)
    CHECKM(g_baseline == g_smoke_baseline, NULL, "idle baseline %lld here, %lld in lmcp_smoke", g_baseline,
           g_smoke_baseline);
}

/* ------------------------------------------------------------------- main */

typedef struct {
  const char *name;
  void (*fn)(void);
  int deadline_s;
} test_case;

#define TC(fn, s) {#fn, fn, s}
static const test_case k_tests[] = {
    TC(test_status_strings_and_versions, 5),
    TC(test_happy_path, 20),
    TC(test_modern_era_happy_path, 20),
    TC(test_concurrent_calls, 20),
    TC(test_call_before_ready, 20),
    TC(test_wait_ready_timeout, 20),
    TC(test_initialize_error, 20),
    TC(test_call_timeout_sends_cancelled, 20),
    TC(test_cancel, 20),
    TC(test_progress, 20),
    TC(test_reset_timeout_on_progress, 20),
    TC(test_server_crash_mid_call, 20),
    TC(test_close_kills_grandchild, 30),
    TC(test_stderr_flood, 40),
    TC(test_banner_lines, 20),
    TC(test_over_long_line, 20),
    TC(test_full_pipe_never_blocks, 40),
    TC(test_large_result, 20),
    TC(test_invalid_handles, 30),
    TC(test_host_requests_expire, 30),
    TC(test_callbacks_exactly_once, 30),
    TC(test_callbacks_reenter_library, 20),
    TC(test_notifications, 20),
    TC(test_config_errors, 20),
    TC(test_call_argument_errors, 20),
    TC(test_server_errors_and_gating, 20),
    TC(test_zz_diagnostics_back_to_baseline, 10),
};

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *scale = getenv("LMCP_TEST_TIME_SCALE");
  g_scale = scale ? atoi(scale) : 1;
  if (g_scale < 1) g_scale = 1;
  signal(SIGPIPE, SIG_IGN);

  h_diag d0;
  if (!get_diag(&d0)) {
    fprintf(stderr, "lmcp_diagnostics failed\n");
    return 2;
  }
  g_baseline = d0.goroutines;
  printf("idle baseline: %lld goroutines\n", g_baseline);
  if (argc > 1 && strcmp(argv[1], "-") != 0) {
    char *b = read_file(argv[1], NULL);
    if (b != NULL) {
      long long smoke = atoll(b);
      free(b);
      g_smoke_baseline = smoke;
    }
  }
  for (size_t i = 0; i < sizeof k_tests / sizeof k_tests[0]; i++) {
    int selected = argc <= 2;
    for (int a = 2; a < argc; a++) selected |= strstr(k_tests[i].name, argv[a]) != NULL;
    if (selected) h_run_test(k_tests[i].name, k_tests[i].fn, k_tests[i].deadline_s);
  }
  temp_dir_cleanup();
  return h_finish();
}
