/*
 * smoke.c — the release smoke test, run before the main suite.
 *
 * The library loads, lmcp_version/lmcp_abi_version match the header,
 * lmcp_features answers valid JSON listing "stdio", and lmcp_diagnostics
 * reports an idle library: no client, no pending call, and a goroutine count
 * that does not grow while we only query the build (the baseline). Nothing is
 * started by loading: we have no child process.
 *
 * Usage: lmcp_smoke [BASELINE_FILE] — writes the idle goroutine count there so
 * the main suite can compare its own baseline and its final count with it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Counts processes whose parent is us. */
static int count_children(void) {
  int n = 0;
  DIR *d = opendir("/proc");
  if (d == NULL) return -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int pid = atoi(e->d_name);
    if (pid <= 0) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    char *stat = read_file(path, NULL);
    if (stat == NULL) continue;
    char *rp = strrchr(stat, ')');
    char state;
    int ppid = 0;
    if (rp != NULL && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == (int)getpid()) n++;
    free(stat);
  }
  closedir(d);
  return n;
}

static const char *baseline_file;

static void test_smoke(void) {
  CHECK(strcmp(lmcp_version(), LMCP_VERSION_STRING) == 0);
  CHECK(lmcp_abi_version() == LMCP_ABI_VERSION);

  h_diag d0;
  CHECK(get_idle_diag(&d0));
  CHECK(d0.live_clients == 0);
  CHECK(d0.pending_calls == 0);

  char *json = NULL;
  size_t len = 0;
  CHECK_ST(lmcp_features(&json, &len), LMCP_OK, NULL);
  CHECK(json != NULL && len == strlen(json));
  CHECKE(json_valid(json, len), json);
  CHECKE(strstr(json, "\"transports\":[") != NULL && strstr(json, "\"stdio\"") != NULL, json);
  CHECKE(strstr(json, "\"version\":\"" LMCP_VERSION_STRING "\"") != NULL, json);
  long long abi = 0;
  CHECKE(json_get_int(json, "abi_version", &abi) && abi == LMCP_ABI_VERSION, json);
  CHECKE(strstr(json, "\"protocol_versions\":[") != NULL && strstr(json, "\"2026-07-28\"") != NULL, json);
  CHECKE(strstr(json, "\"protocol_modes\":[\"legacy\",\"auto\",\"modern\"]") != NULL, json);
  CHECKE(strstr(json, "\"legacy\":[\"tasks\",\"tasks_receiver\"]") != NULL, json);
  printf("  features: %s\n", json);
  lmcp_free(json);

  /* len_out may be NULL */
  json = NULL;
  CHECK_ST(lmcp_features(&json, NULL), LMCP_OK, NULL);
  CHECK(json != NULL);
  lmcp_free(json);
  CHECK_ST(lmcp_features(NULL, NULL), LMCP_E_INVALID_ARGUMENT, NULL);
  CHECK_ST(lmcp_diagnostics(NULL, NULL), LMCP_E_INVALID_ARGUMENT, NULL);
  lmcp_free(NULL); /* a no-op */

  /* The library's check of an answer: a date-time without seconds is
   * refused, with seconds taken; no handle needed. */
  static const char form[] = "{\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\","
                             "\"properties\":{\"at\":{\"type\":\"string\",\"format\":\"date-time\"}}}}";
  static const char hh_mm[] = "{\"action\":\"accept\",\"content\":{\"at\":\"2026-12-02T10:30Z\"}}";
  static const char hh_mm_ss[] = "{\"action\":\"accept\",\"content\":{\"at\":\"2026-12-02T10:30:00Z\"}}";
  char *verr = NULL;
  CHECK_ST(lmcp_validate_answer("elicitation", form, strlen(form), hh_mm, strlen(hh_mm), &verr),
           LMCP_E_INVALID_ARGUMENT, verr);
  CHECKE(verr != NULL && strstr(verr, "content.at is not a date-time") != NULL, verr);
  lmcp_free(verr);
  verr = NULL;
  CHECK_ST(lmcp_validate_answer("elicitation", form, strlen(form), hh_mm_ss, strlen(hh_mm_ss), &verr),
           LMCP_OK, verr);
  CHECK(verr == NULL);
  CHECK_ST(lmcp_validate_answer(NULL, NULL, 0, NULL, 0, NULL), LMCP_E_INVALID_ARGUMENT, NULL);

  /* One server of a config file, as the host reads it: a bad path or a
   * NULL output is refused with a message, and nothing starts. */
  char *cfg = NULL;
  char *cerr = NULL;
  CHECK_ST(lmcp_host_file_server("/nonexistent/lmcp-smoke.json", NULL, 0, NULL, &cfg, NULL, &cerr),
           LMCP_E_INVALID_ARGUMENT, cerr);
  CHECKE(cerr != NULL && strstr(cerr, "/nonexistent/lmcp-smoke.json: no such config file") != NULL, cerr);
  CHECK(cfg == NULL);
  lmcp_free(cerr);
  CHECK_ST(lmcp_host_file_server(NULL, NULL, 0, NULL, &cfg, NULL, NULL), LMCP_E_INVALID_ARGUMENT, NULL);
  CHECK_ST(lmcp_host_file_server("x.json", NULL, 0, NULL, NULL, NULL, NULL), LMCP_E_INVALID_ARGUMENT, NULL);

  /* Querying the build starts nothing. */
  h_diag d1;
  CHECK(get_idle_diag(&d1));
  CHECKM(d1.goroutines <= d0.goroutines, NULL, "goroutines %lld then %lld", d0.goroutines, d1.goroutines);
  CHECK(d1.live_clients == 0 && d1.pending_calls == 0);
  int kids = count_children();
  CHECKM(kids == 0, NULL, "%d child processes after loading", kids);
  printf("  idle baseline: goroutines=%lld live_clients=%lld pending_calls=%lld\n", d0.goroutines,
         d0.live_clients, d0.pending_calls);

  if (baseline_file != NULL) {
    FILE *f = fopen(baseline_file, "w");
    CHECK(f != NULL);
    if (f != NULL) {
      fprintf(f, "%lld\n", d0.goroutines);
      fclose(f);
    }
  }
}

/* LMCP_SMOKE_CANARY=1: commit one heap overread and one leak of library
 * memory on purpose, so the memcheck target can prove that its exemptions
 * (Go heap range, suppressions) leave C memory fully checked. */
static void canary(void) {
  char *json = NULL;
  size_t len = 0;
  if (lmcp_features(&json, &len) != LMCP_OK) return;
  volatile char past_end = json[len + 1]; /* the block is len + 1 bytes */
  (void)past_end;
  json = NULL; /* leaked: definitely lost */
  printf("canary: overread and leak committed\n");
}

int main(int argc, char **argv) {
  baseline_file = argc > 1 ? argv[1] : NULL;
  if (getenv("LMCP_SMOKE_CANARY") != NULL) {
    canary();
    return 0;
  }
  RUN_TEST(test_smoke, 10);
  return h_finish();
}
