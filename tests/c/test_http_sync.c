/*
 * test_http_sync.c — blocking calls over Streamable HTTP, whose exchange
 * the C thread makes itself in blocking system calls (onThread in
 * capi/syncwait.go, docs/abi-cost.md): results and errors, a timeout, a server request answered from another
 * thread while the call waits, a free while it waits, a stale handle, many threads at once (a client's and a
 * host's), and the multi-server host's blocking calls to an HTTP server. The HTTP server is a host of one
 * fixture server served by lmcp_server_serve_http, as in test_serve.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The served host and its URL, shared by the tests (started once). */
static lmcp_host *g_served;
static lmcp_server *g_server;
static char *g_url;

static int serve(void) {
  if (g_url != NULL) return 1;
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "{\"defaults\":{\"timeouts\":{\"ready_ms\":10000,\"close_grace_ms\":300},"
           "\"handlers\":{\"sampling\":{},\"elicitation\":{\"form\":true}}},"
           "\"mcpServers\":{\"fx\":{\"command\":\"%s\"}}}",
           fixture_path());
  g_served = start_host(cfg);
  if (g_served == NULL) return 0;
  char *err = NULL;
  CHECK_ST(lmcp_server_new(g_served, NULL, 0, &g_server, &err), LMCP_OK, err);
  CHECK_ST(lmcp_server_serve_http(g_server, "127.0.0.1:0", &g_url, &err), LMCP_OK, err);
  lmcp_free(err);
  return g_url != NULL;
}

static void unserve(void) {
  if (g_server != NULL) {
    lmcp_server_stop(g_server, T(5000), NULL);
    lmcp_server_free(g_server);
  }
  if (g_served != NULL) {
    lmcp_host_close(g_served, T(5000), NULL);
    lmcp_host_free(g_served);
  }
  lmcp_free(g_url);
}

/* A client of the served host, answering app requests with rec (NULL: no
 * handler), connected and ready; NULL after a failed check. */
static lmcp_client *http_client(hostrec_t *rec) {
  if (!serve()) return NULL;
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "{\"transport\":{\"type\":\"streamable_http\",\"url\":\"%s\"},%s"
           "\"protocol\":{\"mode\":\"legacy\"},\"timeouts\":{\"close_grace_ms\":300}}",
           g_url, rec != NULL ? "\"handlers\":{\"sampling\":{},\"elicitation\":{\"form\":true}}," : "");
  lmcp_client *c = new_client(cfg, NULL);
  if (c == NULL) return NULL;
  char *err = NULL;
  if (rec != NULL) {
    rec->client = c;
    CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, rec, hostrec_destroy, &err), LMCP_OK, err);
  }
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  CHECK_ST(lmcp_client_wait_ready(c, T(15000), &err), LMCP_OK, err);
  lmcp_free(err);
  return c;
}

/* echo calls fx__echo with text and checks the result. */
static void echo(lmcp_client *c, const char *text) {
  char params[256], *res = NULL, *err = NULL;
  size_t len = 0;
  snprintf(params, sizeof params, "{\"name\":\"fx__echo\",\"arguments\":{\"text\":\"%s\"}}", text);
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", params, strlen(params), NULL, 0, &res, &len, &err), LMCP_OK,
           err);
  CHECKM(res != NULL && strstr(res, text) != NULL && len == strlen(res), res, "the echo of %s", text);
  lmcp_free(res);
  lmcp_free(err);
}

/* Results, the length, and errors with and without err_out, call after
 * call on one thread. */
static void test_http_sync_results_and_errors(void) {
  lmcp_client *c = http_client(NULL);
  if (c == NULL) return;
  char text[32];
  for (int i = 0; i < 20; i++) {
    snprintf(text, sizeof text, "call %d", i);
    echo(c, text);
  }
  static const struct {
    const char *params;
    lmcp_status want;
  } bad[] = {
      {"{\"name\":\"fx__nope\",\"arguments\":{}}", LMCP_E_PROTOCOL},
      {"[1]", LMCP_E_INVALID_ARGUMENT},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *res = (char *)1, *err = NULL;
    CHECK_ST(lmcp_client_call_sync(c, "tools/call", bad[i].params, strlen(bad[i].params), NULL, 0, &res, NULL,
                                   &err),
             bad[i].want, err);
    CHECK(res == NULL);
    CHECK_ERR_JSON(err, bad[i].want);
    lmcp_free(err);
    /* Without err_out: the status alone. */
    res = (char *)1;
    CHECK_ST(lmcp_client_call_sync(c, "tools/call", bad[i].params, strlen(bad[i].params), NULL, 0, &res, NULL,
                                   NULL),
             bad[i].want, NULL);
    CHECK(res == NULL);
  }
  char *err = NULL;
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", "{}", 2, "{\"timeout_ms\":\"x\"}", 18, NULL, NULL, &err),
           LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err != NULL && strstr(err, "result_out"), err, "a NULL result_out is named");
  lmcp_free(err);
  err = NULL;
  char *res = NULL;
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", "{}", 2, "{\"timeout_ms\":\"x\"}", 18, &res, NULL, &err),
           LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err != NULL && strstr(err, "timeout_ms"), err, "a bad option is named");
  lmcp_free(err);
  echo(c, "after the errors");
  lmcp_client_close(c, T(5000), NULL);
  lmcp_client_free(c);
}

/* A call that outlives its timeout_ms fails with LMCP_E_TIMEOUT; the next
 * call on the same thread is answered. */
static void test_http_sync_timeout(void) {
  lmcp_client *c = http_client(NULL);
  if (c == NULL) return;
  echo(c, "before");
  const char *slow = "{\"name\":\"fx__slow\",\"arguments\":{\"ms\":20000,\"steps\":20}}";
  char *res = NULL, *err = NULL;
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", slow, strlen(slow), "{\"timeout_ms\":300}", 18, &res, NULL,
                                 &err),
           LMCP_E_TIMEOUT, err);
  CHECK(res == NULL);
  CHECK_ERR_JSON(err, LMCP_E_TIMEOUT);
  lmcp_free(err);
  echo(c, "after the timeout");
  lmcp_client_close(c, T(5000), NULL);
  lmcp_client_free(c);
}

typedef struct {
  lmcp_client *c;
  const char *params;
  lmcp_status st;
  char *res, *err;
} call_arg;

static void *call_thread(void *p) {
  call_arg *a = p;
  echo(a->c, "warm-up"); /* the thread's first call answered, the next one waits */
  a->st = lmcp_client_call_sync(a->c, "tools/call", a->params, strlen(a->params), NULL, 0, &a->res, NULL,
                                &a->err);
  return NULL;
}

#define ELICIT "{\"name\":\"fx__elicit\",\"arguments\":{\"message\":\"your name?\"}}"

/* The server asks for elicitation while a blocking call waits on another
 * thread; this thread answers, and the call returns the answer. */
static void test_http_sync_server_request_answered_elsewhere(void) {
  hostrec_t rec;
  hostrec_init(&rec, NULL); /* recorded, answered below */
  lmcp_client *c = http_client(&rec);
  if (c != NULL) {
    call_arg a = {.c = c, .params = ELICIT};
    pthread_t th;
    pthread_create(&th, NULL, call_thread, &a);
    if (hostrec_wait(&rec, 1, T(15000)) == 1) {
      CHECK(strcmp(rec.kinds[0], "elicitation") == 0);
      const char *answer = "{\"action\":\"accept\",\"content\":{\"name\":\"Grace\",\"age\":45}}";
      char *err = NULL;
      CHECK_ST(lmcp_client_respond(c, rec.ids[0], LMCP_OK, answer, strlen(answer), &err), LMCP_OK, err);
      lmcp_free(err);
    } else {
      CHECKM(0, NULL, "no elicitation request arrived");
    }
    pthread_join(th, NULL);
    CHECK_ST(a.st, LMCP_OK, a.err);
    CHECKM(a.res && strstr(a.res, "Grace") && strstr(a.res, "accept"), a.res, "the answer reached the tool");
    lmcp_free(a.res);
    lmcp_free(a.err);
    lmcp_client_close(c, T(5000), NULL);
    lmcp_client_free(c);
  }
  hostrec_free(&rec);
}

/* A free while a blocking call waits (for an answer nobody gives) ends the
 * call with LMCP_E_CANCELLED; a later call on the freed handle gets
 * LMCP_E_INVALID_HANDLE. */
static void test_http_sync_free_while_waiting(void) {
  hostrec_t rec;
  hostrec_init(&rec, NULL); /* never answered */
  lmcp_client *c = http_client(&rec);
  if (c == NULL) {
    hostrec_free(&rec);
    return;
  }
  call_arg a = {.c = c, .params = ELICIT};
  pthread_t th;
  pthread_create(&th, NULL, call_thread, &a);
  CHECKM(hostrec_wait(&rec, 1, T(15000)) == 1, NULL, "the call is under way");
  lmcp_client_free(c);
  pthread_join(th, NULL);
  CHECK_ST(a.st, LMCP_E_CANCELLED, a.err);
  CHECK(a.res == NULL);
  CHECK_ERR_JSON(a.err, LMCP_E_CANCELLED);
  lmcp_free(a.err);
  hostrec_free(&rec);

  /* The same thread, the same (now freed) handle. */
  lmcp_client *d = http_client(NULL);
  if (d == NULL) return;
  echo(d, "d's first");
  lmcp_client_free(d);
  char *res = NULL, *err = NULL;
  CHECK_ST(lmcp_client_call_sync(d, "tools/call", "{}", 2, NULL, 0, &res, NULL, &err), LMCP_E_INVALID_HANDLE,
           err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_HANDLE);
  lmcp_free(err);
}

enum { THREADS = 16, CALLS_PER_THREAD = 25 };

typedef struct {
  lmcp_client *c;
  lmcp_host *h; /* the host's calls instead, when set */
  int index, ok;
} many_arg;

static void *many_thread(void *p) {
  many_arg *a = p;
  for (int i = 0; i < CALLS_PER_THREAD; i++) {
    char params[128], want[32], *res = NULL;
    snprintf(want, sizeof want, "t%d-%d", a->index, i);
    snprintf(params, sizeof params, "{\"name\":\"fx__echo\",\"arguments\":{\"text\":\"%s\"}}", want);
    lmcp_status st;
    if (a->h == NULL) {
      st = lmcp_client_call_sync(a->c, "tools/call", params, strlen(params), NULL, 0, &res, NULL, NULL);
    } else if (i % 2) {
      st = lmcp_host_call_sync(a->h, "web", "tools/call", params, strlen(params), NULL, 0, &res, NULL, NULL);
    } else {
      char args[64];
      snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
      st = lmcp_host_call_tool_sync(a->h, "web__fx__echo", args, strlen(args), NULL, 0, &res, NULL, NULL);
    }
    if (st == LMCP_OK && res != NULL && strstr(res, want) != NULL) {
      a->ok++;
    }
    lmcp_free(res);
  }
  return NULL;
}

static void run_many(lmcp_client *c, lmcp_host *h) {
  pthread_t th[THREADS];
  many_arg a[THREADS];
  for (int i = 0; i < THREADS; i++) {
    a[i] = (many_arg){.c = c, .h = h, .index = i};
    pthread_create(&th[i], NULL, many_thread, &a[i]);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(th[i], NULL);
    CHECKM(a[i].ok == CALLS_PER_THREAD, NULL, "thread %d: %d of %d calls answered right", i, a[i].ok,
           CALLS_PER_THREAD);
  }
}

/* Many threads on one client, each making its exchange on its own thread
 * (past 64 at once in the process, through net/http): each gets its own
 * answer. */
static void test_http_sync_many_threads(void) {
  lmcp_client *c = http_client(NULL);
  if (c == NULL) return;
  run_many(c, NULL);
  lmcp_client_close(c, T(5000), NULL);
  lmcp_client_free(c);
}

/* The same through the multi-server host, both of its blocking forms. */
static void test_http_sync_host_many_threads(void) {
  if (!serve()) return;
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "{\"defaults\":{\"timeouts\":{\"ready_ms\":10000,\"close_grace_ms\":300}},"
           "\"mcpServers\":{\"web\":{\"type\":\"http\",\"url\":\"%s\"}}}",
           g_url);
  lmcp_host *h = start_host(cfg);
  if (h == NULL) return;
  run_many(NULL, h);
  lmcp_host_close(h, T(5000), NULL);
  lmcp_host_free(h);
}

/* The multi-server host's blocking calls to an HTTP server (the served
 * host, as server "web") beside a stdio one: both answer, call after call,
 * whichever route the thread took last. */
static void test_http_sync_host(void) {
  if (!serve()) return;
  char cfg[2048];
  snprintf(cfg, sizeof cfg,
           "{\"defaults\":{\"timeouts\":{\"ready_ms\":10000,\"close_grace_ms\":300}},"
           "\"mcpServers\":{\"web\":{\"type\":\"http\",\"url\":\"%s\"},\"local\":{\"command\":\"%s\"}}}",
           g_url, fixture_path());
  lmcp_host *h = start_host(cfg);
  if (h == NULL) return;
  for (int i = 0; i < 6; i++) {
    char args[64], want[32], *res = NULL, *err = NULL;
    snprintf(want, sizeof want, "host %d", i);
    snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
    /* web and local in turn: the route changes with every call */
    const char *tool = i % 2 ? "local__echo" : "web__fx__echo";
    CHECK_ST(lmcp_host_call_tool_sync(h, tool, args, strlen(args), NULL, 0, &res, NULL, &err), LMCP_OK, err);
    CHECKM(res && strstr(res, want), res, "%s answered", tool);
    lmcp_free(res);
    lmcp_free(err);
    res = err = NULL;
    char params[128];
    snprintf(params, sizeof params, "{\"name\":\"fx__echo\",\"arguments\":%s}", args);
    CHECK_ST(lmcp_host_call_sync(h, "web", "tools/call", params, strlen(params), NULL, 0, &res, NULL, &err),
             LMCP_OK, err);
    CHECKM(res && strstr(res, want), res, "web answered lmcp_host_call_sync");
    lmcp_free(res);
    lmcp_free(err);
  }
  char *res = NULL, *err = NULL;
  CHECK_ST(lmcp_host_call_sync(h, "nope", "tools/list", NULL, 0, NULL, 0, &res, NULL, &err), LMCP_E_NOT_FOUND,
           err);
  CHECK_ERR_JSON(err, LMCP_E_NOT_FOUND);
  lmcp_free(err);
  lmcp_host_close(h, T(5000), NULL);
  lmcp_host_free(h);
}

int main(int argc, char **argv) {
  static const h_test tests[] = {
      {"test_http_sync_results_and_errors", test_http_sync_results_and_errors},
      {"test_http_sync_timeout", test_http_sync_timeout},
      {"test_http_sync_server_request_answered_elsewhere", test_http_sync_server_request_answered_elsewhere},
      {"test_http_sync_free_while_waiting", test_http_sync_free_while_waiting},
      {"test_http_sync_many_threads", test_http_sync_many_threads},
      {"test_http_sync_host_many_threads", test_http_sync_host_many_threads},
      {"test_http_sync_host", test_http_sync_host},
  };
  int st = h_main(argc, argv, tests, sizeof tests / sizeof tests[0], 60);
  unserve();
  return st;
}
