/*
 * test_bad_input.c — bad input gets a clear error: stale and invalid
 * handles, configuration errors, and call argument errors.
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

/* ---- handles */

static void every_function_rejects(lmcp_client *h, const char *what) {
  char *err = NULL, *out = (char *)1;
  size_t len = 7;
  lmcp_state s = 77;
  donerec_t rec;
  donerec_init(&rec, 1);
  printf("  %s handle\n", what);
#define ERR_IS_HANDLE()                         \
  do {                                          \
    CHECK_ERR_JSON(err, LMCP_E_INVALID_HANDLE); \
    lmcp_free(err);                             \
    err = NULL;                                 \
  } while (0)
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_event_handler(h, never_event, NULL, count_destroy, &err), LMCP_E_INVALID_HANDLE,
           err);
  ERR_IS_HANDLE();
  CHECKM(destroy_count == 1, NULL, "destroy ran %d times", destroy_count);
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_event_handler(h, NULL, NULL, count_destroy, &err), LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK(destroy_count == 1);
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_app_request_handler(h, never_host, NULL, count_destroy, &err),
           LMCP_E_INVALID_HANDLE, err);
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
  CHECK_ST(lmcp_client_call(h, "tools/list", NULL, 0, NULL, 0, done_cb, &rec.slots[0], &id, &err),
           LMCP_E_INVALID_HANDLE, err);
  ERR_IS_HANDLE();
  CHECK_ST(lmcp_client_call_sync(h, "tools/list", NULL, 0, NULL, 0, &out, &len, &err), LMCP_E_INVALID_HANDLE,
           err);
  ERR_IS_HANDLE();
  CHECK(out == NULL);
  CHECK_ST(lmcp_client_cancel(h, 1), LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(lmcp_client_notify(h, "notifications/roots/list_changed", NULL, 0, &err), LMCP_E_INVALID_HANDLE,
           err);
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

void test_invalid_handles(void) {
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

void test_config_errors(void) {
  struct {
    const char *json;
    lmcp_status want;
    const char *names; /* the message must contain it */
  } cases[] = {
      {"{", LMCP_E_INVALID_ARGUMENT, NULL},
      {"not json", LMCP_E_INVALID_ARGUMENT, NULL},
      {"[]", LMCP_E_INVALID_ARGUMENT, NULL},
      {"{}", LMCP_E_INVALID_ARGUMENT, "transport"},
      {"{\"transport\":{\"type\":\"stdio\",\"comand\":\"x\"}}", LMCP_E_INVALID_ARGUMENT,
       "config.transport.comand"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"comand\":\"x\"}}", LMCP_E_INVALID_ARGUMENT,
       "config.transport.comand"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"},\"timeouts\":{\"ready\":5}}",
       LMCP_E_INVALID_ARGUMENT, "config.timeouts.ready"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"},\"bogus\":1}", LMCP_E_INVALID_ARGUMENT,
       "bogus"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"\"}}", LMCP_E_INVALID_ARGUMENT, "command"},
      {"{\"transport\":{\"type\":\"stdio\"}}", LMCP_E_INVALID_ARGUMENT, "command"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"args\":\"-v\"}}", LMCP_E_INVALID_ARGUMENT,
       "args"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"stderr\":\"loud\"}}", LMCP_E_INVALID_ARGUMENT,
       "stderr"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\",\"env_inherit\":\"some\"}}",
       LMCP_E_INVALID_ARGUMENT, "env_inherit"},
      {"{\"transport\":{\"type\":\"stdio\",\"command\":\"x\"},\"timeouts\":{\"ready_ms\":\"soon\"}}",
       LMCP_E_INVALID_ARGUMENT, "ready_ms"},
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
    CHECKM(st == cases[i].want, err, "config %s: got %d, want %d", cases[i].json, (int)st,
           (int)cases[i].want);
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
    snprintf(cfg, sizeof cfg, "{\"transport\":{\"type\":\"%s\",\"url\":\"http://127.0.0.1:1/mcp\"}}",
             http[i]);
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
      "{\"transport\":{\"type\":\"stdio\",\"command\":\"lmcp-no-such-server-7f3a\",\"env\":{\"LMCP_SECRET\":"
      "\"hunter2-token\"}}}",
      "{\"transport\":{\"type\":\"stdio\",\"command\":\"/nonexistent/dir/"
      "lmcp-no-such-server-7f3a\",\"env\":{\"LMCP_SECRET\":\"hunter2-token\"}}}",
  };
  for (int i = 0; i < 2; i++) {
    c = NULL;
    CHECK_ST(lmcp_client_new(nf[i], strlen(nf[i]), &c, &err), LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
    if (c == NULL) continue;
    CHECK_ST(lmcp_client_connect(c, &err), LMCP_E_TRANSPORT, err);
    CHECK_ERR_JSON(err, LMCP_E_TRANSPORT);
    CHECKE(err && strstr(err, "lmcp-no-such-server-7f3a"), err);
    CHECKE(err && !strstr(err, "hunter2") && !strstr(err, "LMCP_SECRET") && !strstr(err, "PATH=") &&
               !strstr(err, "HOME="),
           err);
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
  fixture_config(cfg, sizeof cfg, NULL, "\"cwd\":\"/tmp\",\"env\":{\"LMCP_X\":\"1\"},\"env_inherit\":\"all\"",
                 NULL);
  c = start_client(cfg, NULL);
  if (c) expect_echo(c, "env ok");
  stop_client(c, NULL);
}

void test_call_argument_errors(void) {
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
      {"", NULL, NULL},           {"tools/list", "[1,2]", NULL},
      {"tools/list", "{", NULL},  {"tools/list", "\"str\"", NULL},
      {"tools/list", NULL, "{"},  {"tools/list", NULL, "{\"timeout_ms\":\"x\"}"},
      {"tools/list", NULL, "[]"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    lmcp_status st = lmcp_client_call(
        c, bad[i].method, bad[i].params, bad[i].params ? strlen(bad[i].params) : 0, bad[i].opts,
        bad[i].opts ? strlen(bad[i].opts) : 0, done_cb, &rec.slots[0], NULL, &err);
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
  CHECK_ST(lmcp_client_call(c, NULL, NULL, 0, NULL, 0, done_cb, &rec.slots[0], NULL, &err),
           LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_call(c, "tools/list", NULL, 0, NULL, 0, NULL, NULL, NULL, &err),
           LMCP_E_INVALID_ARGUMENT, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_call_sync(c, "tools/list", NULL, 0, NULL, 0, NULL, NULL, &err),
           LMCP_E_INVALID_ARGUMENT, err);
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
  CHECK_ST(tool_sync(c, "echo", "{\"text\":\"meta\"}", "{\"_meta\":{\"lemon/trace\":\"abc\"}}", &out, &err),
           LMCP_OK, err);
  lmcp_free(out);
  lmcp_free(err);
  sleep_ms(50);
  CHECK(donerec_count(&rec, 0) == 0);
  stop_client(c, NULL);
  donerec_free(&rec);
}
