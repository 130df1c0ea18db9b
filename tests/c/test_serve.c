/*
 * test_serve.c — a C host serving itself as one MCP server (lmcp_server_*,
 * docs/gateway.md): a host of two fixture servers served over Streamable
 * HTTP, reached by an lmcp_client as the front client (the host's tools
 * under its names, a call routed, a fixture's sampling request relayed to
 * the front client and its answer back), stopped and freed; a stdio front
 * on a pipe pair whose input closes ends serving; every bad argument an
 * error naming it; no handle, goroutine or process left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  /* Serving has ended (a bounded wait: with 0 ms the library's timer may
   * win the race against its own end, a known flaw of lmcp_server_wait). */
  CHECK_ST(lmcp_server_wait(s, T(1000), &err), LMCP_OK, err);
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

static void test_serve_fds_ends_with_its_input(void) {
  lmcp_host *h = two_servers();
  if (h == NULL) return;
  int in[2], out[2];
  CHECK(pipe(in) == 0 && pipe(out) == 0);
  lmcp_server *s = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_server_new(h, "{}", 2, &s, &err), LMCP_OK, err);
  CHECK_ST(lmcp_server_serve_fds(s, in[0], out[1], &err), LMCP_OK, err);
  /* The library serves on its own duplicates: ours may close at once. */
  close(in[0]);
  close(out[1]);
  CHECK_ST(lmcp_server_wait(s, 10, &err), LMCP_E_TIMEOUT, err);
  lmcp_free(err);
  err = NULL;
  close(in[1]); /* the front client went away */
  CHECK_ST(lmcp_server_wait(s, T(10000), &err), LMCP_OK, err);
  char buf[16];
  CHECK(read(out[0], buf, sizeof buf) == 0); /* and the output was closed */
  close(out[0]);
  lmcp_server_free(s);
  stop_host(h);
}

static void test_bad_arguments(void) {
  lmcp_host *h = two_servers();
  if (h == NULL) return;
  lmcp_server *s = NULL;
  char *err = NULL, *url = NULL;
  static const struct {
    const char *options, *needle;
  } bad[] = {
      {"[]", "options"},
      {"{\"no_such\":1}", "no_such"},
      {"{\"max_sessions\":0}", "max_sessions"},
      {"{\"auth\":{\"bearer_env\":\"LMCP_TEST_UNSET_VARIABLE\"}}", "LMCP_TEST_UNSET_VARIABLE"},
      {"{\"auth\":{\"jwks_url\":\"http://as.example/jwks\",\"issuer\":\"x\",\"audience\":\"y\"}}",
       "jwks_url"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_ST(lmcp_server_new(h, bad[i].options, strlen(bad[i].options), &s, &err), LMCP_E_INVALID_ARGUMENT,
             err);
    CHECKM(err && strstr(err, bad[i].needle), err, "names %s", bad[i].needle);
    CHECK(s == NULL);
    lmcp_free(err);
    err = NULL;
  }
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
  /* Not loopback, no authentication: refused. */
  CHECK_ST(lmcp_server_serve_http(s, "0.0.0.0:0", &url, &err), LMCP_E_POLICY_DENIED, err);
  CHECKM(err && strstr(err, "0.0.0.0"), err, "names the address");
  CHECK(url == NULL);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_server_serve_http(s, NULL, &url, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  lmcp_server_free(s);
  stop_host(h);
}

int main(int argc, char **argv) {
  static const h_test tests[] = {
      {"test_serve_http", test_serve_http},
      {"test_serve_fds_ends_with_its_input", test_serve_fds_ends_with_its_input},
      {"test_bad_arguments", test_bad_arguments},
  };
  return h_main(argc, argv, tests, sizeof tests / sizeof tests[0], 60);
}
