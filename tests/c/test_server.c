/*
 * test_server.c — the gateway's C ABI (lmcp_server_*): a host of the
 * fixture served over a pair of descriptors (a front writes initialize and a
 * tool call as lines, reads the answers, closes its end: serving ends) and
 * over HTTP on loopback (the URL it reports, a refused non-loopback address,
 * stop and wait); option errors naming the field; handle misuse.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static lmcp_host *fixture_host(void) {
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "{\"tool_prefix\":\"never\",\"mcpServers\":{\"fx\":{\"command\":\"%s\","
           "\"timeouts\":{\"ready_ms\":10000,\"close_grace_ms\":300}}}}",
           fixture_path());
  return start_host(cfg);
}

/* Reads one line (without '\n') from fd into buf; 0 at EOF or error. */
static int read_line(int fd, char *buf, size_t n) {
  size_t used = 0;
  while (used + 1 < n) {
    char c;
    ssize_t got = read(fd, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    if (c == '\n') break;
    buf[used++] = c;
  }
  buf[used] = 0;
  return 1;
}

/* Reads lines until one holds needle (skipping notifications); 0 if none. */
static int read_until(int fd, const char *needle, char *buf, size_t n) {
  for (int i = 0; i < 32; i++) {
    if (!read_line(fd, buf, n)) return 0;
    if (strstr(buf, needle) != NULL) return 1;
  }
  return 0;
}

static void test_server_options_and_handles(void) {
  lmcp_host *h = fixture_host();
  if (h == NULL) return;
  lmcp_server *s = NULL;
  char *err = NULL;
  const char *bad = "{\"max_sessions\": -1}";
  CHECK_ST(lmcp_server_new(h, bad, strlen(bad), &s, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err != NULL && strstr(err, "max_sessions") != NULL, err, "the error names the field");
  CHECK(s == NULL);
  lmcp_free(err);
  err = NULL;
  const char *unknown = "{\"nope\": 1}";
  CHECK_ST(lmcp_server_new(h, unknown, strlen(unknown), &s, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_server_new(NULL, NULL, 0, &s, &err), LMCP_E_INVALID_HANDLE, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_server_new(h, NULL, 0, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_server_new(h, NULL, 0, &s, &err), LMCP_OK, err);
  CHECK_ST(lmcp_server_serve_fds(s, -1, 1, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  char *url = NULL;
  CHECK_ST(lmcp_server_serve_http(s, "0.0.0.0:0", &url, &err), LMCP_E_POLICY_DENIED, err);
  CHECKM(err != NULL && strstr(err, "loopback") != NULL, err, "the refusal says why");
  CHECK(url == NULL);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_server_serve_http(s, "not an address", &url, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  lmcp_server_free(s);
  CHECK_ST(lmcp_server_wait(s, 0, &err), LMCP_E_INVALID_HANDLE, err); /* stale handle */
  lmcp_free(err);
  lmcp_server_free(s); /* a second free is harmless */
  lmcp_server_free(NULL);
  CHECK_ST(lmcp_host_close(h, 5000, NULL), LMCP_OK, NULL);
  lmcp_host_free(h);
}

static void test_server_serve_fds(void) {
  lmcp_host *h = fixture_host();
  if (h == NULL) return;
  lmcp_server *s = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_server_new(h, NULL, 0, &s, &err), LMCP_OK, err);
  int to_gw[2], from_gw[2];
  CHECK(pipe(to_gw) == 0 && pipe(from_gw) == 0);
  CHECK_ST(lmcp_server_serve_fds(s, to_gw[0], from_gw[1], &err), LMCP_OK, err);
  /* The server works on duplicates: ours may be closed at once. */
  close(to_gw[0]);
  close(from_gw[1]);
  CHECK_ST(lmcp_server_serve_fds(s, 0, 1, &err), LMCP_E_INVALID_STATE, err); /* serves once */
  lmcp_free(err);
  err = NULL;
  const char *msgs = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                     "\"protocolVersion\":\"2025-11-25\","
                     "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}\n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
                     "call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
                     "\"from C\"}}}\n";
  CHECK(write(to_gw[1], msgs, strlen(msgs)) == (ssize_t)strlen(msgs));
  char line[8192];
  CHECKM(read_until(from_gw[0], "\"protocolVersion\":\"2025-11-25\"", line, sizeof line), NULL,
         "initialize answered");
  CHECKM(read_until(from_gw[0], "from C", line, sizeof line), NULL, "the tool call answered");
  CHECK_ST(lmcp_server_wait(s, 50, &err), LMCP_E_TIMEOUT, err); /* still serving */
  lmcp_free(err);
  err = NULL;
  close(to_gw[1]); /* the front closes its input: serving ends */
  CHECK_ST(lmcp_server_wait(s, T(10000), &err), LMCP_OK, err);
  CHECKM(!read_line(from_gw[0], line, sizeof line), NULL, "the output ends too");
  close(from_gw[0]);
  lmcp_server_free(s);
  CHECK_ST(lmcp_host_close(h, 5000, NULL), LMCP_OK, NULL);
  lmcp_host_free(h);
}

static void test_server_serve_http(void) {
  lmcp_host *h = fixture_host();
  if (h == NULL) return;
  lmcp_server *s = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_server_new(h, NULL, 0, &s, &err), LMCP_OK, err);
  char *url = NULL;
  CHECK_ST(lmcp_server_serve_http(s, "127.0.0.1:0", &url, &err), LMCP_OK, err);
  CHECKM(url != NULL && strncmp(url, "http://127.0.0.1:", 17) == 0 && strstr(url, "/mcp") != NULL, NULL,
         "url %s", url ? url : "(null)");
  lmcp_free(url);
  CHECK_ST(lmcp_server_wait(s, 20, &err), LMCP_E_TIMEOUT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_server_stop(s, T(5000), &err), LMCP_OK, err);
  CHECK_ST(lmcp_server_wait(s, 0, &err), LMCP_OK, err);
  CHECK_ST(lmcp_server_stop(s, T(5000), &err), LMCP_OK, err); /* idempotent */
  lmcp_server_free(s);
  CHECK_ST(lmcp_host_close(h, 5000, NULL), LMCP_OK, NULL);
  lmcp_host_free(h);
}

/* The application's ear on a served host: lmcp_server_set_event_handler
 * hears the host's events (its servers' stderr as "log") although the
 * gateway holds the host's handler; each destroy runs once, when the server
 * is freed, a replaced handler's too; a stale handle refuses and destroys. */
struct ear {
  pthread_mutex_t mu;
  int logs, destroys;
};

static void ear_event(void *ud, const char *kind, const char *json, size_t len) {
  struct ear *e = ud;
  (void)len;
  pthread_mutex_lock(&e->mu);
  if (strcmp(kind, "log") == 0 && strstr(json, "fixture stderr flood line") != NULL) e->logs++;
  pthread_mutex_unlock(&e->mu);
}

static void ear_destroy(void *ud) {
  struct ear *e = ud;
  pthread_mutex_lock(&e->mu);
  e->destroys++;
  pthread_mutex_unlock(&e->mu);
}

static int ear_logs(struct ear *e) {
  pthread_mutex_lock(&e->mu);
  int n = e->logs;
  pthread_mutex_unlock(&e->mu);
  return n;
}

static int ear_destroys(struct ear *e) {
  pthread_mutex_lock(&e->mu);
  int n = e->destroys;
  pthread_mutex_unlock(&e->mu);
  return n;
}

static void test_server_event_handler(void) {
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "{\"mcpServers\":{\"fx\":{\"command\":\"%s\",\"args\":[\"-stderr-flood\",\"200\"],"
           "\"timeouts\":{\"ready_ms\":10000,\"close_grace_ms\":300}}}}",
           fixture_path());
  lmcp_host *h = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
  if (h == NULL) return;
  lmcp_server *s = NULL;
  CHECK_ST(lmcp_server_new(h, NULL, 0, &s, &err), LMCP_OK, err);
  struct ear first = {PTHREAD_MUTEX_INITIALIZER, 0, 0}, ear = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
  CHECK_ST(lmcp_server_set_event_handler(s, ear_event, &first, ear_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_server_set_event_handler(s, ear_event, &ear, ear_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_wait_ready(h, T(15000), &err), LMCP_OK, err);
  for (int i = 0; i < 500 && ear_logs(&ear) == 0; i++) sleep_ms(10);
  CHECKM(ear_logs(&ear) > 0, NULL, "the server's stderr reached the handler on the server");
  CHECK(ear_logs(&first) == 0 && ear_destroys(&first) == 0); /* replaced: destroyed only at free */
  lmcp_server_free(s);
  /* Each destroy runs once no callback of the gateway's runs (at once
   * unless one is under way on the host's delivery thread). */
  for (int i = 0; i < 500 && ear_destroys(&ear) == 0; i++) sleep_ms(10);
  CHECK(ear_destroys(&first) == 1 && ear_destroys(&ear) == 1);
  struct ear late = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
  CHECK_ST(lmcp_server_set_event_handler(s, ear_event, &late, ear_destroy, &err), LMCP_E_INVALID_HANDLE, err);
  CHECK(late.destroys == 1);
  lmcp_free(err);
  CHECK_ST(lmcp_host_close(h, 5000, NULL), LMCP_OK, NULL);
  lmcp_host_free(h);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  RUN_TEST(test_server_options_and_handles, 60);
  RUN_TEST(test_server_serve_fds, 60);
  RUN_TEST(test_server_serve_http, 60);
  RUN_TEST(test_server_event_handler, 60);
  temp_dir_cleanup();
  return h_finish();
}
