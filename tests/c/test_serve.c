/*
 * test_serve.c — a C host serving itself as one MCP server (lmcp_server_*,
 * docs/gateway.md), as an application would: a host of two fixture servers
 * served over Streamable HTTP and reached by an lmcp_client as the front
 * client (the host's tools under its names, a call routed, a fixture's
 * sampling request relayed to the front client and its answer back), then
 * stopped and freed, the host working on. It also runs under memcheck
 * (make test-c-memcheck). The ABI's own surface (options, handles, a pair
 * of descriptors, refused addresses) is tests/c/test_server.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static lmcp_host *two_servers(void) {
  const char *fx = fixture_path();
  char cfg[2048];
  snprintf(cfg, sizeof cfg,
           "{\"defaults\":{\"timeouts\":{\"ready_ms\":10000,\"close_grace_ms\":300},"
           "\"handlers\":{\"sampling\":{},\"elicitation\":{\"form\":true},\"roots\":{}}},"
           "\"mcpServers\":{\"fx\":{\"command\":\"%s\"},\"fy\":{\"command\":\"%s\"}}}",
           fx, fx);
  return start_host(cfg);
}

static void stop_host(lmcp_host *h) {
  lmcp_host_close(h, T(5000), NULL);
  lmcp_host_free(h);
}

#define SAMPLED \
  "{\"role\":\"assistant\",\"model\":\"front-model\",\"content\":{\"type\":\"text\",\"text\":\"from C\"}}"

static void test_serve_http(void) {
  lmcp_host *h = two_servers();
  if (h == NULL) return;
  lmcp_server *s = NULL;
  char *err = NULL, *url = NULL;
  CHECK_ST(lmcp_server_new(h, NULL, 0, &s, &err), LMCP_OK, err);
  CHECK_ST(lmcp_server_serve_http(s, "127.0.0.1:0", &url, &err), LMCP_OK, err);
  CHECKM(url && strncmp(url, "http://127.0.0.1:", 17) == 0 && strstr(url, "/mcp"), url,
         "a loopback URL at /mcp");
  /* Still serving: a wait of 10 ms times out. */
  CHECK_ST(lmcp_server_wait(s, 10, &err), LMCP_E_TIMEOUT, err);
  lmcp_free(err);
  err = NULL;

  /* The front client: an lmcp_client on the URL that answers sampling. */
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "{\"transport\":{\"type\":\"streamable_http\",\"url\":\"%s\"},\"handlers\":{\"sampling\":{}},"
           "\"protocol\":{\"mode\":\"legacy\"}}",
           url ? url : "");
  hostrec_t rec;
  hostrec_init(&rec, SAMPLED);
  lmcp_client *c = new_client(cfg, NULL);
  if (c != NULL) {
    rec.client = c;
    CHECK_ST(lmcp_client_set_app_request_handler(c, hostrec_cb, &rec, hostrec_destroy, &err), LMCP_OK, err);
    CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
    CHECK_ST(lmcp_client_wait_ready(c, T(15000), &err), LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
    char *js = NULL;
    CHECK_ST(lmcp_client_call_sync(c, "tools/list", NULL, 0, NULL, 0, &js, NULL, &err), LMCP_OK, err);
    CHECKM(js && strstr(js, "\"fx__echo\"") && strstr(js, "\"fy__sample\""), js, "the host's names");
    lmcp_free(js);
    js = NULL;
    const char *echo = "{\"name\":\"fy__echo\",\"arguments\":{\"text\":\"through C\"}}";
    CHECK_ST(lmcp_client_call_sync(c, "tools/call", echo, strlen(echo), NULL, 0, &js, NULL, &err), LMCP_OK,
             err);
    CHECKM(js && strstr(js, "through C"), js, "a routed call");
    lmcp_free(js);
    js = NULL;
    const char *sample = "{\"name\":\"fx__sample\",\"arguments\":{\"prompt\":\"hi\",\"max_tokens\":3}}";
    CHECK_ST(lmcp_client_call_sync(c, "tools/call", sample, strlen(sample), NULL, 0, &js, NULL, &err),
             LMCP_OK, err);
    CHECKM(js && strstr(js, "from C") && strstr(js, "front-model"), js,
           "the front's answer reached the server");
    CHECK(hostrec_wait(&rec, 1, 0) == 1 && strcmp(rec.kinds[0], "sampling") == 0);
    CHECK_ST(rec.respond_status[0], LMCP_OK, NULL);
    lmcp_free(js);
    lmcp_client_close(c, T(5000), NULL);
    lmcp_client_free(c);
    CHECK(rec.destroys == 1);
  }
  hostrec_free(&rec);

  CHECK_ST(lmcp_server_stop(s, T(5000), &err), LMCP_OK, err);
  /* Serving has ended: a wait of 0 ms says so at once. */
  CHECK_ST(lmcp_server_wait(s, 0, &err), LMCP_OK, err);
  lmcp_server_free(s);
  lmcp_server_free(s); /* twice: harmless */
  CHECK_ST(lmcp_server_wait(s, 0, &err), LMCP_E_INVALID_HANDLE, err);
  lmcp_free(err);
  err = NULL;
  lmcp_free(url);
  /* The host is the application's again. */
  char *js = NULL;
  CHECK_ST(lmcp_host_call_tool_sync(h, "fx__echo", "{\"text\":\"mine\"}", 15, NULL, 0, &js, NULL, &err),
           LMCP_OK, err);
  CHECKM(js && strstr(js, "mine"), js, "the host calls again");
  lmcp_free(js);
  stop_host(h);
}

int main(int argc, char **argv) {
  static const h_test tests[] = {
      {"test_serve_http", test_serve_http},
  };
  return h_main(argc, argv, tests, sizeof tests / sizeof tests[0], 60);
}
