/*
 * test_otel.c — trace context end to end through the C ABI (issue #21):
 * a C host that is in a span of its own (trace id T, span id S) passes
 * traceparent 00-T-S-01 as a call option; a server built on the official
 * Python SDK (tests/fixtures/pyotel/server.py, mcp 2.3.0 with the real
 * OpenTelemetry SDK, from `make otel-setup`) receives it in params._meta,
 * and the span its OpenTelemetry middleware exports is in trace T with
 * parent S; the C telemetry handler's record of the call carries the same
 * traceparent.
 *
 * Usage: lmcp_otel PYTHON SERVER_PY (the venv's python and the server).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define TRACE_ID "4bf92f3577b34da6a3ce929d0e0e4736"
#define SPAN_ID "00f067aa0ba902b7"
#define TRACEPARENT "00-" TRACE_ID "-" SPAN_ID "-01"

static const char *g_python, *g_server;

/* Calls a tool with this call's options; returns the result (lmcp_free). */
static char *tool(lmcp_client *c, const char *name, const char *options) {
  char params[256];
  char *res = NULL, *err = NULL;
  size_t len = 0;
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":{}}", name);
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", params, strlen(params), options,
                                 options ? strlen(options) : 0, &res, &len, &err),
           LMCP_OK, err);
  lmcp_free(err);
  return res;
}

static void trace_reaches_python_sdk_server(void) {
  char cfg[2048];
  snprintf(cfg, sizeof cfg,
           "{\"transport\":{\"type\":\"stdio\",\"command\":\"%s\",\"args\":[\"%s\"]},"
           "\"protocol\":{\"mode\":\"legacy\"}}",
           g_python, g_server);
  lmcp_client *c = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_client_new(cfg, strlen(cfg), &c, &err), LMCP_OK, err);
  lmcp_free(err);
  if (c == NULL) return;
  evrec_t tel;
  evrec_init(&tel);
  err = NULL;
  CHECK_ST(lmcp_client_set_telemetry_handler(c, evrec_cb, &tel, evrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(30000), &err), LMCP_OK, err);
  lmcp_free(err);

  char *res = tool(c, "whoami", "{\"trace\":{\"traceparent\":\"" TRACEPARENT "\",\"baggage\":\"tenant=c\"}}");
  CHECKE(res && strstr(res, TRACEPARENT) && strstr(res, "tenant=c"), res);
  lmcp_free(res);

  /* The server's span of that request: in trace T, its parent S. */
  res = tool(c, "spans", NULL);
  const char *span =
      res ? strstr(res, "{\"name\":\"tools/call whoami\",\"trace_id\":\"" TRACE_ID "\"") : NULL;
  const char *parent = span ? strstr(span, "\"parent_span_id\":\"" SPAN_ID "\"") : NULL;
  const char *attrs = span ? strstr(span, "\"attributes\"") : NULL;
  CHECKE(parent && attrs && parent < attrs, res);
  lmcp_free(res);

  CHECK(evrec_wait(&tel, "call", "\"target\":\"whoami\"", 1, T(10000)) == 1);
  char *rec = evrec_first(&tel, "call", "\"target\":\"whoami\"");
  CHECKE(rec && strstr(rec, "\"traceparent\":\"" TRACEPARENT "\"") && strstr(rec, "\"status\":0"), rec);
  free(rec);

  err = NULL;
  CHECK_ST(lmcp_client_close(c, 5000, &err), LMCP_OK, err);
  lmcp_free(err);
  lmcp_client_free(c);
  CHECK(evrec_wait_destroys(&tel, 1, T(5000)) == 1);
  evrec_free(&tel);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGPIPE, SIG_IGN);
  if (argc != 3) {
    fprintf(stderr, "usage: %s PYTHON SERVER_PY\n", argv[0]);
    return 2;
  }
  g_python = argv[1];
  g_server = argv[2];
  RUN_TEST(trace_reaches_python_sdk_server, 90);
  temp_dir_cleanup();
  return h_finish();
}
