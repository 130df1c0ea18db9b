/*
 * suite.h — the tests of lmcp_ctest, declared by the file that holds them.
 * test_main.c runs them, in the order of its registry.
 */
#ifndef LMCP_TEST_SUITE_H
#define LMCP_TEST_SUITE_H

/* test_lifecycle.c */
void test_happy_path(void);
void test_modern_era_happy_path(void);
void test_call_before_ready(void);
void test_wait_ready_timeout(void);
void test_initialize_error(void);
void test_status_strings_and_versions(void);

/* test_calls.c */
void test_concurrent_calls(void);
void test_blocking_calls_from_many_threads(void);
void test_call_timeout_sends_cancelled(void);
void test_cancel(void);
void test_two_step_blocking_call(void);
void test_progress(void);
void test_reset_timeout_on_progress(void);
void test_large_result(void);
void test_server_errors_and_gating(void);

/* test_process.c */
void test_server_crash_mid_call(void);
void test_close_kills_grandchild(void);
void test_close_kills_daemon(void);
void test_stderr_flood(void);
void test_banner_lines(void);
void test_over_long_line(void);
void test_full_pipe_never_blocks(void);

/* test_callbacks.c */
void test_app_requests_expire(void);
void test_callbacks_exactly_once(void);
void test_callbacks_reenter_library(void);
void test_notifications(void);

/* test_bad_input.c */
void test_invalid_handles(void);
void test_config_errors(void);
void test_call_argument_errors(void);

/* test_telemetry.c */
void test_telemetry_records(void);
void test_telemetry_bad_handles(void);

/* test_host_query.c */
void test_host_query_answers(void);
void test_host_query_bad_input(void);
void test_host_query_and_free(void);

#endif
