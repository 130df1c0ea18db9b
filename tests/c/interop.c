/*
 * interop.c — C host tests of the interoperability corpus (issue 10): servers
 * that write JSON in other styles, and servers that send bytes that are not
 * UTF-8, seen through the C ABI.
 *
 *   styled_fixture   the fixture server writing every style at once (spaces,
 *                    CRLF line ends, members reversed, \u escapes everywhere,
 *                    integers as 1.0e0): handshake, a tool call, a server
 *                    request, all valid UTF-8 JSON for the host
 *   python_server    a real Python server (json.dumps defaults): handshake,
 *                    a tool call, and a result with bytes that are not UTF-8,
 *                    which reaches the host as U+FFFD in valid UTF-8 JSON
 *
 * Usage: lmcp_interop [name-filter...]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef LMCP_PYSERVER_PATH
#error "LMCP_PYSERVER_PATH must name tests/fixtures/pyserver/server.py"
#endif

/* Strict UTF-8 validation (RFC 3629: no overlongs, no surrogates, <= U+10FFFF). */
static int utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t len;
    unsigned int cp;
    if (c < 0x80) {
      i++;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else
      return 0;
    if (i + len > n) return 0;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    i += len;
  }
  return 1;
}

/* Answers every app request (roots) from inside the callback. */
static void answer_roots(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  lmcp_client *c = (lmcp_client *)ud;
  const char *roots = "{\"roots\":[{\"uri\":\"file:///w\xC3\xB6rk\",\"name\":\"work\"}]}";
  (void)kind;
  (void)json;
  (void)len;
  lmcp_client_respond(c, id, LMCP_OK, roots, strlen(roots), NULL);
}

static lmcp_client *start(const char *cfg) {
  return start_client_with(cfg, NULL, answer_roots, 10000);
}

static void stop(lmcp_client *c) {
  stop_client(c, NULL);
}

/* Calls a tool; the result must be valid UTF-8 JSON. Returns it (lmcp_free). */
static char *tool(lmcp_client *c, const char *name, const char *args) {
  char params[512];
  char *res = NULL, *err = NULL;
  size_t len = 0;
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", name, args);
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", params, strlen(params), NULL, 0, &res, &len, &err), LMCP_OK,
           err);
  lmcp_free(err);
  if (res == NULL) return NULL;
  CHECKE(json_valid(res, len), res);
  CHECKE(utf8_valid((const unsigned char *)res, len), res);
  return res;
}

static void styled_fixture(void) {
  char cfg[2048];
  fixture_config(cfg, sizeof cfg, "\"-style\",\"all\",\"-protocol\",\"2025-06-18\"", NULL,
                 "\"protocol\":{\"mode\":\"legacy\"},\"handlers\":{\"roots\":{}}");
  lmcp_client *c = start(cfg);
  if (c == NULL) return;
  char *info = NULL, *err = NULL;
  size_t ilen = 0;
  CHECK_ST(lmcp_client_server_info(c, &info, &ilen, &err), LMCP_OK, err);
  lmcp_free(err);
  CHECKE(info != NULL && json_valid(info, ilen) && utf8_valid((const unsigned char *)info, ilen), info);
  lmcp_free(info);
  /* Every non-ASCII character arrives \u-escaped: the text is in the JSON,
   * as the server spelled it; the host's JSON decoder reads it. */
  char *res = tool(c, "echo",
                   "{\"text\":\"gr\xC3\xBC\xC3\x9F"
                   "e\"}");
  CHECKE(res != NULL && strstr(res, "\\u00fc") != NULL, res);
  lmcp_free(res);
  res = tool(c, "roots", "{}"); /* letters escaped, punctuation not */
  CHECKE(res != NULL && strstr(res, ":///") != NULL, res);
  lmcp_free(res);
  stop(c);
}

static void python_server(void) {
  char cfg[2048];
  snprintf(cfg, sizeof cfg,
           "{\"transport\":{\"type\":\"stdio\",\"command\":\"python3\",\"args\":[\"%s\",\"--crlf\"]},"
           "\"protocol\":{\"mode\":\"legacy\"},\"handlers\":{\"roots\":{}}}",
           LMCP_PYSERVER_PATH);
  lmcp_client *c = start(cfg);
  if (c == NULL) return;
  char *res = tool(c, "echo", "{\"text\":\"hi there\"}");
  CHECKE(res != NULL && strstr(res, "\"hi there\"") != NULL, res);
  lmcp_free(res);
  /* Bytes that are not UTF-8 reach the host as U+FFFD (EF BF BD). */
  res = tool(c, "bad_utf8", "{}");
  CHECKE(res != NULL && strstr(res, "bad \xEF\xBF\xBD end") != NULL, res);
  lmcp_free(res);
  res = tool(c, "roots", "{}");
  CHECKE(res != NULL && strstr(res, "file:") != NULL, res);
  lmcp_free(res);
  stop(c);
}

static const h_test k_tests[] = {
    {"styled_fixture", styled_fixture},
    {"python_server", python_server},
};

int main(int argc, char **argv) {
  return h_main(argc, argv, k_tests, sizeof k_tests / sizeof k_tests[0], 30);
}
