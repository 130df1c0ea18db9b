/*
 * test_telemetry.c — the telemetry handler (issue #21): a call's record
 * names its method, target and status and carries the call's trace
 * context, which also reaches the server in params._meta; measured calls
 * show in lmcp_diagnostics' duration histograms; a close ends the
 * session with a "session" record, delivered even when a free follows at
 * once; the handler's destroy runs once when the client is freed. A bad handle is refused, and the
 * destroy still runs.
 * Registered in test_main.c; shared set-up in harness.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "suite.h"

#define TRACEPARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

void test_telemetry_records(void) {
  char cfg[2048], log[256], args[400];
  temp_path(log, sizeof log, "telemetry.log");
  snprintf(args, sizeof args, "\"-log-file\",\"%s\"", log);
  lmcp_client *c = new_client(fixture_config(cfg, sizeof cfg, args, NULL, NULL), NULL);
  if (c == NULL) return;
  evrec_t tel;
  evrec_init(&tel);
  char *err = NULL;
  CHECK_ST(lmcp_client_set_telemetry_handler(c, evrec_cb, &tel, evrec_destroy, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_connect(c, &err), LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_client_wait_ready(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);

  char *res = NULL, *e = NULL;
  CHECK_ST(call_sync(c, "tools/call", "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}",
                     "{\"trace\":{\"traceparent\":\"" TRACEPARENT "\",\"baggage\":\"user=ada\"}}", &res, &e),
           LMCP_OK, e);
  lmcp_free(res);
  lmcp_free(e);
  res = e = NULL;
  CHECK_ST(call_sync(c, "tools/call", "{\"name\":\"fail\",\"arguments\":{}}", NULL, &res, &e), LMCP_OK, e);
  lmcp_free(res);
  lmcp_free(e);

  CHECK(evrec_wait(&tel, "call", "\"target\":\"echo\"", 1, T(5000)) == 1);
  char *rec = evrec_first(&tel, "call", "\"target\":\"echo\"");
  CHECKE(rec && strstr(rec, "\"method\":\"tools/call\"") &&
             strstr(rec, "\"traceparent\":\"" TRACEPARENT "\"") && strstr(rec, "\"status\":0") &&
             strstr(rec, "\"duration_ns\":") && !strstr(rec, "\"error_type\""),
         rec);
  free(rec);
  CHECK(evrec_wait(&tel, "call", "\"target\":\"fail\"", 1, T(5000)) == 1);
  rec = evrec_first(&tel, "call", "\"target\":\"fail\"");
  CHECKE(rec && strstr(rec, "\"error_type\":\"tool_error\""), rec);
  free(rec);

  /* the server received the trace context in params._meta */
  char *text = read_file(log, NULL);
  CHECKE(text && strstr(text, "\"traceparent\":\"" TRACEPARENT "\"") &&
             strstr(text, "\"baggage\":\"user=ada\""),
         text);
  free(text);

  char *diag = NULL;
  size_t dlen = 0;
  CHECK_ST(lmcp_diagnostics(&diag, &dlen), LMCP_OK, NULL);
  CHECKE(diag && json_valid(diag, dlen) && strstr(diag, "\"durations\":{\"bounds_ms\":[") &&
             strstr(diag, "\"tools/call\":{\"count\":"),
         diag);
  lmcp_free(diag);

  /* close, then free at once: the session's record still comes */
  CHECK_ST(lmcp_client_close(c, T(5000), &err), LMCP_OK, err);
  lmcp_free(err);
  lmcp_client_free(c);
  rec = evrec_first(&tel, "session", "");
  CHECKE(rec && strstr(rec, "\"duration_ns\":") && strstr(rec, "\"protocol_version\":") &&
             !strstr(rec, "\"error_type\""),
         rec);
  free(rec);
  CHECK(evrec_wait_destroys(&tel, 1, T(5000)) == 1);
  CHECK(tel.after_destroy == 0);
  evrec_free(&tel);
}

void test_telemetry_bad_handles(void) {
  char *err = NULL;
  destroy_count = 0;
  CHECK_ST(lmcp_client_set_telemetry_handler(NULL, never_event, NULL, count_destroy, &err),
           LMCP_E_INVALID_HANDLE, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_HANDLE);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_set_telemetry_handler(NULL, never_event, NULL, count_destroy, &err),
           LMCP_E_INVALID_HANDLE, err);
  CHECK_ERR_JSON(err, LMCP_E_INVALID_HANDLE);
  lmcp_free(err);
  CHECK(destroy_count == 2);
}
