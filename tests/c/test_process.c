/*
 * test_process.c — the stdio server process and its pipes: a crash
 * mid-call, close killing the whole process group, stderr floods, banner and
 * over-long stdout lines, a server that stops reading its stdin.
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

void test_server_crash_mid_call(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  /* banner and stderr text must never reach error messages */
  lmcp_client *c = start_client(
      fixture_config(cfg, sizeof cfg, "\"-banner\",\"2\",\"-stderr-flood\",\"1000\"", NULL, NULL), &ev);
  if (c == NULL) return;
  donerec_t rec;
  donerec_init(&rec, 2);
  /* The slow call would take 10 minutes and the client's call timeout is
   * the default two minutes, both far past the test's deadline: the crash alone
   * can complete it, so a crash that is not noticed at once leaves it
   * pending and the wait below fails. */
  CHECK_ST(tool_async(c, "slow", "{\"ms\":600000}", NULL, &rec.slots[1], NULL), LMCP_OK, NULL);
  CHECK_ST(tool_async(c, "crash", "{}", NULL, &rec.slots[0], NULL), LMCP_OK, NULL);
  CHECKM(donerec_wait_all(&rec, T(10000)) == 2, NULL, "the crash did not fail the calls in flight");
  for (int i = 0; i < 2; i++) {
    const char *j = rec.slots[i].json;
    CHECK_ST(rec.slots[i].status, LMCP_E_CLOSED, j);
    CHECK_ERR_JSON(j, LMCP_E_CLOSED);
    char msg[512] = "";
    json_get_str(j, "message", msg, sizeof msg);
    CHECKM(strstr(msg, "exit") && strstr(msg, "3"), j, "the message does not give the exit status");
    CHECKM(!strstr(msg, "banner line") && !strstr(msg, "flood line"), j,
           "raw subprocess output in a message");
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

void test_close_kills_grandchild(void) {
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
                                  "\"timeouts\":{\"close_grace_ms\":200}"),
                   &ev);
  if (c == NULL) return;
  spid = tool_int(c, "pid");
  int64_t t0 = now_ms();
  err = NULL;
  /* -1: the library's own budget, 3 x 200 + 1000 ms. It answers LMCP_OK only
   * when the escalation (stdin EOF, 200 ms, SIGTERM, 200 ms, SIGKILL) ended
   * the server within that budget; past it the group is killed at once and
   * close answers LMCP_E_TIMEOUT. No clock of the test's own is asserted. */
  CHECK_ST(lmcp_client_close(c, -1, &err), LMCP_OK, err);
  int64_t dt = now_ms() - t0;
  lmcp_free(err);
  /* both grace steps were waited for: nothing skipped to SIGKILL */
  CHECKM(dt >= 400, NULL, "close took only %lld ms: a grace step was skipped", (long long)dt);
  if (spid > 0) CHECKM(wait_pid_reaped((pid_t)spid, T(2000)), NULL, "server %lld not gone", spid);
  CHECK(evrec_wait(&ev, "closed", NULL, 1, T(1000)) == 1);
  char *closed = evrec_first(&ev, "closed", NULL);
  /* SIGTERM is ignored: only the last step, SIGKILL, can have ended it */
  CHECKE(closed && strstr(closed, "\"requested\":true") && strstr(closed, "\"signal\":\"SIGKILL\""), closed);
  free(closed);
  lmcp_client_free(c);
  finish_recorder(&ev);
  if (spid > 0 && !pid_reaped((pid_t)spid)) kill((pid_t)spid, SIGKILL);

  /* free without close reaps the server (and its group) in the background */
  temp_path(pidfile, sizeof pidfile, "grandchild.pid");
  snprintf(args, sizeof args, "\"-grandchild\",\"-pidfile\",\"%s\"", pidfile);
  c = start_client(fixture_config(cfg, sizeof cfg, args, NULL, "\"timeouts\":{\"close_grace_ms\":200}"),
                   NULL);
  if (c == NULL) return;
  gpid = tool_int(c, "grandchild");
  spid = tool_int(c, "pid");
  lmcp_client_free(c);
  if (spid > 0)
    CHECKM(wait_pid_reaped((pid_t)spid, T(3000)), NULL, "server %lld not reaped after free", spid);
  if (gpid > 0) CHECKM(wait_pid_gone((pid_t)gpid, T(3000)), NULL, "grandchild %lld survives free", gpid);
  if (gpid > 0 && !pid_gone((pid_t)gpid)) kill((pid_t)gpid, SIGKILL);
}

/* A server that double-forks a daemon calling setsid (issue 31): the kill
 * of the server's process group misses it, so only the sandbox helper's
 * reaper ends it, on close, on free without close, and when a host is
 * freed. */
void test_close_kills_daemon(void) {
  char cfg[2048], pidfile[256], args[400];
  for (int how = 0; how < 3; how++) {
    temp_path(pidfile, sizeof pidfile, "daemon.pid");
    snprintf(args, sizeof args, "\"-daemon\",\"-pidfile\",\"%s\"", pidfile);
    long long dpid = 0;
    char *err = NULL;
    if (how < 2) {
      lmcp_client *c = start_client(
          fixture_config(cfg, sizeof cfg, args, NULL, "\"timeouts\":{\"close_grace_ms\":200}"), NULL);
      if (c == NULL) return;
      char *pf = read_file(pidfile, NULL); /* written before the server answers */
      dpid = pf ? atoll(pf) : 0;
      free(pf);
      CHECK(dpid > 0 && kill((pid_t)dpid, 0) == 0);
      if (how == 0) {
        CHECK_ST(lmcp_client_close(c, T(8000), &err), LMCP_OK, err);
        lmcp_free(err);
      }
      lmcp_client_free(c);
    } else {
      snprintf(cfg, sizeof cfg,
               "{\"defaults\":{\"timeouts\":{\"close_grace_ms\":200}},\"mcpServers\":{\"d\":{\"command\":\"%"
               "s\",\"args\":[%s]}}}",
               fixture_path(), args);
      lmcp_host *h = NULL;
      CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
      if (h == NULL) return;
      CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
      CHECK_ST(lmcp_host_wait_ready(h, T(10000), &err), LMCP_OK, err);
      lmcp_free(err);
      char *pf = read_file(pidfile, NULL);
      dpid = pf ? atoll(pf) : 0;
      free(pf);
      CHECK(dpid > 0 && kill((pid_t)dpid, 0) == 0);
      lmcp_host_free(h);
    }
    if (dpid > 0)
      CHECKM(wait_pid_gone((pid_t)dpid, T(5000)), NULL, "daemon %lld outlived its server (case %d)", dpid,
             how);
    if (dpid > 0 && !pid_gone((pid_t)dpid)) kill((pid_t)dpid, SIGKILL);
  }
}

void test_stderr_flood(void) {
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
  c = start_client(
      fixture_config(cfg, sizeof cfg, "\"-stderr-flood\",\"200000\"", "\"stderr\":\"discard\"", NULL), &ev);
  if (c) expect_echo(c, "discard");
  CHECK(evrec_count(&ev, "log", "\"source\":\"stderr\"") == 0);
  stop_client(c, &ev);
  evrec_init(&ev);
  c = start_client(
      fixture_config(cfg, sizeof cfg, "\"-stderr-flood\",\"20000\"", "\"stderr\":\"merge\"", NULL), &ev);
  if (c) expect_echo(c, "merge");
  stop_client(c, &ev);
}

void test_banner_lines(void) {
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

void test_over_long_line(void) {
  char cfg[2048];
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client(
      fixture_config(cfg, sizeof cfg, NULL, NULL, "\"limits\":{\"max_message_bytes\":65536}"), &ev);
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
  CHECK_ST(tool_sync(c, "large", "{\"bytes\":100000}", "{\"timeout_ms\":30000}", &res, &err), LMCP_E_PROTOCOL,
           err);
  CHECKE(err && strstr(err, "larger than the limit of 65536 bytes"), err);
  lmcp_free(res);
  lmcp_free(err);
  expect_echo(c, "still going");
  stop_client(c, &ev);

  /* an over-long line at startup, before the handshake */
  evrec_init(&ev);
  c = start_client(fixture_config(cfg, sizeof cfg, "\"-huge-line\",\"300000\"", NULL,
                                  "\"limits\":{\"max_message_bytes\":65536}"),
                   &ev);
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
void test_full_pipe_never_blocks(void) {
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
