/*
 * test_host.c — the lmcp_host lifecycle from C: a host of fixture servers in
 * both protocol eras plus one that never starts; aggregated tools with
 * server__tool names; sync, async and per-server calls; a server request
 * answered through the host with the server's name; a crash and the restart
 * that follows (in-flight call fails once with LMCP_E_CLOSED, the server is
 * back, the old process is reaped); close, free, and every handle misuse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The app-request handler answers elicitations through lmcp_host_respond,
 * inside the callback, with the server's name. */
typedef struct {
  lmcp_host *host;
  pthread_mutex_t mu;
  int n;
  char server[32];
  lmcp_status respond_status;
  int destroys;
} answerer_t;

static void answer_cb(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  answerer_t *a = ud;
  char server[32] = "";
  (void)len;
  json_get_str(json, "server", server, sizeof server);
  char answer[128];
  snprintf(answer, sizeof answer, "{\"action\":\"accept\",\"content\":{\"name\":\"%s\"}}", server);
  lmcp_status st = strcmp(kind, "elicitation") == 0
                       ? lmcp_host_respond(a->host, id, LMCP_OK, answer, strlen(answer), NULL)
                       : lmcp_host_respond(a->host, id, LMCP_E_UNSUPPORTED, NULL, 0, NULL);
  pthread_mutex_lock(&a->mu);
  a->n++;
  snprintf(a->server, sizeof a->server, "%s", server);
  a->respond_status = st;
  pthread_mutex_unlock(&a->mu);
}

static void answer_destroy(void *ud) {
  answerer_t *a = ud;
  pthread_mutex_lock(&a->mu);
  a->destroys++;
  pthread_mutex_unlock(&a->mu);
}

static char *host_config(char *buf, size_t n) {
  const char *fx = fixture_path();
  /* Both eras in one host: alpha pins the legacy era (ping and server
   * requests over a session are checked on it), beta the modern one. */
  snprintf(buf, n,
           "{\"tool_prefix\":\"always\","
           "\"defaults\":{\"handlers\":{\"elicitation\":{}},\"timeouts\":{\"ready_ms\":5000,\"close_grace_"
           "ms\":300}},"
           "\"mcpServers\":{"
           "\"alpha\":{\"command\":\"%s\",\"protocol\":{\"mode\":\"legacy\"},"
           "\"restart\":{\"backoff_ms\":20,\"max_restarts\":3}},"
           "\"beta\":{\"command\":\"%s\",\"protocol\":{\"mode\":\"modern\"}},"
           "\"broken\":{\"command\":\"/nonexistent/lmcp-test-server\",\"restart\":{\"backoff_ms\":5000}},"
           "\"off\":{\"command\":\"%s\",\"enabled\":false}}}",
           fx, fx, fx);
  return buf;
}

/* Extracts the first text content of a tools/call result as an integer. */
static long long result_int(const char *json) {
  char text[64] = "";
  if (json == NULL || !json_get_str(json, "text", text, sizeof text)) return -1;
  return atoll(text);
}

static void test_host_config_errors(void) {
  static const struct {
    const char *config;
    const char *needle;
  } cases[] = {
      {"", "config: is empty"},
      {"{\"mcpServers\":{\"a b\":{\"command\":\"x\"}}}", "server name"},
      {"{\"mcpServers\":{\"a\":{\"command\":\"x\",\"url\":\"http://127.0.0.1:1\"}}}", "both"},
      {"{\"mcpServers\":{\"a\":{\"command\":\"x\",\"env\":{\"K\":\"${LMCP_SURELY_UNSET_VAR}\"}}}}",
       "config.mcpServers.a.env.K"},
      {"{\"mcpServers\":{\"a\":{\"command\":\"x\",\"timeouts\":{\"call_ms\":-1}}}}",
       "config.mcpServers.a.timeouts.call_ms"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lmcp_host *h = (lmcp_host *)0x1;
    char *err = NULL;
    CHECK_ST(lmcp_host_new(cases[i].config, strlen(cases[i].config), &h, &err), LMCP_E_INVALID_ARGUMENT, err);
    CHECK(h == NULL);
    CHECK_ERR_JSON(err, LMCP_E_INVALID_ARGUMENT);
    CHECKM(err && strstr(err, cases[i].needle), err, "expected %s", cases[i].needle);
    lmcp_free(err);
  }
  char *err = NULL;
  CHECK_ST(lmcp_host_new("{}", 2, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
}

/* The corpus of config files other applications write (tests/configs, whose
 * expected.json lists every server and warning; here: how many warnings and
 * one of them) loads through lmcp_host_new_file, and each warning names the
 * file. */
static void test_host_config_file_corpus(void) {
  static const struct {
    const char *path, *options;
    int warnings;
    const char *needle;
  } cases[] = {
      {"claude-desktop/claude_desktop_config.json", NULL, 2,
       "config.globalShortcut: ignored: Claude Desktop's keyboard shortcut"},
      {"claude-code/.mcp.json", NULL, 0, NULL},
      {"cursor/.cursor/mcp.json", NULL, 0, NULL},
      {"vscode/.vscode/mcp.json", "{\"inputs\":{\"github-token\":\"test-token\"}}", 2,
       "config.servers.fetch.sandbox: ignored"},
      {"cline/cline_mcp_settings.json", NULL, 2, "config.mcpServers.weather.autoApprove: ignored"},
      {"windsurf/mcp_config.json", NULL, 0, NULL},
      {"roo/mcp_settings.json", NULL, 1, "config.mcpServers.files.alwaysAllow: ignored"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", LMCP_CONFIGS_DIR, cases[i].path);
    lmcp_host *h = NULL;
    char *err = NULL;
    const char *opt = cases[i].options;
    CHECK_ST(lmcp_host_new_file(path, opt, opt ? strlen(opt) : 0, &h, &err), LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
    if (h == NULL) continue;
    char *js = NULL;
    size_t len = 0;
    CHECK_ST(lmcp_host_warnings(h, &js, &len, &err), LMCP_OK, err);
    CHECK(js != NULL && json_valid(js, len));
    int n = js ? count_substr(js, path) : -1;
    CHECKM(n == cases[i].warnings, js, "%s: %d warnings, want %d", cases[i].path, n, cases[i].warnings);
    if (cases[i].needle) CHECKM(js && strstr(js, cases[i].needle), js, "expected %s", cases[i].needle);
    lmcp_free(js);
    lmcp_host_free(h);
  }
  /* An input without a value, a malformed file, an unknown option. */
  char path[1024];
  snprintf(path, sizeof path, "%s/vscode/.vscode/mcp.json", LMCP_CONFIGS_DIR);
  lmcp_host *h = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_host_new_file(path, NULL, 0, &h, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err && strstr(err, "${input:github-token}") && strstr(err, "mcp.json"), err,
         "names the input and the file");
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_new_file(path, "{\"strct\":true}", 14, &h, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err && strstr(err, "did you mean \\\"strict\\\""), err, "an unknown option is named");
  lmcp_free(err);
  err = NULL;
  /* A refused server carries the "did you mean" of its misspelt member. */
  const char *typo = "{\"mcpServers\": {\"x\": {\"comand\": \"python3\"}}}";
  CHECK_ST(lmcp_host_new(typo, strlen(typo), &h, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err && strstr(err, "config.mcpServers.x.comand") && strstr(err, "did you mean \\\"command\\\""), err,
         "the typo is named with the error");
  lmcp_free(err);
  err = NULL;
  char bad[512];
  temp_path(bad, sizeof bad, "malformed.json");
  FILE *f = fopen(bad, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("{\"mcpServers\": {\n", f);
    fclose(f);
  }
  CHECK_ST(lmcp_host_new_file(bad, NULL, 0, &h, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err && strstr(err, bad) && strstr(err, "not valid JSON"), err, "a malformed file is named");
  CHECK(h == NULL);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_new_file(NULL, NULL, 0, &h, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  char *w = NULL;
  CHECK_ST(lmcp_host_warnings(NULL, &w, NULL, NULL), LMCP_E_INVALID_HANDLE, NULL);
  CHECK(w == NULL);
}

/* lmcp_host_servers says why a server failed: its first cause, exit status,
 * last stderr lines (escaped, configured secrets scrubbed); a server that
 * cannot start is not retried and a call to it fails at once. */
static void test_host_failure_fields(void) {
  const char *cfg =
      "{\"mcpServers\":{"
      "\"dying\":{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"echo \\\"Error: token $API_TOKEN refused\\\" "
      ">&2; exit 1\"],"
      "\"env\":{\"API_TOKEN\":\"tok-secret-42\"},\"restart\":{\"max_restarts\":1,\"backoff_ms\":20},"
      "\"timeouts\":{\"close_grace_ms\":200}},"
      "\"broken\":{\"command\":\"/nonexistent/lmcp-test-server\"}}}";
  lmcp_host *h = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
  if (h == NULL) return;
  CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
  char *js = NULL;
  int64_t deadline = now_ms() + 15000;
  for (;;) {
    lmcp_free(js);
    js = NULL;
    CHECK_ST(lmcp_host_servers(h, &js, NULL, &err), LMCP_OK, err);
    if ((js && strstr(js, "gave up")) || now_ms() > deadline) break;
    sleep_ms(20);
  }
  CHECKM(js && strstr(js, "\"exit_code\":1"), js, "the exit status");
  CHECKM(js && strstr(js, "\"stderr_tail\":[\"Error: token [redacted] refused\"]"), js, "stderr, scrubbed");
  CHECKM(js && !strstr(js, "tok-secret-42"), js, "no secret");
  CHECKM(js && strstr(js, "\"cause\":"), js, "the first cause");
  CHECKM(js && strstr(js, "executable not found: /nonexistent/lmcp-test-server (not retried"), js,
         "not retried");
  CHECKM(js && strstr(js, "\"final\":true"), js, "a final report");
  CHECKM(js && strstr(js, "\"summary\":\"server \\\"broken\\\" failed to start: executable not found"), js,
         "the summary");
  lmcp_free(js);
  /* Every enabled server failed: wait_ready says so, with the first one's
   * (by name) status and each one's reason. */
  CHECK_ST(lmcp_host_wait_ready(h, 15000, &err), LMCP_E_TRANSPORT, err);
  CHECKM(err && strstr(err, "every enabled server failed: broken: executable not found") &&
             strstr(err, "; dying: "),
         err, "names each failed server");
  lmcp_free(err);
  err = NULL;
  char *res = NULL;
  CHECK_ST(lmcp_host_call_tool_sync(h, "broken__echo", "{}", 2, NULL, 0, &res, NULL, &err),
           LMCP_E_INVALID_STATE, err);
  CHECKM(err && strstr(err, "executable not found"), err, "the call fails with the reason");
  CHECKM(err && strstr(err, "\"data\":{\"cause\":\"executable_not_found\"}"), err, "the cause, as data");
  lmcp_free(err);
  lmcp_free(res);
  err = NULL;
  CHECK_ST(lmcp_host_close(h, 5000, &err), LMCP_OK, err);
  lmcp_host_free(h);
}

/* The library's goroutines now (lmcp_diagnostics), or -1. */
static long long goroutines(void) {
  char *js = NULL;
  long long n = -1;
  if (lmcp_diagnostics(&js, NULL) == LMCP_OK && js != NULL) json_get_int(js, "goroutines", &n);
  lmcp_free(js);
  return n;
}

static void test_host_lifecycle(void) {
  long long g0 = goroutines();
  char cfg[2048];
  host_config(cfg, sizeof cfg);
  lmcp_host *h = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
  if (h == NULL) return;

  evrec_t ev;
  evrec_init(&ev);
  answerer_t ans = {.host = h};
  pthread_mutex_init(&ans.mu, NULL);
  CHECK_ST(lmcp_host_set_event_handler(h, evrec_cb, &ev, evrec_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_set_app_request_handler(h, answer_cb, &ans, answer_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_wait_ready(h, 10, &err), LMCP_E_INVALID_STATE, err);
  lmcp_free(err);
  err = NULL;

  CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_connect(h, &err), LMCP_E_INVALID_STATE, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_wait_ready(h, 15000, &err), LMCP_OK, err);

  /* servers(): two ready (one per era), one failed, one disabled. */
  char *js = NULL;
  size_t len = 0;
  CHECK_ST(lmcp_host_servers(h, &js, &len, &err), LMCP_OK, err);
  CHECK(js && json_valid(js, len));
  CHECKM(js && strstr(js, "\"alpha\":{") && strstr(js, "\"era\":\"legacy\""), js, "alpha legacy");
  CHECKM(js && strstr(js, "\"era\":\"modern\""), js, "beta modern");
  CHECKM(js && strstr(js, "\"state\":\"failed\"") && strstr(js, "lmcp-test-server"), js,
         "broken failed with its reason");
  CHECKM(js && strstr(js, "\"state\":\"disabled\""), js, "off disabled");
  lmcp_free(js);

  /* Aggregated tools, server__tool names, server members. */
  js = NULL;
  CHECK_ST(lmcp_host_list_tools(h, &js, &len, &err), LMCP_OK, err);
  CHECK(js && json_valid(js, len));
  CHECKM(js && strstr(js, "\"name\":\"alpha__echo\"") && strstr(js, "\"name\":\"beta__echo\""), js,
         "prefixed tools");
  CHECKM(js && strstr(js, "\"server\":\"beta\"") && strstr(js, "\"original_name\":\"echo\""), js,
         "server members");
  CHECK(js && strstr(js, "off__") == NULL);
  lmcp_free(js);
  js = NULL;
  CHECK_ST(lmcp_host_list_prompts(h, &js, &len, &err), LMCP_OK, err);
  CHECK(js && json_valid(js, len) && strstr(js, "\"server\":\"alpha\""));
  lmcp_free(js);
  js = NULL;
  CHECK_ST(lmcp_host_list_resources(h, &js, &len, &err), LMCP_OK, err);
  CHECK(js && json_valid(js, len) && strstr(js, "\"server\":\"beta\""));
  lmcp_free(js);

  /* Sync tool call, routed by name. */
  char *res = NULL;
  const char *args = "{\"text\":\"hello host\"}";
  CHECK_ST(lmcp_host_call_tool_sync(h, "beta__echo", args, strlen(args), NULL, 0, &res, &len, &err), LMCP_OK,
           err);
  CHECKM(res && strstr(res, "hello host"), res, "echo result");
  lmcp_free(res);

  /* Async tool call: done exactly once, with the host's call id. */
  donerec_t dr;
  donerec_init(&dr, 1);
  lmcp_call_id id = 0;
  const char *add = "{\"a\":20,\"b\":22}";
  CHECK_ST(lmcp_host_call_tool(h, "alpha__add", add, strlen(add), NULL, 0, done_cb, &dr.slots[0], &id, &err),
           LMCP_OK, err);
  dr.slots[0].issued_call_id = id;
  CHECK(donerec_wait_all(&dr, 10000) == 1);
  CHECK(dr.slots[0].count == 1 && dr.slots[0].status == LMCP_OK);
  CHECK(dr.slots[0].cb_call_id == id && id != 0);
  CHECKM(dr.slots[0].json && strstr(dr.slots[0].json, "42"), dr.slots[0].json, "add result");
  donerec_free(&dr);

  /* The generic per-server call. */
  res = NULL;
  CHECK_ST(lmcp_host_call_sync(h, "alpha", "ping", NULL, 0, NULL, 0, &res, &len, &err), LMCP_OK, err);
  CHECK(res && json_valid(res, len));
  lmcp_free(res);

  /* A server request reaches the host's handler with the server's name. */
  res = NULL;
  const char *q = "{\"message\":\"who?\"}";
  CHECK_ST(lmcp_host_call_tool_sync(h, "alpha__elicit", q, strlen(q), NULL, 0, &res, &len, &err), LMCP_OK,
           err);
  CHECKM(res && strstr(res, "alpha"), res, "the answer names the server");
  lmcp_free(res);
  pthread_mutex_lock(&ans.mu);
  CHECK(ans.n == 1 && strcmp(ans.server, "alpha") == 0 && ans.respond_status == LMCP_OK);
  pthread_mutex_unlock(&ans.mu);

  /* Misuse: unknown tool, server, request; disabled server. */
  res = NULL;
  CHECK_ST(lmcp_host_call_tool_sync(h, "gamma__echo", NULL, 0, NULL, 0, &res, NULL, &err), LMCP_E_NOT_FOUND,
           err);
  CHECK_ERR_JSON(err, LMCP_E_NOT_FOUND);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_call_sync(h, "off", "ping", NULL, 0, NULL, 0, &res, NULL, &err), LMCP_E_INVALID_STATE,
           err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_call_sync(h, "nosuch", "ping", NULL, 0, NULL, 0, &res, NULL, &err), LMCP_E_NOT_FOUND,
           err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_call_tool(h, "alpha__echo", NULL, 0, NULL, 0, NULL, NULL, NULL, &err),
           LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_respond(h, 9999, LMCP_OK, "{}", 2, &err), LMCP_E_NOT_FOUND, err);
  lmcp_free(err);
  err = NULL;
  CHECK(lmcp_host_cancel(h, 9999) == LMCP_E_NOT_FOUND);

  /* A crash: the call fails once with LMCP_E_CLOSED, the server restarts. */
  res = NULL;
  CHECK_ST(lmcp_host_call_tool_sync(h, "alpha__pid", NULL, 0, NULL, 0, &res, &len, &err), LMCP_OK, err);
  long long pid1 = result_int(res);
  lmcp_free(res);
  res = NULL;
  CHECK_ST(lmcp_host_call_tool_sync(h, "alpha__crash", NULL, 0, NULL, 0, &res, &len, &err), LMCP_E_CLOSED,
           err);
  CHECK_ERR_JSON(err, LMCP_E_CLOSED);
  lmcp_free(err);
  err = NULL;
  CHECK(evrec_wait(&ev, "restarting", "\"server\":\"alpha\"", 1, 10000) >= 1);
  CHECK(evrec_wait(&ev, "ready", "\"server\":\"alpha\"", 2, 10000) >= 2);
  res = NULL;
  CHECK_ST(lmcp_host_call_tool_sync(h, "alpha__pid", NULL, 0, NULL, 0, &res, &len, &err), LMCP_OK, err);
  long long pid2 = result_int(res);
  lmcp_free(res);
  CHECK(pid1 > 0 && pid2 > 0 && pid1 != pid2);
  if (pid1 > 0) CHECKM(wait_pid_reaped((pid_t)pid1, 3000), NULL, "crashed server %lld not reaped", pid1);
  js = NULL;
  CHECK_ST(lmcp_host_servers(h, &js, &len, &err), LMCP_OK, err);
  CHECKM(js && strstr(js, "\"restarts\":1"), js, "alpha restarted once");
  lmcp_free(js);
  CHECK(evrec_count(&ev, "list_changed", "\"server\":\"alpha\"") >= 1);

  /* Close: every process reaped; then free; then the handle is dead. */
  CHECK_ST(lmcp_host_close(h, 8000, &err), LMCP_OK, err);
  if (pid2 > 0) CHECKM(wait_pid_reaped((pid_t)pid2, 3000), NULL, "server %lld not reaped", pid2);
  CHECK_ST(lmcp_host_close(h, 8000, &err), LMCP_OK, err);
  lmcp_host_free(h);
  CHECK(evrec_wait_destroys(&ev, 1, 5000) == 1);
  lmcp_host_free(h);
  lmcp_host_free(NULL);
  CHECK_ST(lmcp_host_connect(h, &err), LMCP_E_INVALID_HANDLE, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_HANDLE);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_list_tools(h, &js, NULL, &err), LMCP_E_INVALID_HANDLE, err);
  lmcp_free(err);
  CHECK(lmcp_host_cancel(NULL, 1) == LMCP_E_INVALID_HANDLE);
  for (int i = 0; i < 50; i++) {
    pthread_mutex_lock(&ans.mu);
    int d = ans.destroys;
    pthread_mutex_unlock(&ans.mu);
    if (d == 1) break;
    sleep_ms(20);
  }
  CHECK(ans.destroys == 1);
  CHECK(ev.after_destroy == 0 && ev.max_inflight <= 1 && ev.bad_payloads == 0);
  /* Nothing of the host keeps running once it is closed and freed. */
  long long g = goroutines();
  for (int i = 0; i < 250 && g > g0 + 2; i++) {
    sleep_ms(20);
    g = goroutines();
  }
  CHECKM(g0 >= 0 && g <= g0 + 2, NULL, "goroutines: %lld before the host, %lld after it was freed", g0, g);
  evrec_free(&ev);
  pthread_mutex_destroy(&ans.mu);
}

/* The host's telemetry handler: a call's record names its server and the
 * tool's own name, and the call shows in the server's own duration
 * histograms (lmcp_host_servers); the server that cannot start (no such
 * executable: not retried) is a "failure" record; closing the host ends
 * each ready server's session with a "session" record, delivered even when
 * the host is freed at once; the destroy runs once when the host is freed. */
static void test_host_telemetry(void) {
  char cfg[2048];
  host_config(cfg, sizeof cfg);
  lmcp_host *h = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
  if (h == NULL) return;
  evrec_t tel;
  evrec_init(&tel);
  CHECK_ST(lmcp_host_set_telemetry_handler(h, evrec_cb, &tel, evrec_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_wait_ready(h, 15000, &err), LMCP_OK, err);
  char *res = NULL;
  size_t len = 0;
  const char *args = "{\"text\":\"traced\"}";
  CHECK_ST(lmcp_host_call_tool_sync(h, "beta__echo", args, strlen(args), NULL, 0, &res, &len, &err), LMCP_OK,
           err);
  lmcp_free(res);
  CHECK(evrec_wait(&tel, "call", "\"target\":\"echo\"", 1, 10000) >= 1);
  char *rec = evrec_first(&tel, "call", "\"target\":\"echo\"");
  CHECKM(rec && strstr(rec, "\"method\":\"tools/call\"") && strstr(rec, "\"server\":\"beta\"") &&
             strstr(rec, "\"protocol_version\":\"2026-07-28\""),
         rec, "beta's call record");
  free(rec);
  char *servers = NULL;
  size_t slen = 0;
  CHECK_ST(lmcp_host_servers(h, &servers, &slen, &err), LMCP_OK, err);
  const char *beta = servers ? strstr(servers, "\"beta\":{") : NULL;
  CHECKM(beta && json_valid(servers, slen) && strstr(beta, "\"durations\":{\"tools/call\":{\"count\":1,"),
         servers, "beta's duration histogram");
  lmcp_free(servers);
  CHECK(evrec_wait(&tel, "failure", "\"server\":\"broken\"", 1, 10000) >= 1);
  CHECK_ST(lmcp_host_close(h, 10000, &err), LMCP_OK, err);
  lmcp_host_free(h);
  rec = evrec_first(&tel, "session", "\"server\":\"beta\"");
  CHECKM(rec && strstr(rec, "\"duration_ns\":") && !strstr(rec, "\"error_type\""), rec,
         "beta's session record, closed");
  free(rec);
  CHECK(evrec_wait_destroys(&tel, 1, 10000) == 1);
  CHECK(tel.after_destroy == 0);
  evrec_free(&tel);
}

/* lmcp_host_tool_route: a prefixed name's route, known without starting
 * anything; NOT_FOUND where only the servers' lists would tell (an
 * unprefixed name, an unknown server, any prefix under "never"); misuse. */
static void test_host_tool_route(void) {
  static const char *cfgs[] = {
      "{\"start\":\"lazy\",\"mcpServers\":{\"a\":{\"command\":\"/nonexistent/lmcp-route\"}}}",
      "{\"start\":\"lazy\",\"tool_prefix\":\"never\",\"mcpServers\":{\"a\":{\"command\":\"/nonexistent/"
      "lmcp-route\"}}}",
  };
  for (int i = 0; i < 2; i++) {
    lmcp_host *h = NULL;
    char *err = NULL;
    CHECK_ST(lmcp_host_new(cfgs[i], strlen(cfgs[i]), &h, &err), LMCP_OK, err);
    if (h == NULL) return;
    CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
    char *js = NULL;
    size_t len = 0;
    lmcp_status want = i == 0 ? LMCP_OK : LMCP_E_NOT_FOUND;
    CHECK_ST(lmcp_host_tool_route(h, "a__my_tool", &js, &len, &err), want, err);
    if (i == 0) {
      CHECKM(js && json_valid(js, len) && strstr(js, "\"server\":\"a\"") &&
                 strstr(js, "\"original_name\":\"my_tool\""),
             js, "the prefix's route");
    }
    lmcp_free(js);
    lmcp_free(err);
    js = err = NULL;
    CHECK_ST(lmcp_host_tool_route(h, "my_tool", &js, &len, &err), LMCP_E_NOT_FOUND, err);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_host_tool_route(h, "b__x", &js, &len, &err), LMCP_E_NOT_FOUND, err);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_host_tool_route(h, NULL, &js, &len, &err), LMCP_E_INVALID_ARGUMENT, err);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_host_tool_route(h, "a__x", NULL, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_host_servers(h, &js, &len, &err), LMCP_OK, err);
    CHECKM(js && strstr(js, "\"state\":\"new\""), js, "a route starts nothing");
    lmcp_free(js);
    lmcp_host_free(h);
  }
  char *js = NULL;
  CHECK_ST(lmcp_host_tool_route(NULL, "a__x", &js, NULL, NULL), LMCP_E_INVALID_HANDLE, NULL);
  CHECK(js == NULL);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  RUN_TEST(test_host_config_errors, 30);
  RUN_TEST(test_host_lifecycle, 60);
  RUN_TEST(test_host_config_file_corpus, 30);
  RUN_TEST(test_host_failure_fields, 60);
  RUN_TEST(test_host_telemetry, 60);
  RUN_TEST(test_host_tool_route, 30);
  temp_dir_cleanup();
  return h_finish();
}
