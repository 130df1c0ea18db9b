/*
 * test_host_query.c — the host's queries without blocking
 * (lmcp_host_query, lmcp_host_query_queued): each query completes once, on
 * a library thread, with what its blocking form returns; every bad input
 * is refused with a message and no completion; a query in flight when the
 * host is freed completes with LMCP_E_CANCELLED before lmcp_host_free
 * returns; a completion may free its own host. In the main suite, so the
 * memcheck passes run it.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "suite.h"

/* A host of one fixture server (extra_args: more of its arguments, JSON
 * strings), connected and ready. */
static lmcp_host *start_query_host(const char *extra_args) {
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "{\"mcpServers\":{\"a\":{\"command\":\"%s\",\"args\":[%s],"
           "\"timeouts\":{\"ready_ms\":%d,\"close_grace_ms\":300}}}}",
           fixture_path(), extra_args, T(5000));
  return start_host(cfg);
}

static const char k_search_args[] = "{\"query\":\"adds two numbers\",\"limit\":2}";

/* The blocking form of query i of k_queries. */
static lmcp_status blocking_form(lmcp_host *h, int i, char **js) {
  switch (i) {
  case 0: return lmcp_host_list_tools(h, js, NULL, NULL);
  case 1: return lmcp_host_list_prompts(h, js, NULL, NULL);
  case 2: return lmcp_host_list_resources(h, js, NULL, NULL);
  default: return lmcp_host_search_tools(h, "adds two numbers", "{\"limit\":2}", 11, js, NULL, NULL);
  }
}

static const struct {
  lmcp_query query;
  const char *args;
} k_queries[] = {
    {LMCP_QUERY_LIST_TOOLS, NULL},
    {LMCP_QUERY_LIST_PROMPTS, NULL},
    {LMCP_QUERY_LIST_RESOURCES, NULL},
    {LMCP_QUERY_SEARCH_TOOLS, k_search_args},
};

void test_host_query_answers(void) {
  lmcp_host *h = start_query_host("");
  if (h == NULL) return;
  lmcp_queue *q = NULL;
  int fd = -1;
  char *err = NULL;
  CHECK_ST(lmcp_queue_new(&q, &fd, &err), LMCP_OK, err);
  for (int i = 0; i < (int)(sizeof k_queries / sizeof k_queries[0]); i++) {
    const char *args = k_queries[i].args;
    size_t alen = args ? strlen(args) : 0;
    char *want = NULL;
    CHECK_ST(blocking_form(h, i, &want), LMCP_OK, NULL);

    /* A done callback: once, on a library thread, the blocking form's JSON. */
    donerec_t dr;
    donerec_init(&dr, 1);
    lmcp_call_id id = 0;
    h_in_call = 1;
    lmcp_status st = lmcp_host_query(h, k_queries[i].query, args, alen, done_cb, &dr.slots[0], &id, &err);
    h_in_call = 0;
    CHECK_ST(st, LMCP_OK, err);
    dr.slots[0].issued_call_id = id;
    CHECKM(donerec_wait_all(&dr, T(10000)) == 1, NULL, "query %d completed", i);
    CHECK(dr.slots[0].count == 1 && dr.slots[0].status == LMCP_OK && dr.slots[0].cb_call_id == id && id != 0);
    CHECK(!dr.slots[0].on_caller_thread);
    CHECKM(want && dr.slots[0].json && strcmp(want, dr.slots[0].json) == 0, dr.slots[0].json,
           "query %d answers as its blocking form: %s", i, want ? want : "(null)");
    CHECK_ST(lmcp_host_cancel(h, id), LMCP_E_NOT_FOUND, NULL);
    donerec_free(&dr);

    /* A queue: one completion with the tag, the id and the same JSON. */
    lmcp_call_id qid = 0;
    CHECK_ST(lmcp_host_query_queued(h, k_queries[i].query, args, alen, q, 700 + i, &qid, &err), LMCP_OK, err);
    struct pollfd p = {fd, POLLIN, 0};
    CHECKM(poll(&p, 1, T(10000)) == 1, NULL, "query %d queued its completion", i);
    lmcp_completion *batch = NULL;
    size_t count = 0;
    CHECK_ST(lmcp_queue_pop(q, 0, &batch, &count, NULL), LMCP_OK, NULL);
    CHECK(count == 1);
    if (count == 1) {
      CHECK(batch[0].tag == (uint64_t)(700 + i) && batch[0].call_id == qid && batch[0].status == LMCP_OK);
      CHECKM(want && strcmp(batch[0].json, want) == 0 && strlen(batch[0].json) == batch[0].len, batch[0].json,
             "query %d's queued JSON", i);
    }
    lmcp_free(batch);
    lmcp_free(want);
  }
  lmcp_queue_free(q);
  lmcp_host_close(h, T(5000), NULL);
  lmcp_host_free(h);
}

void test_host_query_bad_input(void) {
  lmcp_host *h = start_query_host("");
  if (h == NULL) return;
  lmcp_queue *q = NULL;
  CHECK_ST(lmcp_queue_new(&q, NULL, NULL), LMCP_OK, NULL);
  static const struct {
    lmcp_query query;
    const char *args;
    lmcp_status want;
    const char *needle;
  } bad[] = {
      {7, NULL, LMCP_E_INVALID_ARGUMENT, "query 7"},
      {-1, NULL, LMCP_E_INVALID_ARGUMENT, "query -1"},
      {LMCP_QUERY_LIST_PROMPTS, "{}", LMCP_E_INVALID_ARGUMENT, "take no arguments"},
      {LMCP_QUERY_SEARCH_TOOLS, NULL, LMCP_E_INVALID_ARGUMENT, "args"},
      {LMCP_QUERY_SEARCH_TOOLS, "[1]", LMCP_E_INVALID_ARGUMENT, "args: must be a JSON object"},
      {LMCP_QUERY_SEARCH_TOOLS, "{\"limit\":2}", LMCP_E_INVALID_ARGUMENT, "args.query"},
      {LMCP_QUERY_SEARCH_TOOLS, "{\"query\":\"the of\"}", LMCP_E_INVALID_ARGUMENT, "no word to search for"},
      {LMCP_QUERY_SEARCH_TOOLS, "{\"query\":\"add\",\"servers\":[\"zz\"]}", LMCP_E_NOT_FOUND, "zz"},
  };
  donerec_t dr;
  donerec_init(&dr, 1);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *a = bad[i].args;
    size_t alen = a ? strlen(a) : 0;
    char *err = NULL;
    lmcp_call_id id = 99;
    CHECK_ST(lmcp_host_query(h, bad[i].query, a, alen, done_cb, &dr.slots[0], &id, &err), bad[i].want, err);
    CHECK_ERR_JSON(err, bad[i].want);
    CHECKM(err && strstr(err, bad[i].needle), err, "expected %s", bad[i].needle);
    CHECK(id == 99);
    lmcp_free(err);
    err = NULL;
    CHECK_ST(lmcp_host_query_queued(h, bad[i].query, a, alen, q, 1, NULL, &err), bad[i].want, err);
    CHECKM(err && strstr(err, bad[i].needle), err, "queued: expected %s", bad[i].needle);
    lmcp_free(err);
  }
  char *err = NULL;
  CHECK_ST(lmcp_host_query(h, LMCP_QUERY_LIST_TOOLS, NULL, 0, NULL, NULL, NULL, &err),
           LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err && strstr(err, "done is NULL"), err, "NULL done");
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_query_queued(h, LMCP_QUERY_LIST_TOOLS, NULL, 0, NULL, 1, NULL, &err),
           LMCP_E_INVALID_HANDLE, err);
  CHECKM(err && strstr(err, "queue"), err, "NULL queue");
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_query(NULL, LMCP_QUERY_LIST_TOOLS, NULL, 0, done_cb, &dr.slots[0], NULL, &err),
           LMCP_E_INVALID_HANDLE, err);
  lmcp_free(err);
  lmcp_host_close(h, T(5000), NULL);
  lmcp_host_free(h);
  CHECK_ST(lmcp_host_query(h, LMCP_QUERY_LIST_TOOLS, NULL, 0, done_cb, &dr.slots[0], NULL, NULL),
           LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(lmcp_host_query_queued(h, LMCP_QUERY_LIST_TOOLS, NULL, 0, q, 1, NULL, NULL), LMCP_E_INVALID_HANDLE,
           NULL);
  CHECKM(donerec_count_total(&dr) == 0, NULL, "a refused query never completes");
  lmcp_completion *batch = NULL;
  size_t count = 9;
  CHECK_ST(lmcp_queue_pop(q, 0, &batch, &count, NULL), LMCP_OK, NULL);
  CHECKM(count == 0 && batch == NULL, NULL, "a refused queued query queues nothing");
  donerec_free(&dr);
  lmcp_queue_free(q);
}

/* A completion that frees its own host. */
typedef struct {
  lmcp_host *h;
  int freed; /* lmcp_host_free returned inside the callback */
  lmcp_status status;
} self_free_t;

static void free_own_host(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  self_free_t *s = ud;
  (void)id;
  (void)json;
  (void)len;
  s->status = st;
  lmcp_host_free(s->h);
  __atomic_store_n(&s->freed, 1, __ATOMIC_SEQ_CST);
}

void test_host_query_and_free(void) {
  /* The server answers lists only after a minute: the query is in flight
   * when the host is freed, and free does not wait for the server. */
  lmcp_host *h = start_query_host("\"-list-delay-ms\",\"60000\"");
  if (h == NULL) return;
  donerec_t dr;
  donerec_init(&dr, 2);
  char *err = NULL;
  CHECK_ST(lmcp_host_query(h, LMCP_QUERY_LIST_TOOLS, NULL, 0, done_cb, &dr.slots[0], NULL, &err), LMCP_OK,
           err);
  CHECK_ST(lmcp_host_query(h, LMCP_QUERY_SEARCH_TOOLS, k_search_args, strlen(k_search_args), done_cb,
                           &dr.slots[1], NULL, &err),
           LMCP_OK, err);
  lmcp_host_free(h); /* the test's deadline catches a free that waits for the server */
  CHECKM(donerec_count(&dr, 0) == 1 && donerec_count(&dr, 1) == 1, NULL,
         "both completions ran before lmcp_host_free returned");
  for (int i = 0; i < 2; i++) {
    CHECKM(dr.slots[i].status == LMCP_E_CANCELLED, dr.slots[i].json, "query %d cancelled by free", i);
    CHECKM(dr.slots[i].json && strstr(dr.slots[i].json, "freed"), dr.slots[i].json,
           "says the host was freed");
  }
  donerec_free(&dr);

  /* A completion may free its own host. */
  self_free_t s = {start_query_host(""), 0, 0};
  if (s.h == NULL) return;
  CHECK_ST(lmcp_host_query(s.h, LMCP_QUERY_LIST_PROMPTS, NULL, 0, free_own_host, &s, NULL, &err), LMCP_OK,
           err);
  int64_t end = now_ms() + T(10000);
  while (!__atomic_load_n(&s.freed, __ATOMIC_SEQ_CST) && now_ms() < end) sleep_ms(5);
  CHECKM(__atomic_load_n(&s.freed, __ATOMIC_SEQ_CST), NULL, "lmcp_host_free returned inside the completion");
  CHECK(s.status == LMCP_OK);
}
