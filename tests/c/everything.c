/*
 * everything.c — a C host against the reference MCP server
 * @modelcontextprotocol/server-everything, over stdio, legacy HTTP+SSE and
 * Streamable HTTP: tools (echo, get-sum, the long-running operation with
 * progress), resources with pagination, prompts, the server's notifications
 * (logging, resource updates), and its sampling and elicitation requests
 * answered by this host.
 *
 * Run it through tests/everything/everything.py, which installs the server,
 * starts its two HTTP flavours on 127.0.0.1 and sets:
 *   EVERYTHING_NODE, EVERYTHING_JS   node and dist/index.js (stdio: "node JS stdio")
 *   EVERYTHING_SSE_URL               http://127.0.0.1:PORT/sse
 *   EVERYTHING_HTTP_URL              http://127.0.0.1:PORT/mcp
 * Usage: lmcp_everything [TEST_NAME_SUBSTRING...]
 * Every test is bounded by the harness watchdog; the closing line is
 * "N passed, N failed".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* -------------------------------------------------------------- transport */

static const char *g_transport = "stdio"; /* the transport the current test uses */

static const char *env_or_null(const char *k) {
  const char *v = getenv(k);
  return v != NULL && *v ? v : NULL;
}

/* {"transport":{...}, "timeouts":{...}<,extra>} for g_transport (malloc'd),
 * or NULL when the environment does not name the server. */
static char *make_config(const char *extra) {
  char tr[2048];
  if (strcmp(g_transport, "stdio") == 0) {
    const char *node = env_or_null("EVERYTHING_NODE"), *js = env_or_null("EVERYTHING_JS");
    if (node == NULL || js == NULL) return NULL;
    snprintf(tr, sizeof tr, "{\"type\":\"stdio\",\"command\":\"%s\",\"args\":[\"%s\",\"stdio\"]}", node, js);
  } else {
    const char *url =
        env_or_null(strcmp(g_transport, "sse") == 0 ? "EVERYTHING_SSE_URL" : "EVERYTHING_HTTP_URL");
    if (url == NULL) return NULL;
    snprintf(tr, sizeof tr, "{\"type\":\"%s\",\"url\":\"%s\"}", g_transport, url);
  }
  size_t n = strlen(tr) + (extra ? strlen(extra) : 0) + 256;
  char *cfg = malloc(n);
  snprintf(cfg, n,
           "{\"transport\":%s,\"client_info\":{\"name\":\"lemonmcp-everything-c\"},"
           "\"timeouts\":{\"ready_ms\":20000,\"call_ms\":20000,\"close_grace_ms\":500}%s%s}",
           tr, extra ? "," : "", extra ? extra : "");
  return cfg;
}

/* ------------------------------------------------------------ app requests */

typedef struct {
  pthread_mutex_t mu;
  lmcp_client *client;
  int sampling, elicitation, roots, other;
  lmcp_status last_respond;
  char last_params[4096];
} host_t;

static void host_init(host_t *h) {
  memset(h, 0, sizeof *h);
  pthread_mutex_init(&h->mu, NULL);
}

/* Answers each kind as a host application would: a canned model reply, a
 * form with only the required field filled (the library adds the schema's
 * defaults), one root. */
static void host_cb(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  host_t *h = ud;
  const char *answer = NULL;
  pthread_mutex_lock(&h->mu);
  if (strcmp(kind, "sampling") == 0) {
    h->sampling++;
    answer = "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"from the C host\"},"
             "\"model\":\"c-host-model\",\"stopReason\":\"endTurn\"}";
  } else if (strcmp(kind, "elicitation") == 0) {
    h->elicitation++;
    answer = "{\"action\":\"accept\",\"content\":{\"name\":\"C Host\",\"check\":true}}";
  } else if (strcmp(kind, "roots") == 0) {
    h->roots++;
    answer = "{\"roots\":[{\"uri\":\"file:///tmp/lemon-c\",\"name\":\"c\"}]}";
  } else {
    h->other++;
  }
  snprintf(h->last_params, sizeof h->last_params, "%.*s", (int)(len < 4000 ? len : 4000), json);
  lmcp_client *c = h->client;
  pthread_mutex_unlock(&h->mu);
  lmcp_status st = answer != NULL ? lmcp_client_respond(c, id, LMCP_OK, answer, strlen(answer), NULL)
                                  : lmcp_client_respond(c, id, LMCP_E_UNSUPPORTED, NULL, 0, NULL);
  pthread_mutex_lock(&h->mu);
  h->last_respond = st;
  pthread_mutex_unlock(&h->mu);
}

static void host_destroy(void *ud) {
  (void)ud;
}

/* ----------------------------------------------------------------- helpers */

typedef struct {
  lmcp_client *c;
  evrec_t rec;
  host_t host;
} conn_t;

/* new + handlers + connect + wait_ready; 0 on failure (checks already failed). */
static int open_conn(conn_t *k, const char *extra, int with_host) {
  memset(k, 0, sizeof *k);
  evrec_init(&k->rec);
  host_init(&k->host);
  char *cfg = make_config(extra);
  CHECKM(cfg != NULL, NULL, "the environment names no %s server (run via tests/everything/everything.py)",
         g_transport);
  if (cfg == NULL) return 0;
  char *err = NULL;
  lmcp_status st = lmcp_client_new(cfg, strlen(cfg), &k->c, &err);
  CHECKM(st == LMCP_OK, err, "lmcp_client_new(%s) -> %s", g_transport, lmcp_status_string(st));
  lmcp_free(err);
  free(cfg);
  if (st != LMCP_OK) return 0;
  k->host.client = k->c;
  CHECK_ST(lmcp_client_set_event_handler(k->c, evrec_cb, &k->rec, evrec_destroy, NULL), LMCP_OK, NULL);
  if (with_host)
    CHECK_ST(lmcp_client_set_app_request_handler(k->c, host_cb, &k->host, host_destroy, NULL), LMCP_OK, NULL);
  err = NULL;
  st = lmcp_client_connect(k->c, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  if (st == LMCP_OK) {
    err = NULL;
    st = lmcp_client_wait_ready(k->c, 20000, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
  }
  return st == LMCP_OK;
}

static void close_conn(conn_t *k) {
  if (k->c != NULL) {
    char *err = NULL;
    lmcp_status st = lmcp_client_close(k->c, 10000, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
    CHECK(evrec_wait(&k->rec, "closed", NULL, 1, 5000) >= 1);
    lmcp_client_free(k->c);
    CHECK(evrec_wait_destroys(&k->rec, 1, 5000) == 1);
    k->c = NULL;
  }
  pthread_mutex_lock(&k->rec.mu);
  int overlap = k->rec.max_inflight, bad = k->rec.bad_payloads;
  pthread_mutex_unlock(&k->rec.mu);
  CHECKM(overlap <= 1, NULL, "events of one client overlapped");
  CHECKM(bad == 0, NULL, "%d event payloads were not valid JSON", bad);
  evrec_free(&k->rec);
  pthread_mutex_destroy(&k->host.mu);
}

/* A synchronous call; returns the result (malloc'd by the library) or NULL. */
static char *call(lmcp_client *c, const char *method, const char *params, const char *opts) {
  char *res = NULL, *err = NULL;
  lmcp_status st = lmcp_client_call_sync(c, method, params, params ? strlen(params) : 0, opts,
                                         opts ? strlen(opts) : 0, &res, NULL, &err);
  CHECKM(st == LMCP_OK, err, "%s %s -> %s", method, params ? params : "", lmcp_status_string(st));
  if (st == LMCP_OK) CHECKE(res != NULL && json_valid(res, strlen(res)), res);
  lmcp_free(err);
  return st == LMCP_OK ? res : NULL;
}

static char *tool(lmcp_client *c, const char *name, const char *args, const char *opts) {
  char params[2048];
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", name, args ? args : "{}");
  return call(c, "tools/call", params, opts);
}

/* Result contains needle (and is not an error result). */
static void expect_tool(lmcp_client *c, const char *name, const char *args, const char *needle) {
  char *r = tool(c, name, args, NULL);
  CHECKM(r != NULL && strstr(r, needle) != NULL, r, "%s %s: no %s", name, args ? args : "{}", needle);
  CHECKM(r == NULL || strstr(r, "\"isError\":true") == NULL, r, "%s reported an error", name);
  lmcp_free(r);
}

/* Waits until tools/list names tool (conditional tools are registered right
 * after initialization). */
static int wait_tool(lmcp_client *c, const char *name) {
  char needle[128];
  snprintf(needle, sizeof needle, "\"name\":\"%s\"", name);
  int64_t end = now_ms() + 5000;
  for (;;) {
    char *r = call(c, "tools/list", NULL, "{\"all_pages\":true}");
    int ok = r != NULL && strstr(r, needle) != NULL;
    lmcp_free(r);
    if (ok) return 1;
    if (now_ms() > end) break;
    sleep_ms(50);
  }
  CHECKM(0, NULL, "tool %s never listed", name);
  return 0;
}

/* ------------------------------------------------------------------- tests */

static void t_handshake(void) {
  conn_t k;
  if (open_conn(&k, NULL, 0)) {
    char *info = NULL, *err = NULL;
    CHECK_ST(lmcp_client_server_info(k.c, &info, NULL, &err), LMCP_OK, err);
    char want[64];
    snprintf(want, sizeof want, "\"transport\":\"%s\"", g_transport);
    CHECKE(info != NULL && strstr(info, "\"name\":\"mcp-servers/everything\"") != NULL, info);
    CHECKE(info != NULL && strstr(info, want) != NULL, info);
    CHECKE(info != NULL && strstr(info, "\"subscribe\":true") != NULL, info);
    lmcp_free(info);
    lmcp_free(err);
    CHECK(evrec_wait(&k.rec, "ready", "mcp-servers/everything", 1, 2000) == 1); /* delivered asynchronously */
    char *pong = call(k.c, "ping", NULL, NULL);
    lmcp_free(pong);
  }
  close_conn(&k);
}

static void t_tools(void) {
  conn_t k;
  if (open_conn(&k, NULL, 0)) {
    char *list = call(k.c, "tools/list", NULL, "{\"all_pages\":true}");
    const char *names[] = {"echo", "get-sum", "trigger-long-running-operation", "get-tiny-image"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      char needle[96];
      snprintf(needle, sizeof needle, "\"name\":\"%s\"", names[i]);
      CHECKM(list != NULL && strstr(list, needle) != NULL, NULL, "tools/list lacks %s", names[i]);
    }
    lmcp_free(list);
    expect_tool(k.c, "echo", "{\"message\":\"hello from C\"}", "Echo: hello from C");
    expect_tool(k.c, "get-sum", "{\"a\":2,\"b\":3}", "The sum of 2 and 3 is 5");
    expect_tool(k.c, "get-tiny-image", NULL, "\"mimeType\":\"image/png\"");
  }
  close_conn(&k);
}

static void t_progress(void) {
  conn_t k;
  if (open_conn(&k, NULL, 0)) {
    donerec_t dr;
    donerec_init(&dr, 1);
    const char *params =
        "{\"name\":\"trigger-long-running-operation\",\"arguments\":{\"duration\":1,\"steps\":4}}";
    const char *opts = "{\"progress\":true}";
    lmcp_call_id id = 0;
    char *err = NULL;
    h_in_call = 1;
    lmcp_status st = lmcp_client_call(k.c, "tools/call", params, strlen(params), opts, strlen(opts), done_cb,
                                      &dr.slots[0], &id, &err);
    h_in_call = 0;
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
    dr.slots[0].issued_call_id = id;
    if (st == LMCP_OK) {
      CHECK(donerec_wait_all(&dr, 15000) == 1);
      CHECK_ST(dr.slots[0].status, LMCP_OK, dr.slots[0].json);
      CHECKE(dr.slots[0].json != NULL && strstr(dr.slots[0].json, "Long running operation completed"),
             dr.slots[0].json);
      CHECK(dr.slots[0].cb_call_id == id);
      char needle[64];
      snprintf(needle, sizeof needle, "\"call_id\":%llu", (unsigned long long)id);
      CHECK(evrec_wait(&k.rec, "progress", needle, 4, 5000) == 4);
      CHECK(evrec_count(&k.rec, "progress", "\"total\":4") == 4);
      CHECK(evrec_index(&k.rec, "progress", "\"progress\":1") <
            evrec_index(&k.rec, "progress", "\"progress\":4"));
    }
    donerec_free(&dr);
    /* A timeout fails that call only. */
    char *res = NULL;
    err = NULL;
    const char *slow =
        "{\"name\":\"trigger-long-running-operation\",\"arguments\":{\"duration\":10,\"steps\":2}}";
    st = lmcp_client_call_sync(k.c, "tools/call", slow, strlen(slow), "{\"timeout_ms\":400}", 18, &res, NULL,
                               &err);
    /* the 10 s operation would otherwise succeed, and any other timeout
     * (the client's call_ms) would name its own value */
    CHECK_ST(st, LMCP_E_TIMEOUT, err);
    CHECKE(err && strstr(err, "within 400 ms"), err);
    lmcp_free(res);
    lmcp_free(err);
    expect_tool(k.c, "echo", "{\"message\":\"after timeout\"}", "Echo: after timeout");
  }
  close_conn(&k);
}

static void t_resources(void) {
  conn_t k;
  if (open_conn(&k, NULL, 0)) {
    char *all = call(k.c, "resources/list", NULL, "{\"all_pages\":true}");
    int n = all ? count_substr(all, "\"uri\":\"demo://resource/static/document/") : 0;
    CHECKM(n >= 7, all, "resources/list (all_pages): %d documents", n);
    CHECKE(all == NULL || strstr(all, "\"nextCursor\"") == NULL, all);
    /* One page at a time, following nextCursor: the same number of items. */
    int paged = 0, pages = 0;
    char cursor[512] = "";
    for (; pages < 100; pages++) {
      char params[640];
      if (cursor[0]) snprintf(params, sizeof params, "{\"cursor\":\"%s\"}", cursor);
      char *page = call(k.c, "resources/list", cursor[0] ? params : NULL, NULL);
      if (page == NULL) break;
      paged += count_substr(page, "\"uri\":\"demo://resource/static/document/");
      int more = json_get_str(page, "nextCursor", cursor, sizeof cursor);
      lmcp_free(page);
      if (!more) break;
    }
    CHECKM(paged == n, NULL, "paged %d items, all_pages %d", paged, n);
    lmcp_free(all);
    char *doc =
        call(k.c, "resources/read", "{\"uri\":\"demo://resource/static/document/features.md\"}", NULL);
    CHECKE(doc != NULL && strstr(doc, "## Tools") && strstr(doc, "\"mimeType\":\"text/markdown\""), doc);
    lmcp_free(doc);
    char *tpl = call(k.c, "resources/templates/list", NULL, "{\"all_pages\":true}");
    CHECKE(tpl != NULL && strstr(tpl, "demo://resource/dynamic/text/{resourceId}"), tpl);
    lmcp_free(tpl);
    char *dyn = call(k.c, "resources/read", "{\"uri\":\"demo://resource/dynamic/text/7\"}", NULL);
    CHECKE(dyn != NULL && strstr(dyn, "Resource 7: This is a plaintext resource"), dyn);
    lmcp_free(dyn);
  }
  close_conn(&k);
}

static void t_prompts(void) {
  conn_t k;
  if (open_conn(&k, NULL, 0)) {
    char *list = call(k.c, "prompts/list", NULL, "{\"all_pages\":true}");
    CHECKE(list != NULL && strstr(list, "\"simple-prompt\"") && strstr(list, "\"args-prompt\"") &&
               strstr(list, "\"resource-prompt\""),
           list);
    lmcp_free(list);
    char *p = call(k.c, "prompts/get", "{\"name\":\"args-prompt\",\"arguments\":{\"city\":\"Lyon\"}}", NULL);
    CHECKE(p != NULL && strstr(p, "Lyon"), p);
    lmcp_free(p);
    p = call(k.c, "prompts/get",
             "{\"name\":\"resource-prompt\",\"arguments\":{\"resourceType\":\"Blob\",\"resourceId\":\"3\"}}",
             NULL);
    CHECKE(p != NULL && strstr(p, "\"type\":\"resource\"") && strstr(p, "demo://resource/dynamic/blob/3"), p);
    lmcp_free(p);
    p = call(k.c, "completion/complete",
             "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"completable-prompt\"},"
             "\"argument\":{\"name\":\"department\",\"value\":\"M\"}}",
             NULL);
    CHECKE(p != NULL && strstr(p, "\"Marketing\""), p);
    lmcp_free(p);
  }
  close_conn(&k);
}

static void t_notifications(void) {
  conn_t k;
  if (open_conn(&k, NULL, 0)) {
    lmcp_free(call(k.c, "logging/setLevel", "{\"level\":\"debug\"}", NULL));
    expect_tool(k.c, "toggle-simulated-logging", NULL, "Started simulated");
    CHECKM(evrec_wait(&k.rec, "notification", "\"notifications/message\"", 1, 12000) >= 1, NULL,
           "no simulated log message");
    expect_tool(k.c, "toggle-simulated-logging", NULL, "Stopped simulated");

    const char *uri = "{\"uri\":\"demo://resource/static/document/startup.md\"}";
    lmcp_free(call(k.c, "resources/subscribe", uri, NULL));
    expect_tool(k.c, "toggle-subscriber-updates", NULL, "Started simulated resource updated");
    CHECKM(evrec_wait(&k.rec, "notification", "notifications/resources/updated", 1, 12000) >= 1, NULL,
           "no notifications/resources/updated");
    CHECK(evrec_count(&k.rec, "notification", "demo://resource/static/document/startup.md") >= 1);
    expect_tool(k.c, "toggle-subscriber-updates", NULL, "Stopped simulated resource updates");
    lmcp_free(call(k.c, "resources/unsubscribe", uri, NULL));
    CHECK(evrec_count(&k.rec, "notification", "Received Subscribe Resource request") >= 1);
  }
  close_conn(&k);
}

static void t_sampling(void) {
  conn_t k;
  if (open_conn(&k, "\"handlers\":{\"sampling\":{},\"roots\":{\"list_changed\":true}}", 1)) {
    if (wait_tool(k.c, "trigger-sampling-request")) {
      expect_tool(k.c, "trigger-sampling-request", "{\"prompt\":\"Say hi\",\"maxTokens\":32}",
                  "from the C host");
      pthread_mutex_lock(&k.host.mu);
      int n = k.host.sampling;
      lmcp_status st = k.host.last_respond;
      pthread_mutex_unlock(&k.host.mu);
      CHECK(n == 1);
      CHECK_ST(st, LMCP_OK, NULL);
    }
    /* roots/list is asked shortly after initialization */
    CHECKM(evrec_wait(&k.rec, "notification", "Roots updated: 1", 1, 5000) == 1, NULL, "roots not synced");
    expect_tool(k.c, "get-roots-list", NULL, "file:///tmp/lemon-c");
  }
  close_conn(&k);
}

static void t_sampling_denied(void) {
  conn_t k;
  if (open_conn(&k, "\"sampling_policy\":{\"mode\":\"deny\"}", 0)) {
    if (wait_tool(k.c, "trigger-sampling-request")) {
      char *r = tool(k.c, "trigger-sampling-request", "{\"prompt\":\"no\"}", NULL);
      CHECKE(r == NULL || strstr(r, "\"isError\":true"), r);
      lmcp_free(r);
      CHECK(evrec_wait(&k.rec, "sampling_denied", "sampling_disabled", 1, 5000) == 1);
    }
  }
  close_conn(&k);
}

static void t_elicitation(void) {
  conn_t k;
  if (open_conn(&k, "\"handlers\":{\"elicitation\":{\"form\":true}}", 1)) {
    if (wait_tool(k.c, "trigger-elicitation-request")) {
      char *r = tool(k.c, "trigger-elicitation-request", NULL, NULL);
      CHECKE(r != NULL && strstr(r, "- Name: C Host"), r);
      /* schema defaults the host left out, filled by the library */
      CHECKE(r != NULL && strstr(r, "- Favorite Integer: 42") && strstr(r, "It was a dark and stormy night."),
             r);
      lmcp_free(r);
      pthread_mutex_lock(&k.host.mu);
      int n = k.host.elicitation;
      int has_schema = strstr(k.host.last_params, "\"requestedSchema\"") != NULL;
      pthread_mutex_unlock(&k.host.mu);
      CHECK(n == 1);
      CHECK(has_schema);
    }
  }
  close_conn(&k);
}

/* ------------------------------------------------------------------ main */

typedef struct {
  const char *name;
  void (*fn)(void);
} test_t;

static const test_t k_tests[] = {
    {"handshake", t_handshake},     {"tools", t_tools},
    {"progress", t_progress},       {"resources", t_resources},
    {"prompts", t_prompts},         {"notifications", t_notifications},
    {"sampling", t_sampling},       {"sampling_denied", t_sampling_denied},
    {"elicitation", t_elicitation},
};

static const char *const k_transports[] = {"stdio", "sse", "streamable_http"};

static int selected(const char *name, int argc, char **argv) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(name, argv[i]) != NULL) return 1;
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (size_t t = 0; t < sizeof k_transports / sizeof k_transports[0]; t++) {
    g_transport = k_transports[t];
    for (size_t i = 0; i < sizeof k_tests / sizeof k_tests[0]; i++) {
      char name[96];
      snprintf(name, sizeof name, "%s/%s", g_transport, k_tests[i].name);
      if (!selected(name, argc, argv)) continue;
      h_run_test(strdup(name), k_tests[i].fn, 40);
    }
  }
  return h_finish();
}
