/*
 * test_host_search.c — tool search and deferred exposure from C
 * (issue 22): lmcp_host_search_tools over a host of two fixture servers
 * (ranking, options, every bad input, a freed handle), and a host with
 * "deferred_tools": lmcp_host_list_tools offers the always-loaded tool and
 * search_tools, which lmcp_host_call_tool (blocking and asynchronous)
 * answers with the matching tools' definitions, callable by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static lmcp_host *start_search_host(const char *extra) {
  const char *fx = fixture_path();
  char cfg[2048];
  snprintf(cfg, sizeof cfg,
           "{\"defaults\":{\"timeouts\":{\"ready_ms\":5000,\"close_grace_ms\":300}},"
           "\"mcpServers\":{\"alpha\":{\"command\":\"%s\"},\"beta\":{\"command\":\"%s\",\"tools\":{\"deny\":["
           "\"pid\"]}}}%s}",
           fx, fx, extra);
  return start_host(cfg);
}

static void stop_host(lmcp_host *h) {
  lmcp_host_close(h, 5000, NULL);
  lmcp_host_free(h);
}

static void test_search_tools(void) {
  lmcp_host *h = start_search_host("");
  if (h == NULL) return;
  char *js = NULL, *err = NULL;
  size_t len = 0;

  /* Ranked, with name, server, score and the whole tool. */
  CHECK_ST(lmcp_host_search_tools(h, "process id", "{\"limit\":1}", 13, &js, &len, &err), LMCP_OK, err);
  CHECK(js != NULL && json_valid(js, len) && strlen(js) == len);
  CHECKM(js && strstr(js, "{\"results\":[{\"name\":\"alpha__pid\",\"server\":\"alpha\",\"score\":"), js,
         "alpha__pid first");
  CHECKM(js && strstr(js, "\"original_name\":\"pid\"") && count_substr(js, "\"name\":\"") == 2, js,
         "one result, whole tool");
  lmcp_free(js);
  js = NULL;

  /* Equal tools tie by name; the servers option keeps one server's. */
  CHECK_ST(lmcp_host_search_tools(h, "adds", NULL, 0, &js, NULL, &err), LMCP_OK, err);
  CHECKM(js && strstr(js, "alpha__add") && strstr(js, "beta__add") &&
             strstr(js, "alpha__add") < strstr(js, "beta__add"),
         js, "ties by name");
  lmcp_free(js);
  js = NULL;
  const char *only_beta = "{\"servers\":[\"beta\"]}";
  CHECK_ST(lmcp_host_search_tools(h, "adds", only_beta, strlen(only_beta), &js, NULL, &err), LMCP_OK, err);
  CHECKM(js && strstr(js, "beta__add") && !strstr(js, "alpha__"), js, "beta only");
  lmcp_free(js);
  js = NULL;

  /* A found name routes a call. */
  char *res = NULL;
  CHECK_ST(lmcp_host_call_tool_sync(h, "beta__add", "{\"a\":40,\"b\":2}", 14, NULL, 0, &res, NULL, &err),
           LMCP_OK, err);
  CHECKM(res && strstr(res, "42"), res, "beta__add");
  lmcp_free(res);

  /* Every bad input: a status and a message naming the problem. */
  static const struct {
    const char *query, *options;
    lmcp_status want;
    const char *needle;
  } bad[] = {
      {"", NULL, LMCP_E_INVALID_ARGUMENT, "query is empty"},
      {"the of", NULL, LMCP_E_INVALID_ARGUMENT, "no word to search for"},
      {"add", "{\"limit\":0}", LMCP_E_INVALID_ARGUMENT, "options.limit"},
      {"add", "{\"limit\":", LMCP_E_INVALID_ARGUMENT, "options: must be a JSON object"},
      {"add", "{\"servers\":[\"gamma\"]}", LMCP_E_NOT_FOUND, "gamma"},
      {"add", "{\"k\":1}", LMCP_E_INVALID_ARGUMENT, "options.k"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    js = (char *)0x1;
    const char *o = bad[i].options;
    CHECK_ST(lmcp_host_search_tools(h, bad[i].query, o, o ? strlen(o) : 0, &js, NULL, &err), bad[i].want,
             err);
    CHECK(js == NULL);
    CHECK_ERR_JSON(err, bad[i].want);
    CHECKM(err && strstr(err, bad[i].needle), err, "expected %s", bad[i].needle);
    lmcp_free(err);
    err = NULL;
  }
  CHECK_ST(lmcp_host_search_tools(h, NULL, NULL, 0, &js, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  CHECKM(err && strstr(err, "query is NULL"), err, "NULL query");
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_search_tools(h, "add", NULL, 0, NULL, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;

  stop_host(h);
  CHECK_ST(lmcp_host_search_tools(h, "add", NULL, 0, &js, NULL, &err), LMCP_E_INVALID_HANDLE, err);
  lmcp_free(err);
  CHECK_ST(lmcp_host_search_tools(NULL, "add", NULL, 0, &js, NULL, NULL), LMCP_E_INVALID_HANDLE, NULL);
}

static void test_deferred_tools(void) {
  lmcp_host *h =
      start_search_host(",\"deferred_tools\":{\"always_loaded\":[\"alpha__echo\"],\"max_results\":3}");
  if (h == NULL) return;
  char *js = NULL, *err = NULL;
  size_t len = 0;

  CHECK_ST(lmcp_host_list_tools(h, &js, &len, &err), LMCP_OK, err);
  CHECKM(js && count_substr(js, "\"inputSchema\"") == 2 && strstr(js, "\"name\":\"alpha__echo\"") &&
             strstr(js, "\"name\":\"search_tools\""),
         js, "the deferred list: alpha__echo and search_tools");
  lmcp_free(js);
  js = NULL;

  /* Blocking: the definitions, in structuredContent and as text. */
  const char *q = "{\"query\":\"process id\",\"limit\":1}";
  CHECK_ST(lmcp_host_call_tool_sync(h, "search_tools", q, strlen(q), NULL, 0, &js, &len, &err), LMCP_OK, err);
  CHECKM(js && strstr(js, "\"structuredContent\":{\"tools\":[{") && strstr(js, "alpha__pid") &&
             !strstr(js, "isError"),
         js, "search_tools result");
  lmcp_free(js);
  js = NULL;

  /* Asynchronous: done runs once, on a library thread. */
  donerec_t dr;
  donerec_init(&dr, 1);
  lmcp_call_id id = 0;
  const char *q2 = "{\"query\":\"adds\"}";
  h_in_call = 1;
  lmcp_status st =
      lmcp_host_call_tool(h, "search_tools", q2, strlen(q2), NULL, 0, done_cb, &dr.slots[0], &id, &err);
  h_in_call = 0;
  CHECK_ST(st, LMCP_OK, err);
  dr.slots[0].issued_call_id = id;
  CHECK(donerec_wait_all(&dr, 10000) == 1);
  CHECK(dr.slots[0].count == 1 && dr.slots[0].status == LMCP_OK && dr.slots[0].cb_call_id == id && id != 0);
  CHECK(!dr.slots[0].on_caller_thread);
  CHECKM(dr.slots[0].json && strstr(dr.slots[0].json, "alpha__add") && strstr(dr.slots[0].json, "beta__add"),
         dr.slots[0].json, "both add tools");
  CHECK_ST(lmcp_host_cancel(h, id), LMCP_E_NOT_FOUND, NULL);
  donerec_free(&dr);

  /* A bad query is a tool error the model can correct. */
  const char *q3 = "{\"limit\":2}";
  CHECK_ST(lmcp_host_call_tool_sync(h, "search_tools", q3, strlen(q3), NULL, 0, &js, NULL, &err), LMCP_OK,
           err);
  CHECKM(js && strstr(js, "\"isError\":true") && strstr(js, "needs \\\"query\\\""), js, "isError result");
  lmcp_free(js);
  js = NULL;

  /* Every tool is still called by its name. */
  CHECK_ST(lmcp_host_call_tool_sync(h, "beta__add", "{\"a\":1,\"b\":2}", 13, NULL, 0, &js, NULL, &err),
           LMCP_OK, err);
  CHECKM(js && strstr(js, "3"), js, "beta__add");
  lmcp_free(js);
  stop_host(h);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  RUN_TEST(test_search_tools, 60);
  RUN_TEST(test_deferred_tools, 60);
  temp_dir_cleanup();
  return h_finish();
}
