/*
 * harness.h — the small test harness shared by the C host tests.
 *
 * CHECK counts and reports failed assertions with file:line and, when given,
 * the library's error JSON. Tests are plain functions run by RUN_TEST, which
 * prints one line per test and keeps the pass/fail tally behind the final
 * "N passed, N failed" line. A watchdog thread bounds every test: a hang
 * (a library bug) fails the suite instead of blocking it forever.
 *
 * Recorders:
 *   evrec_t   — an event handler's user_data: records every event (kind and
 *               payload), counts destroy calls, detects concurrent delivery
 *               and events delivered after destroy.
 *   donerec_t — completion recorder for async calls: one slot per call,
 *               counting invocations (exactly once) and keeping the status
 *               and the JSON.
 *   hostrec_t — app-request recorder: records every request, optionally
 *               answers it inside the callback.
 *
 * Fixture clients: the set-up the host tests share (start a client on the
 * fixture with a recorder, call a tool, stop it and check the recorder).
 */
#ifndef LMCP_TEST_HARNESS_H
#define LMCP_TEST_HARNESS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lemonmcp.h"

/* --------------------------------------------------------------- checking */

extern int h_checks_failed; /* failed checks in the current test */

int h_check(int ok, const char *expr, const char *file, int line, const char *err_json, const char *fmt, ...);

/* CHECK(cond): fails the current test when cond is false. */
#define CHECK(cond) h_check(!!(cond), #cond, __FILE__, __LINE__, NULL, NULL)
/* CHECKE(cond, err): same, printing err (an error JSON, may be NULL). */
#define CHECKE(cond, err) h_check(!!(cond), #cond, __FILE__, __LINE__, (err), NULL)
/* CHECKM(cond, err, fmt, ...): same, with an explanatory message. */
#define CHECKM(cond, err, ...) h_check(!!(cond), #cond, __FILE__, __LINE__, (err), __VA_ARGS__)
/* CHECK_ST(expr, want, err): compares two statuses and prints both names.
 * A statement: expr is evaluated first, so err may be filled by expr. */
#define CHECK_ST(got, want, err)                                     \
  do {                                                               \
    lmcp_status h_got_ = (got);                                      \
    h_check_status(h_got_, (want), #got, __FILE__, __LINE__, (err)); \
  } while (0)

int h_check_status(lmcp_status got, lmcp_status want, const char *expr, const char *file, int line,
                   const char *err_json);

/* Runs one test function with a deadline (seconds); updates the tally. */
void h_run_test(const char *name, void (*fn)(void), int deadline_s);
#define RUN_TEST(fn, deadline_s) h_run_test(#fn, fn, (deadline_s))
/* One test of a table that h_main runs. */
typedef struct {
  const char *name;
  void (*fn)(void);
} h_test;
/* h_main is a test program's whole main: line-buffered output, SIGPIPE
 * ignored, the tests whose name contains one of the arguments (every test
 * when there is none) run with deadline_s each, temporary files removed;
 * returns h_finish(). */
int h_main(int argc, char **argv, const h_test *tests, size_t n, int deadline_s);
/* Prints the final "N passed, N failed" line; returns the exit status. */
int h_finish(void);

/* ------------------------------------------------------------------ utils */

int64_t now_ms(void);
void sleep_ms(int ms);
/* Reads a whole file (NUL-terminated, malloc'd) or returns NULL. */
char *read_file(const char *path, size_t *len_out);
/* Counts non-overlapping occurrences of needle in hay. */
int count_substr(const char *hay, const char *needle);

/* ------------------------------------------------------------------- JSON */

/* Strict RFC 8259 validation of len bytes: one value, nothing after it. */
int json_valid(const char *s, size_t len);
/* Finds the first "key": and parses the integer after it. */
int json_get_int(const char *json, const char *key, long long *out);
/* Finds the first "key":"..." and copies the (still escaped) string. */
int json_get_str(const char *json, const char *key, char *buf, size_t n);
/* Checks an err_out JSON: valid, "status" equals want, has "message". */
int check_err_json(const char *err, lmcp_status want, const char *file, int line);
#define CHECK_ERR_JSON(err, want) check_err_json((err), (want), __FILE__, __LINE__)

/* ----------------------------------------------------------------- config */

/* Path of the fixture server: $LMCP_FIXTURE or the build-time default. */
const char *fixture_path(void);
/* Writes a configuration for the fixture into buf:
 *   {"transport":{"type":"stdio","command":<fixture>,"args":[<args>]<,tr_extra>}<,extra>}
 * args is a comma-separated list of JSON strings ("\"-banner\",\"5\""),
 * tr_extra extra transport members, extra extra top-level members; each may
 * be NULL. Returns buf. */
char *fixture_config(char *buf, size_t n, const char *args, const char *tr_extra, const char *extra);
/* A fresh path in the suite's temporary directory. */
void temp_path(char *buf, size_t n, const char *stem);
void temp_dir_cleanup(void);

/* ------------------------------------------------------------ event recorder */

typedef struct {
  char kind[24];
  char *json;
  size_t len;
} h_event;

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  h_event *evs;
  size_t n, cap;
  int destroys;      /* destroy(user_data) calls */
  int inflight;      /* callbacks running now */
  int max_inflight;  /* >1 means two events of one client overlapped */
  int after_destroy; /* events delivered after destroy ran */
  int bad_payloads;  /* payloads that are not valid JSON or not NUL-terminated */
  int live;          /* between evrec_init and evrec_free */
} evrec_t;

void evrec_init(evrec_t *r);
void evrec_cb(void *ud, const char *kind, const char *json, size_t len);
void evrec_destroy(void *ud);
/* Number of events of kind (NULL: any) whose payload contains needle (NULL: any). */
int evrec_count(evrec_t *r, const char *kind, const char *needle);
/* Waits until evrec_count(...) >= n; returns the count reached. */
int evrec_wait(evrec_t *r, const char *kind, const char *needle, int n, int timeout_ms);
/* Waits until destroys >= n; returns destroys. */
int evrec_wait_destroys(evrec_t *r, int n, int timeout_ms);
/* Copies the payload of the first matching event (malloc'd) or NULL. */
char *evrec_first(evrec_t *r, const char *kind, const char *needle);
/* Index of the first matching event, or -1. */
int evrec_index(evrec_t *r, const char *kind, const char *needle);
void evrec_free(evrec_t *r);

/* ------------------------------------------------------- completion recorder */

typedef struct donerec donerec_t;

typedef struct {
  donerec_t *rec;
  int count; /* done invocations: must end at exactly 1 */
  lmcp_status status;
  char *json;
  size_t len;
  lmcp_call_id cb_call_id;     /* call id the callback received */
  lmcp_call_id issued_call_id; /* call id lmcp_client_call returned */
  pthread_t caller;            /* thread that made the call (informative) */
  int on_caller_thread;        /* done ran inside the initiating lmcp_ call */
  int bad_payload;
  void *user; /* test-specific */
} doneslot_t;

struct donerec {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  doneslot_t *slots;
  int n;
  int total; /* invocations over all slots */
  int inflight, max_inflight;
};

/* Set (per thread) while a test is inside an lmcp_client_call that may start
 * a callback: a callback that sees it set runs on the caller's thread inside
 * the initiating call, which the header forbids. */
extern __thread int h_in_call;
extern int h_inline_completions; /* completions seen with h_in_call set, suite-wide */

void donerec_init(donerec_t *r, int n);
void done_cb(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len);
/* Waits until every slot has completed at least once; returns the number done. */
int donerec_wait_all(donerec_t *r, int timeout_ms);
int donerec_wait_slot(donerec_t *r, int i, int timeout_ms);
/* Snapshot of a slot's count (under the lock). */
int donerec_count(donerec_t *r, int i);
/* completions recorded so far, all slots */
int donerec_count_total(donerec_t *r);
void donerec_free(donerec_t *r);

/* ------------------------------------------------------ app-request recorder */

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  lmcp_client *client; /* set by the test before connect */
  const char *answer;  /* when not NULL: answered in the callback */
  int n;               /* requests received */
  lmcp_request_id ids[16];
  char kinds[16][24];
  char *payloads[16];
  lmcp_status respond_status[16];
  int destroys;
} hostrec_t;

void hostrec_init(hostrec_t *r, const char *answer);
void hostrec_cb(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len);
void hostrec_destroy(void *ud);
int hostrec_wait(hostrec_t *r, int n, int timeout_ms);
void hostrec_free(hostrec_t *r);

/* Callbacks that only count or ignore: count_destroy adds one to
 * destroy_count (reset it first); never_event and never_host must not be
 * called (they are installed where the library has to refuse them). */
extern int destroy_count;
void count_destroy(void *ud);
void never_event(void *ud, const char *k, const char *j, size_t n);
void never_host(void *ud, lmcp_request_id id, const char *k, const char *j, size_t n);

/* -------------------------------------------------------------- processes */

/* 1 when pid no longer exists, or is a zombie that is not our child. */
int pid_gone(pid_t pid);
/* 1 when /proc/<pid> no longer exists (reaped). */
int pid_reaped(pid_t pid);
/* Polls pid_gone / pid_reaped up to timeout_ms. */
int wait_pid_gone(pid_t pid, int timeout_ms);
int wait_pid_reaped(pid_t pid, int timeout_ms);

/* ------------------------------------------------------------- diagnostics */

typedef struct {
  long long goroutines, live_clients, pending_calls;
} h_diag;

int get_diag(h_diag *d);
/* get_diag once the goroutine count has stopped moving (five equal reads
 * 10 ms apart, at most T(2000) ms): the idle baseline to compare with. */
int get_idle_diag(h_diag *d);

/* --------------------------------------------------------- fixture clients */

/* LMCP_TEST_TIME_SCALE (at least 1, set by the runner): deadlines that only
 * bound waits are multiplied by it, for slow runs such as valgrind. */
extern int h_time_scale;
#define T(ms) (h_time_scale * (ms)) /* a bounded wait, scaled */

/* lmcp_client_new (must succeed), with rec as the event handler when not
 * NULL. Returns NULL after a failed check. */
lmcp_client *new_client(const char *cfg, evrec_t *rec);
/* new + event handler + connect + wait_ready. On failure the client is freed,
 * rec finished, and NULL returned: callers just return. */
lmcp_client *start_client(const char *cfg, evrec_t *rec);
/* start_client with cb (when not NULL) as the app-request handler, its
 * user_data the client itself (so cb can lmcp_client_respond), and up to
 * T(ready_ms) for ready. */
lmcp_client *start_client_with(const char *cfg, evrec_t *rec, lmcp_app_request_cb cb, int ready_ms);
/* The host twin of start_client: lmcp_host_new (cfg: an mcpServers
 * configuration), connect, and up to T(15000) ms for every server to settle.
 * On failure the host is freed and NULL returned: callers just return. */
lmcp_host *start_host(const char *cfg);
/* Checks the recorder's invariants (one delivery at a time, valid payloads,
 * nothing after destroy, destroy exactly once) and releases it. Call after
 * the client was freed. */
void finish_recorder(evrec_t *rec);
/* close (must succeed) + free + recorder checks; either may be NULL. */
void stop_client(lmcp_client *c, evrec_t *rec);
/* lmcp_client_call_sync, checking the out-parameter contract: a valid
 * result and no error on LMCP_OK, an error JSON and no result otherwise.
 * The caller frees *result and *err. */
lmcp_status call_sync(lmcp_client *c, const char *method, const char *params, const char *opts, char **result,
                      char **err);
/* tools/call of tool with args (a JSON object, NULL for {}), synchronously. */
lmcp_status tool_sync(lmcp_client *c, const char *tool, const char *args, const char *opts, char **result,
                      char **err);
/* tools/call with lmcp_client_call, completing into slot (done_cb). */
lmcp_status tool_async(lmcp_client *c, const char *tool, const char *args, const char *opts, doneslot_t *slot,
                       lmcp_call_id *id_out);
lmcp_state state_of(lmcp_client *c);
/* Expects a successful echo of text. */
void expect_echo(lmcp_client *c, const char *text);
/* Reads the integer text of a tool result ({"content":[{"type":"text","text":"123"}]}). */
long long tool_int(lmcp_client *c, const char *tool);
/* The JSON-RPC id of the first line of the log file containing both needles. */
long long request_id_in_log(const char *log, const char *n1, const char *n2);
/* Waits until the log file has a notifications/cancelled line for request id. */
int wait_cancelled_in_log(const char *log, long long id, int timeout_ms);
/* Waits until the file contains needle. */
int wait_in_file(const char *path, const char *needle, int timeout_ms);

#endif
