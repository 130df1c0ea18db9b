/*
 * test_lifecycle.c — the life of a client: status strings and versions, the
 * legacy and 2026-07-28 happy paths (handshake, every tool, server info),
 * calls before readiness, wait_ready deadlines and a failed initialize.
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

static const char *const k_tools[] = {"echo",   "add",        "slow",   "large", "fail",
                                      "roots",  "sample",     "elicit", "crash", "huge_line",
                                      "stderr", "grandchild", "notify", "pid",   "touch"};

/* ------------------------------------------------------------------ tests */

void test_happy_path(void) {
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
  CHECK_ST(
      call_sync(c, "prompts/get", "{\"name\":\"greet\",\"arguments\":{\"name\":\"Lemon\"}}", NULL, &res, &e),
      LMCP_OK, e);
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

/* The 2026-07-28 era: protocol.mode "auto" probes with server/discover and
 * the fixture (go-sdk, dual-era) answers it, so no initialize happens; calls
 * work as before and a removed method is refused locally. */
void test_modern_era_happy_path(void) {
  char cfg[2048];
  fixture_config(cfg, sizeof cfg, NULL, NULL, "\"protocol\":{\"mode\":\"auto\"}");
  lmcp_client *c = start_client(cfg, NULL);
  if (c == NULL) return;
  char *info = NULL, *err = NULL;
  size_t ilen = 0;
  CHECK_ST(lmcp_client_server_info(c, &info, &ilen, &err), LMCP_OK, err);
  lmcp_free(err);
  CHECKE(info && strstr(info, "\"era\":\"modern\"") && strstr(info, "\"protocolVersion\":\"2026-07-28\""),
         info);
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

void test_call_before_ready(void) {
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
  CHECK_ST(lmcp_client_notify(c, "notifications/roots/list_changed", NULL, 0, &err), LMCP_E_INVALID_STATE,
           err);
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
                      &rec.slots[2], &id2),
           LMCP_OK, NULL);
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(
      tool_async(c, "echo", "{\"text\":\"queued-connecting\"}", "{\"wait_ready\":true}", &rec.slots[3], &id3),
      LMCP_OK, NULL);
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

void test_wait_ready_timeout(void) {
  char cfg[2048];
  char *err = NULL;
  evrec_t ev;
  evrec_init(&ev);
  /* The server never answers initialize and the handshake's own limit
   * (ready_ms) is 10 minutes: only wait_ready's 200 ms can end the wait;
   * if it is not applied, wait_ready hangs and the watchdog fails the test. */
  lmcp_client *c = new_client(
      fixture_config(cfg, sizeof cfg, "\"-no-init\"", NULL, "\"timeouts\":{\"ready_ms\":600000}"), &ev);
  if (c == NULL) return;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  int64_t t0 = now_ms();
  CHECK_ST(lmcp_client_wait_ready(c, 200, &err), LMCP_E_TIMEOUT, err);
  int64_t dt = now_ms() - t0;
  CHECK_ERR_JSON(err, LMCP_E_TIMEOUT);
  CHECKE(err && strstr(err, "not ready after 200 ms"), err); /* wait_ready's own limit, not ready_ms */
  lmcp_free(err);
  err = NULL;
  CHECKM(dt >= 180, NULL, "wait_ready(200) took %lld ms", (long long)dt);
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
  c = new_client(fixture_config(cfg, sizeof cfg, "\"-no-init\"", NULL, "\"timeouts\":{\"ready_ms\":300}"),
                 &ev);
  if (c == NULL) {
    donerec_free(&rec);
    return;
  }
  t0 = now_ms(); /* ready_ms counts from the handshake's start, after this */
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(tool_async(c, "echo", "{\"text\":\"q\"}", "{\"wait_ready\":true}", &rec.slots[0], NULL), LMCP_OK,
           NULL);
  /* wait forever (-1): only ready_ms 300 can end the handshake, and so the
   * wait; if it is not applied, the watchdog fails the test */
  CHECK_ST(lmcp_client_wait_ready(c, -1, &err), LMCP_E_TIMEOUT, err);
  dt = now_ms() - t0;
  CHECK_ERR_JSON(err, LMCP_E_TIMEOUT);
  CHECKE(err && strstr(err, "did not answer initialize within 300 ms"), err);
  lmcp_free(err);
  err = NULL;
  CHECKM(dt >= 300, NULL, "ready_ms 300 but the handshake gave up after %lld ms", (long long)dt);
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

void test_initialize_error(void) {
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

void test_status_strings_and_versions(void) {
  static const struct {
    lmcp_status st;
    const char *name;
  } names[] = {
      {LMCP_OK, "ok"},
      {LMCP_E_INVALID_ARGUMENT, "invalid argument"},
      {LMCP_E_INVALID_HANDLE, "invalid handle"},
      {LMCP_E_INVALID_STATE, "invalid state"},
      {LMCP_E_NOT_FOUND, "not found"},
      {LMCP_E_TIMEOUT, "timeout"},
      {LMCP_E_CANCELLED, "cancelled"},
      {LMCP_E_CLOSED, "closed"},
      {LMCP_E_TRANSPORT, NULL},
      {LMCP_E_PROTOCOL, NULL},
      {LMCP_E_UNSUPPORTED, "unsupported"},
      {LMCP_E_AUTH_REQUIRED, NULL},
      {LMCP_E_POLICY_DENIED, NULL},
      {LMCP_E_ABI_MISMATCH, NULL},
      {LMCP_E_INTERNAL, NULL},
  };
  CHECK(sizeof names / sizeof names[0] == 15);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    CHECK(names[i].st == -(lmcp_status)i); /* never renumbered: 0, -1, ... -14 */
    const char *s = lmcp_status_string(names[i].st);
    CHECKM(s && *s && strcmp(s, "unknown status") != 0, NULL, "status %d", (int)names[i].st);
    if (names[i].name)
      CHECKM(s && strcmp(s, names[i].name) == 0, NULL, "status %d is \"%s\"", (int)names[i].st, s);
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
