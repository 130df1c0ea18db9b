/*
 * test_main.c — the runner of the C host tests: a host written in C links
 * liblemonmcp.so, drives the fixture MCP server (build/fixtures/mcpfixture)
 * over stdio and checks every promise of include/lemonmcp.h it can observe.
 * The tests live by area in test_*.c (declared in suite.h); this file holds
 * their registry, in the order they run, and the last check (everything the
 * suite started is gone).
 *
 * Usage: lmcp_ctest [BASELINE_FILE] [TEST_NAME_SUBSTRING...]
 *   BASELINE_FILE — the idle goroutine count written by lmcp_smoke ("-" for none)
 *   names         — run only the tests whose name contains one of them
 * Environment: LMCP_FIXTURE (fixture path), LMCP_TEST_TIME_SCALE (multiplies
 * the deadlines that only bound waits, for slow runs such as valgrind).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "suite.h"

static long long g_baseline = -1;       /* idle goroutines */
static long long g_smoke_baseline = -1; /* the same, measured by lmcp_smoke */

/* Runs last: every client, call and goroutine the suite started is gone. */
static void test_zz_diagnostics_back_to_baseline(void) {
  h_diag d = {-1, -1, -1};
  int64_t end = now_ms() + T(3000);
  for (;;) {
    CHECK(get_diag(&d));
    if (d.live_clients == 0 && d.pending_calls == 0 && d.goroutines <= g_baseline) break;
    if (now_ms() > end) break;
    sleep_ms(50);
  }
  printf("  final: goroutines=%lld (baseline %lld) live_clients=%lld pending_calls=%lld\n", d.goroutines,
         g_baseline, d.live_clients, d.pending_calls);
  CHECK(d.live_clients == 0);
  CHECK(d.pending_calls == 0);
  CHECKM(h_inline_completions == 0, NULL, "%d completions ran inside the initiating lmcp_client_call",
         h_inline_completions);
  CHECKM(d.goroutines <= g_baseline, NULL, "%lld goroutines left, baseline %lld", d.goroutines, g_baseline);
  if (g_smoke_baseline >= 0)
    CHECKM(g_baseline == g_smoke_baseline, NULL, "idle baseline %lld here, %lld in lmcp_smoke", g_baseline,
           g_smoke_baseline);
}

/* ------------------------------------------------------------------- main */

typedef struct {
  const char *name;
  void (*fn)(void);
  int deadline_s;
} test_case;

/* clang-format off */
#define TC(fn, s) {#fn, fn, s}
/* clang-format on */
static const test_case k_tests[] = {
    TC(test_status_strings_and_versions, 5),
    TC(test_happy_path, 20),
    TC(test_modern_era_happy_path, 20),
    TC(test_concurrent_calls, 20),
    TC(test_blocking_calls_from_many_threads, 30),
    TC(test_call_before_ready, 20),
    TC(test_wait_ready_timeout, 20),
    TC(test_initialize_error, 20),
    TC(test_call_timeout_sends_cancelled, 20),
    TC(test_cancel, 20),
    TC(test_two_step_blocking_call, 20),
    TC(test_progress, 20),
    TC(test_reset_timeout_on_progress, 20),
    TC(test_server_crash_mid_call, 20),
    TC(test_close_kills_grandchild, 30),
    TC(test_close_kills_daemon, 60),
    TC(test_stderr_flood, 40),
    TC(test_banner_lines, 20),
    TC(test_over_long_line, 20),
    TC(test_full_pipe_never_blocks, 40),
    TC(test_large_result, 20),
    TC(test_invalid_handles, 30),
    TC(test_app_requests_expire, 30),
    TC(test_callbacks_exactly_once, 30),
    TC(test_callbacks_reenter_library, 20),
    TC(test_notifications, 20),
    TC(test_telemetry_records, 20),
    TC(test_telemetry_bad_handles, 10),
    TC(test_config_errors, 20),
    TC(test_call_argument_errors, 20),
    TC(test_server_errors_and_gating, 20),
    TC(test_host_query_answers, 30),
    TC(test_host_query_bad_input, 30),
    TC(test_host_query_and_free, 30),
    TC(test_zz_diagnostics_back_to_baseline, 10),
};

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGPIPE, SIG_IGN);

  /* Settled, as lmcp_smoke takes it: a goroutine of the runtime's start-up
   * may still be ending at the first read. */
  h_diag d0;
  if (!get_idle_diag(&d0)) {
    fprintf(stderr, "lmcp_diagnostics failed\n");
    return 2;
  }
  g_baseline = d0.goroutines;
  printf("idle baseline: %lld goroutines\n", g_baseline);
  if (argc > 1 && strcmp(argv[1], "-") != 0) {
    char *b = read_file(argv[1], NULL);
    if (b != NULL) {
      long long smoke = atoll(b);
      free(b);
      g_smoke_baseline = smoke;
    }
  }
  for (size_t i = 0; i < sizeof k_tests / sizeof k_tests[0]; i++) {
    int selected = argc <= 2;
    for (int a = 2; a < argc; a++) selected |= strstr(k_tests[i].name, argv[a]) != NULL;
    if (selected) h_run_test(k_tests[i].name, k_tests[i].fn, k_tests[i].deadline_s);
  }
  temp_dir_cleanup();
  return h_finish();
}
