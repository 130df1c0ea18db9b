/*
 * test_free_race.c — lmcp_client_free and lmcp_host_free racing every other
 * call on their handle, and the promise that no callback runs once free has
 * returned.
 *
 * The header lets lmcp_client_free race any call on the same handle, and
 * gives lmcp_host_free the same guarantees: a call that comes later gets
 * LMCP_E_INVALID_HANDLE, one already under way ends cleanly, and when free
 * returns every pending call's done has run (LMCP_E_CANCELLED), every
 * callback that had started has returned, no callback starts again, and
 * every registration's destroy has run (except, when free is called from
 * one of the object's own callbacks, for those callbacks and their
 * registration). A host's free never waits for a server.
 *
 * Every scenario runs once per handle kind, each described by a kind_t: how
 * to open one (a client of the fixture; a host of two fixture servers, "a"
 * legacy and "b" modern), the table of operations its hammer threads cycle
 * through (every function of that kind), and the tool names its calls use.
 *
 *   test_aa_warm_up   a first client and host, created and freed, so that
 *       what the library starts once per process is running before the
 *       idle goroutine baseline is taken.
 *   test_free_races_every_call   many iterations of: a ready object with
 *       progress and log events flowing and app requests coming, several
 *       threads running its table of operations in a loop (callbacks call
 *       the library too), and the main thread freeing it at a varying
 *       moment. Every callback checks whether free has already returned.
 *   test_free_inside_own_event_callback, ..._done_callback,
 *   ..._app_request_callback   free called from the object's own
 *       callbacks: no deadlock, pending calls completed before free
 *       returns, the calling callback's own destroy deferred until it
 *       returns.
 *   test_free_inside_other_clients_callback, ..._hosts_callback   a
 *       callback of another client (of another host) frees the object
 *       while it is busy.
 *   test_zz_nothing_left   no live client or host, no pending call, and the
 *       library's goroutines back to the idle baseline.
 *
 * Usage: lmcp_free_race [N]   (N iterations of each race; by default 100
 * for clients and 40 for hosts, or 12 and 8 under LMCP_TEST_TIME_SCALE,
 * i.e. valgrind).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define AL(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define AST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define AADD(x, n) __atomic_add_fetch(&(x), (n), __ATOMIC_SEQ_CST)
#define AXCHG(x, v) __atomic_exchange_n(&(x), (v), __ATOMIC_SEQ_CST)

#define HAMMERS 4

typedef struct kind kind_t;

/* One object's life: what its callbacks and the threads around it saw. */
typedef struct {
  const kind_t *k;
  void *h;           /* the lmcp_client or lmcp_host */
  int free_returned; /* set right after free returns */
  int stop;          /* the hammer threads stop */
  int late;          /* callbacks that started after free returned */
  int late_destroys; /* destroys that ran after free returned */
  int running;       /* callbacks running now */
  int events, progress, logs, dones, cancelled, accepted, appreqs, destroys;
  int bad_late_status; /* a call begun after free returned got another status */
  int statuses[16];    /* -status: how often each status came back */
  unsigned long long last_call;
  /* for the free-from-a-callback tests */
  int free_in_cb; /* which callback frees: 0 none, 1 event, 2 done, 3 app request */
  int freeing;    /* the callback that frees has been chosen */
  int dones_when_freed, destroys_when_freed;
  int free_done_in_cb;   /* free returned inside the callback */
  void *other;           /* an object to free from this one's event callback */
  const kind_t *other_k; /* its kind */
  int other_freed;
} life_t;

typedef lmcp_status (*op_fn)(life_t *l);

/* A handle kind: the functions of its API the scenarios need, its table of
 * operations, and the tools its calls use. */
struct kind {
  const char *name;
  int iterations, iterations_valgrind, race_deadline_s;
  /* create makes l->h (not yet connected). */
  lmcp_status (*create)(life_t *l, char **err);
  lmcp_status (*set_event_handler)(life_t *l, lmcp_event_cb cb, lmcp_destroy_cb destroy, char **err);
  lmcp_status (*set_app_request_handler)(life_t *l, lmcp_app_request_cb cb, lmcp_destroy_cb destroy,
                                         char **err);
  lmcp_status (*connect)(life_t *l, char **err);
  lmcp_status (*wait_ready)(life_t *l, int64_t timeout_ms, char **err);
  /* start_tool calls a tool with l as done's life; *id gets its call id. */
  lmcp_status (*start_tool)(life_t *l, const char *tool, const char *args, const char *opts, void *box,
                            lmcp_call_id *id, char **err);
  lmcp_status (*cancel)(life_t *l, lmcp_call_id id);
  lmcp_status (*respond)(life_t *l, lmcp_request_id id, const char *json, char **err);
  /* query is a cheap call a callback makes on its own object. */
  lmcp_status (*query)(life_t *l);
  void (*free_handle)(void *h);
  /* The tools: slow (progress), echo, roots (a app request), stderr. */
  const char *slow, *echo, *roots, *stderr_tool;
  /* The hammer's mix. */
  const op_fn *ops;
  size_t n_ops;
};

/* The kind the running test serves (the harness's tests take no argument). */
static const kind_t *K;

static void cb_enter(life_t *l) {
  if (AL(l->free_returned)) {
    AADD(l->late, 1);
  }
  AADD(l->running, 1);
}

static void cb_exit(life_t *l) {
  AADD(l->running, -1);
}

static void note_status(life_t *l, lmcp_status st) {
  int i = -st;
  if (i >= 0 && i < 16) {
    AADD(l->statuses[i], 1);
  }
}

/* free_from_callback is what the callback chosen to free does. */
static void free_from_callback(life_t *l) {
  l->k->free_handle(l->h);
  AST(l->dones_when_freed, AL(l->dones));
  AST(l->destroys_when_freed, AL(l->destroys));
  AST(l->free_done_in_cb, 1);
}

static void on_event(void *ud, const char *kind, const char *json, size_t len) {
  life_t *l = ud;
  cb_enter(l);
  (void)json;
  (void)len;
  AADD(l->events, 1);
  if (strcmp(kind, "progress") == 0) {
    AADD(l->progress, 1);
  } else if (strcmp(kind, "log") == 0) {
    AADD(l->logs, 1);
  }
  (void)l->k->query(l); /* a callback may call the library */
  if (l->free_in_cb == 1 && AL(l->progress) >= 3 && AXCHG(l->freeing, 1) == 0) {
    free_from_callback(l);
  }
  void *other = AL(l->other);
  if (other != NULL && AL(l->progress) >= 2 && AXCHG(l->other_freed, 1) == 0) {
    l->other_k->free_handle(other);
  }
  cb_exit(l);
}

static void on_destroy(void *ud) {
  life_t *l = ud;
  if (AL(l->free_returned)) {
    AADD(l->late_destroys, 1);
  }
  AADD(l->destroys, 1);
}

static void on_app_request(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  life_t *l = ud;
  cb_enter(l);
  (void)kind;
  (void)json;
  (void)len;
  AADD(l->appreqs, 1);
  if (l->free_in_cb == 3 && AXCHG(l->freeing, 1) == 0) {
    free_from_callback(l);
  }
  char *err = NULL;
  lmcp_status st = l->k->respond(l, id, "{\"roots\":[{\"uri\":\"file:///tmp\",\"name\":\"tmp\"}]}", &err);
  note_status(l, st);
  lmcp_free(err);
  cb_exit(l);
}

/* A call's user_data: the life it belongs to. Freed by done. */
typedef struct {
  life_t *l;
} call_box;

static void on_done(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  call_box *box = ud;
  life_t *l = box->l;
  cb_enter(l);
  (void)json;
  (void)len;
  if (st == LMCP_E_CANCELLED) {
    AADD(l->cancelled, 1);
  }
  (void)l->k->cancel(l, id); /* already completed: NOT_FOUND or INVALID_HANDLE */
  AADD(l->dones, 1);
  free(box);
  if (l->free_in_cb == 2 && AXCHG(l->freeing, 1) == 0) {
    free_from_callback(l);
  }
  cb_exit(l);
}

/* started counts a call that start returned st for, with box its done's
 * user_data (freed here when done never runs). */
static lmcp_status started(life_t *l, lmcp_status st, lmcp_call_id id, call_box *box) {
  if (st == LMCP_OK) {
    AADD(l->accepted, 1);
    AST(l->last_call, id);
  } else {
    free(box); /* done never runs */
  }
  return st;
}

/* call_tool starts the tool (one of l's kind's) with args and options. */
static lmcp_status call_tool(life_t *l, const char *tool, const char *args, const char *opts) {
  call_box *box = malloc(sizeof(*box));
  box->l = l;
  lmcp_call_id id = 0;
  char *err = NULL;
  lmcp_status st = l->k->start_tool(l, tool, args, opts, box, &id, &err);
  lmcp_free(err);
  return started(l, st, id, box);
}

/* ------------------------------------------------ operations of both kinds */

static lmcp_status op_slow(life_t *l) {
  return call_tool(l, l->k->slow, "{\"ms\":60,\"steps\":12}", "{\"progress\":true}");
}
static lmcp_status op_echo(life_t *l) {
  return call_tool(l, l->k->echo, "{\"text\":\"hi\"}", NULL);
}
static lmcp_status op_roots(life_t *l) {
  return call_tool(l, l->k->roots, "{}", NULL);
}
static lmcp_status op_stderr(life_t *l) {
  return call_tool(l, l->k->stderr_tool, "{\"bytes\":1500}", NULL);
}
static lmcp_status op_cancel_last(life_t *l) {
  return l->k->cancel(l, AL(l->last_call));
}
static lmcp_status op_respond_unknown(life_t *l) {
  char *err = NULL;
  lmcp_status st = l->k->respond(l, 999999, "{}", &err);
  lmcp_free(err);
  return st;
}
static lmcp_status op_wait_ready(life_t *l) {
  char *err = NULL;
  lmcp_status st = l->k->wait_ready(l, 0, &err);
  lmcp_free(err);
  return st;
}
static lmcp_status op_connect(life_t *l) {
  char *err = NULL;
  lmcp_status st = l->k->connect(l, &err); /* already connected: INVALID_STATE */
  lmcp_free(err);
  return st;
}

/* A JSON-returning function's output, freed. */
static lmcp_status json_op(lmcp_status st, char *out, char *err) {
  lmcp_free(out);
  lmcp_free(err);
  return st;
}

static const char sync_opts[] = "{\"timeout_ms\":3000}";

/* The adapters every kind has, from the header's naming (lmcp_<kind>_connect,
 * ...), and the kind_t fields they fill: both kinds are driven through the
 * same functions by construction. A kind writes create, start_tool and its
 * query itself. */
#define KIND_ADAPTERS(k)                                                                                     \
  static lmcp_status k##_set_event_handler(life_t *l, lmcp_event_cb cb, lmcp_destroy_cb destroy,             \
                                           char **err) {                                                     \
    return lmcp_##k##_set_event_handler(l->h, cb, l, destroy, err);                                          \
  }                                                                                                          \
  static lmcp_status k##_set_app_request_handler(life_t *l, lmcp_app_request_cb cb, lmcp_destroy_cb destroy, \
                                                 char **err) {                                               \
    return lmcp_##k##_set_app_request_handler(l->h, cb, l, destroy, err);                                    \
  }                                                                                                          \
  static lmcp_status k##_connect(life_t *l, char **err) {                                                    \
    return lmcp_##k##_connect(l->h, err);                                                                    \
  }                                                                                                          \
  static lmcp_status k##_wait_ready(life_t *l, int64_t timeout_ms, char **err) {                             \
    return lmcp_##k##_wait_ready(l->h, timeout_ms, err);                                                     \
  }                                                                                                          \
  static lmcp_status k##_cancel(life_t *l, lmcp_call_id id) {                                                \
    return lmcp_##k##_cancel(l->h, id);                                                                      \
  }                                                                                                          \
  static lmcp_status k##_respond(life_t *l, lmcp_request_id id, const char *json, char **err) {              \
    return lmcp_##k##_respond(l->h, id, LMCP_OK, json, strlen(json), err);                                   \
  }                                                                                                          \
  static void k##_free(void *h) {                                                                            \
    lmcp_##k##_free(h);                                                                                      \
  }

#define KIND_FUNCS(k)                                                                                       \
  .create = k##_create, .set_event_handler = k##_set_event_handler,                                         \
  .set_app_request_handler = k##_set_app_request_handler, .connect = k##_connect,                           \
  .wait_ready = k##_wait_ready, .start_tool = k##_start_tool, .cancel = k##_cancel, .respond = k##_respond, \
  .free_handle = k##_free

/* ----------------------------------------------------------------- clients */

KIND_ADAPTERS(client)

static lmcp_status client_create(life_t *l, char **err) {
  char config[1024];
  fixture_config(config, sizeof(config), NULL, NULL, "\"handlers\":{\"roots\":{\"list_changed\":true}}");
  return lmcp_client_new(config, strlen(config), (lmcp_client **)&l->h, err);
}
static lmcp_status client_start_tool(life_t *l, const char *tool, const char *args, const char *opts,
                                     void *box, lmcp_call_id *id, char **err) {
  char params[256];
  snprintf(params, sizeof(params), "{\"name\":\"%s\",\"arguments\":%s}", tool, args);
  return lmcp_client_call(l->h, "tools/call", params, strlen(params), opts, opts ? strlen(opts) : 0, on_done,
                          box, id, err);
}
static lmcp_status client_state(life_t *l) {
  lmcp_state s;
  return lmcp_client_state(l->h, &s);
}
static lmcp_status client_call_sync(life_t *l) {
  static const char echo[] = "{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}";
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_client_call_sync(l->h, "tools/call", echo, strlen(echo), sync_opts, strlen(sync_opts),
                                         &out, &n, &err);
  return json_op(st, out, err);
}
static lmcp_status client_notify(life_t *l) {
  char *err = NULL;
  return json_op(lmcp_client_notify(l->h, "notifications/roots/list_changed", NULL, 0, &err), NULL, err);
}
static lmcp_status client_server_info(life_t *l) {
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_client_server_info(l->h, &out, &n, &err);
  return json_op(st, out, err);
}

/* Every function of the client API but new and free. */
static const op_fn client_ops[] = {
    op_slow,          op_echo,
    client_call_sync, client_notify,
    client_state,     client_server_info,
    op_cancel_last,   op_respond_unknown,
    op_roots,         op_stderr,
    op_wait_ready,    op_connect,
};

static const kind_t client_kind = {
    .name = "client",
    .iterations = 100,
    .iterations_valgrind = 12,
    .race_deadline_s = 120,
    KIND_FUNCS(client),
    .query = client_state,
    .slow = "slow",
    .echo = "echo",
    .roots = "roots",
    .stderr_tool = "stderr",
    .ops = client_ops,
    .n_ops = sizeof(client_ops) / sizeof(client_ops[0]),
};

/* ------------------------------------------------------------------- hosts */

KIND_ADAPTERS(host)

static lmcp_status host_create(life_t *l, char **err) {
  char config[2048], pins[512];
  const char *fx = fixture_path();
  temp_path(pins, sizeof pins, "pins");
  snprintf(config, sizeof config,
           "{\"tool_prefix\":\"always\",\"pins\":{\"store\":{\"type\":\"file\",\"path\":\"%s\"}},"
           "\"defaults\":{\"handlers\":{\"roots\":{\"list_changed\":true}},"
           "\"timeouts\":{\"ready_ms\":5000,\"close_grace_ms\":300}},"
           "\"mcpServers\":{\"a\":{\"command\":\"%s\"},"
           "\"b\":{\"command\":\"%s\",\"protocol\":{\"mode\":\"modern\"}}}}",
           pins, fx, fx);
  return lmcp_host_new(config, strlen(config), (lmcp_host **)&l->h, err);
}
static lmcp_status host_start_tool(life_t *l, const char *tool, const char *args, const char *opts, void *box,
                                   lmcp_call_id *id, char **err) {
  return lmcp_host_call_tool(l->h, tool, args, strlen(args), opts, opts ? strlen(opts) : 0, on_done, box, id,
                             err);
}
static lmcp_status host_query(life_t *l) {
  char *out = NULL;
  return json_op(lmcp_host_servers(l->h, &out, NULL, NULL), out, NULL);
}
static const char echo_call[] = "{\"name\":\"echo\",\"arguments\":{\"text\":\"y\"}}";

static lmcp_status host_call_tool_sync(life_t *l) {
  static const char echo[] = "{\"text\":\"x\"}";
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_host_call_tool_sync(l->h, "b__echo", echo, strlen(echo), sync_opts, strlen(sync_opts),
                                            &out, &n, &err);
  return json_op(st, out, err);
}
/* host_call_server starts a request to server a through lmcp_host_call. */
static lmcp_status host_call_server(life_t *l) {
  call_box *box = malloc(sizeof(*box));
  box->l = l;
  lmcp_call_id id = 0;
  char *err = NULL;
  lmcp_status st =
      lmcp_host_call(l->h, "a", "tools/call", echo_call, strlen(echo_call), NULL, 0, on_done, box, &id, &err);
  lmcp_free(err);
  return started(l, st, id, box);
}
static lmcp_status host_call_sync(life_t *l) {
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_host_call_sync(l->h, "b", "tools/call", echo_call, strlen(echo_call), sync_opts,
                                       strlen(sync_opts), &out, &n, &err);
  return json_op(st, out, err);
}
static lmcp_status host_servers_all(life_t *l) {
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_host_servers(l->h, &out, &n, &err);
  return json_op(st, out, err);
}
static lmcp_status host_list_tools(life_t *l) {
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_host_list_tools(l->h, &out, &n, &err);
  return json_op(st, out, err);
}
static lmcp_status host_list_prompts(life_t *l) {
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_host_list_prompts(l->h, &out, &n, &err);
  return json_op(st, out, err);
}

static lmcp_status host_pins(life_t *l) {
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_host_pins(l->h, &out, &n, &err);
  return json_op(st, out, err);
}
/* An approval of a hash never offered: refused, or the handle is gone. */
static lmcp_status host_approve(life_t *l) {
  static const char approval[] = "{\"server\":\"a\",\"name\":\"echo\",\"hash\":\"sha256:0\"}";
  char *err = NULL;
  lmcp_status st = lmcp_host_approve(l->h, approval, strlen(approval), &err);
  return json_op(st, NULL, err);
}

/* Every function of the host API but new and free. */
static const op_fn host_ops[] = {
    op_slow,          op_echo,         host_call_tool_sync, host_call_server,   host_call_sync,
    host_servers_all, host_list_tools, op_cancel_last,      op_respond_unknown, op_roots,
    op_stderr,        op_wait_ready,   host_list_prompts,   op_connect,         host_pins,
    host_approve,
};

static const kind_t host_kind = {
    .name = "host",
    .iterations = 40,
    .iterations_valgrind = 8,
    .race_deadline_s = 180,
    KIND_FUNCS(host),
    .query = host_query,
    .slow = "a__slow",
    .echo = "b__echo",
    .roots = "a__roots",
    .stderr_tool = "b__stderr",
    .ops = host_ops,
    .n_ops = sizeof(host_ops) / sizeof(host_ops[0]),
};

/* --------------------------------------------------------------- scenarios */

static int hammer_seed;

static void *hammer(void *arg) {
  life_t *l = arg;
  for (int i = AADD(hammer_seed, 5); !AL(l->stop); i++) {
    int after = AL(l->free_returned);
    lmcp_status st = l->k->ops[(size_t)i % l->k->n_ops](l);
    note_status(l, st);
    if (after && st != LMCP_E_INVALID_HANDLE) {
      AADD(l->bad_late_status, 1);
    }
    if (st == LMCP_E_INVALID_HANDLE) {
      sleep_ms(1); /* freed: a few late calls are enough, do not spin */
    }
  }
  return NULL;
}

/* open_life creates an object of kind k for a new life (whose callback
 * free_in_cb frees it), registers its handlers and connects it; NULL
 * (everything released) when that fails. */
static life_t *open_life(const kind_t *k, int free_in_cb) {
  life_t *l = calloc(1, sizeof(*l));
  l->k = k;
  l->free_in_cb = free_in_cb;
  char *err = NULL;
  lmcp_status st = k->create(l, &err);
  CHECK_ST(st, LMCP_OK, err);
  lmcp_free(err);
  err = NULL;
  if (st == LMCP_OK) {
    CHECK_ST(k->set_event_handler(l, on_event, on_destroy, &err), LMCP_OK, err);
    CHECK_ST(k->set_app_request_handler(l, on_app_request, on_destroy, &err), LMCP_OK, err);
    CHECK_ST(k->connect(l, &err), LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
    st = k->wait_ready(l, 10000 * h_time_scale, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
  }
  if (st != LMCP_OK) {
    k->free_handle(l->h);
    free(l);
    return NULL;
  }
  return l;
}

static int iterations = -1; /* from the command line; -1: the kind's */

static void test_free_races_every_call(void) {
  long long events = 0, progress = 0, logs = 0, dones = 0, cancelled = 0, appreqs = 0, late_calls = 0;
  int failures = 0;
  int n = iterations >= 0                          ? iterations
          : getenv("LMCP_TEST_TIME_SCALE") != NULL ? K->iterations_valgrind
                                                   : K->iterations;
  for (int it = 0; it < n && failures < 3; it++) {
    life_t *l = open_life(K, 0);
    if (l == NULL) {
      failures++;
      continue;
    }
    /* Progress events, logs and app requests flowing before the hammers
     * start: waited for, since under valgrind the first ones can take
     * longer than the whole race window. */
    call_tool(l, K->slow, "{\"ms\":400,\"steps\":100}", "{\"progress\":true}");
    call_tool(l, K->stderr_tool, "{\"bytes\":4000}", NULL);
    call_tool(l, K->roots, "{}", NULL);
    for (int64_t until = now_ms() + T(5000);
         (AL(l->progress) == 0 || AL(l->logs) == 0 || AL(l->appreqs) == 0) && now_ms() < until;) {
      sleep_ms(2);
    }
    pthread_t th[HAMMERS];
    for (int i = 0; i < HAMMERS; i++) {
      pthread_create(&th[i], NULL, hammer, l);
    }
    sleep_ms(2 + (it * 7) % 40);

    K->free_handle(l->h);
    int running = AL(l->running);
    AST(l->free_returned, 1);
    int dones_at_free = AL(l->dones), destroys_at_free = AL(l->destroys);

    sleep_ms(15 * h_time_scale); /* time for a late callback to show up */
    AST(l->stop, 1);
    for (int i = 0; i < HAMMERS; i++) {
      pthread_join(th[i], NULL);
    }
    int ok = 1;
    ok &= CHECKM(running == 0, NULL, "iteration %d: %d callbacks still running when free returned", it,
                 running);
    ok &= CHECKM(AL(l->late) == 0, NULL, "iteration %d: %d callbacks started after free returned", it,
                 AL(l->late));
    ok &= CHECKM(destroys_at_free == 2 && AL(l->late_destroys) == 0, NULL,
                 "iteration %d: %d destroys when free returned (want 2), %d after", it, destroys_at_free,
                 AL(l->late_destroys));
    ok &= CHECKM(AL(l->dones) == dones_at_free, NULL, "iteration %d: %d completions after free returned", it,
                 AL(l->dones) - dones_at_free);
    ok &= CHECKM(AL(l->accepted) == AL(l->dones), NULL, "iteration %d: %d calls accepted, %d completed", it,
                 AL(l->accepted), AL(l->dones));
    ok &= CHECKM(AL(l->bad_late_status) == 0, NULL,
                 "iteration %d: %d calls made after free returned did not get LMCP_E_INVALID_HANDLE", it,
                 AL(l->bad_late_status));
    ok &= CHECKM(AL(l->statuses[14]) == 0, NULL, "iteration %d: %d calls returned LMCP_E_INTERNAL", it,
                 AL(l->statuses[14]));
    if (!ok) {
      failures++;
    }
    events += l->events;
    progress += l->progress;
    logs += l->logs;
    dones += l->dones;
    cancelled += l->cancelled;
    appreqs += l->appreqs;
    late_calls += l->statuses[2];
    free(l);
  }
  printf(
      "  %d iterations: %lld events (%lld progress, %lld log), %lld completions (%lld cancelled), %lld host "
      "requests, %lld calls answered LMCP_E_INVALID_HANDLE\n",
      n, events, progress, logs, dones, cancelled, appreqs, late_calls);
  CHECKM(progress > 0 && logs > 0 && appreqs > 0, NULL, "events and app requests must have flowed");
  CHECKM(cancelled > 0, NULL, "some calls must have been pending when free ran");
}

/* free_in_callback runs one object whose callback `which` frees it. */
static void free_in_callback(int which) {
  life_t *l = open_life(K, which);
  if (l == NULL) {
    return;
  }
  /* A few slow calls stay pending while the callback frees. */
  for (int i = 0; i < 3; i++) {
    CHECK_ST(call_tool(l, K->slow, "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}"), LMCP_OK, NULL);
  }
  if (which == 2) {
    CHECK_ST(call_tool(l, K->echo, "{\"text\":\"x\"}", NULL), LMCP_OK, NULL);
  }
  if (which == 3) {
    CHECK_ST(call_tool(l, K->roots, "{}", NULL), LMCP_OK, NULL);
  }
  int64_t deadline = now_ms() + 10000 * h_time_scale;
  while (!AL(l->free_done_in_cb) && now_ms() < deadline) {
    sleep_ms(5);
  }
  CHECKM(AL(l->free_done_in_cb), NULL, "the callback's free did not return");
  AST(l->free_returned, 1);
  /* The callback that freed is its own exception: the rest ran before free
   * returned. The destroy of the registration whose callback freed runs
   * once it returns. */
  while (AL(l->destroys) < 2 && now_ms() < deadline) {
    sleep_ms(5);
  }
  sleep_ms(15 * h_time_scale);
  CHECKM(AL(l->dones_when_freed) == AL(l->accepted), NULL,
         "%d calls accepted, %d completed when free returned", AL(l->accepted), AL(l->dones_when_freed));
  CHECKM(AL(l->cancelled) >= 3, NULL, "the pending calls complete cancelled (%d)", AL(l->cancelled));
  /* A done callback belongs to no registration: both destroys ran. */
  int want = which == 2 ? 2 : 1;
  CHECKM(AL(l->destroys_when_freed) == want, NULL, "%d destroys when free returned (want %d)",
         AL(l->destroys_when_freed), want);
  CHECKM(AL(l->destroys) == 2, NULL, "both destroys ran in the end: %d", AL(l->destroys));
  CHECKM(AL(l->late) == 0, NULL, "%d callbacks started after free returned", AL(l->late));
  CHECK_ST(K->query(l), LMCP_E_INVALID_HANDLE, NULL);
  K->free_handle(l->h); /* again: harmless */
  free(l);
}

static void test_free_inside_own_event_callback(void) {
  free_in_callback(1);
}
static void test_free_inside_own_done_callback(void) {
  free_in_callback(2);
}
static void test_free_inside_own_app_request_callback(void) {
  free_in_callback(3);
}

/* free_inside_other_callback: an event callback of an object of kind by
 * frees an object a of the running kind while a is busy. */
static void free_inside_other_callback(const kind_t *by) {
  life_t *a = open_life(K, 0);
  life_t *b = a != NULL ? open_life(by, 0) : NULL;
  if (b == NULL) {
    if (a != NULL) {
      K->free_handle(a->h);
      free(a);
    }
    return;
  }
  for (int i = 0; i < 3; i++) {
    call_tool(a, K->slow, "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}");
  }
  int64_t deadline = now_ms() + 10000 * h_time_scale;
  while (AL(a->progress) < 1 && now_ms() < deadline) {
    sleep_ms(2);
  }
  b->other_k = K;
  AST(b->other, a->h);
  /* b's event callback frees a. */
  call_tool(b, by->slow, "{\"ms\":3000,\"steps\":300}", "{\"progress\":true}");
  while ((!AL(b->other_freed) || AL(a->destroys) < 2) && now_ms() < deadline) {
    sleep_ms(5);
  }
  CHECKM(AL(b->other_freed), NULL, "b's callback freed a");
  CHECKM(AL(a->destroys) == 2, NULL, "a's destroys: %d", AL(a->destroys));
  CHECKM(AL(a->dones) == AL(a->accepted), NULL, "a: %d accepted, %d completed", AL(a->accepted),
         AL(a->dones));
  CHECKM(AL(a->running) == 0, NULL, "a: callbacks still running");
  CHECK_ST(K->query(a), LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(by->query(b), LMCP_OK, NULL);
  by->free_handle(b->h);
  CHECKM(AL(b->dones) == AL(b->accepted), NULL, "b: %d accepted, %d completed", AL(b->accepted),
         AL(b->dones));
  free(a);
  free(b);
}

static void test_free_inside_other_clients_callback(void) {
  free_inside_other_callback(&client_kind);
}
static void test_free_inside_other_hosts_callback(void) {
  free_inside_other_callback(&host_kind);
}

/* The library's goroutines once the warm-up objects are gone: the idle
 * baseline test_zz_nothing_left compares with. */
static long long idle_goroutines = -1;

/* settled_goroutines polls lmcp_diagnostics until the library's goroutines
 * are down to floor (or 5 s pass); a negative floor reads them once. */
static long long settled_goroutines(long long floor) {
  h_diag d = {0};
  long long g = -1;
  int64_t deadline = now_ms() + 5000 * h_time_scale;
  for (;;) {
    if (get_diag(&d)) {
      g = d.goroutines;
    }
    if (floor < 0 || (g >= 0 && g <= floor) || now_ms() >= deadline) {
      return g;
    }
    sleep_ms(20);
  }
}

/* A first client and host, created and freed, so that whatever the library
 * starts once per process (the stdio transport's child reaping, ...) is
 * running before the baseline is taken. */
static void test_aa_warm_up(void) {
  const kind_t *kinds[] = {&client_kind, &host_kind};
  for (size_t i = 0; i < 2; i++) {
    life_t *l = open_life(kinds[i], 0);
    if (l == NULL) {
      continue;
    }
    CHECK_ST(call_tool(l, kinds[i]->echo, "{\"text\":\"x\"}", NULL), LMCP_OK, NULL);
    kinds[i]->free_handle(l->h);
    CHECKM(AL(l->dones) == AL(l->accepted), NULL, "%s: %d accepted, %d completed", kinds[i]->name,
           AL(l->accepted), AL(l->dones));
    free(l);
  }
  /* The servers' teardown ends in the background: wait until the count
   * stops falling. */
  long long prev = -1, g = settled_goroutines(-1);
  for (int i = 0; i < 50 && g != prev; i++) {
    prev = g;
    sleep_ms(100);
    g = settled_goroutines(-1);
  }
  idle_goroutines = g;
  CHECK(idle_goroutines > 0);
}

/* Every client and host is gone, no call is pending, and no goroutine of
 * theirs is left once the frees are done. */
static void test_zz_nothing_left(void) {
  h_diag d = {0};
  char *js = NULL;
  long long live_hosts = -1;
  int64_t deadline = now_ms() + 5000 * h_time_scale;
  do {
    CHECK(get_diag(&d));
    CHECK_ST(lmcp_diagnostics(&js, NULL), LMCP_OK, NULL);
    CHECKM(js != NULL && json_get_int(js, "live_hosts", &live_hosts), js, "diagnostics has live_hosts");
    lmcp_free(js);
    js = NULL;
    if (d.live_clients == 0 && d.pending_calls == 0 && live_hosts == 0) {
      break;
    }
    sleep_ms(20);
  } while (now_ms() < deadline);
  CHECKM(d.live_clients == 0 && d.pending_calls == 0 && live_hosts == 0, NULL,
         "live_clients=%lld pending_calls=%lld live_hosts=%lld", d.live_clients, d.pending_calls, live_hosts);
  long long g = settled_goroutines(idle_goroutines);
  CHECKM(idle_goroutines > 0 && g <= idle_goroutines, NULL,
         "goroutines: %lld idle after the first client and host, %lld after every one was freed",
         idle_goroutines, g);
}

/* The scenarios every kind runs, with their deadlines (0: the kind's race
 * deadline). */
static const struct {
  const char *name;
  void (*fn)(void);
  int deadline_s;
} scenarios[] = {
    {"test_free_races_every_call", test_free_races_every_call, 0},
    {"test_free_inside_own_event_callback", test_free_inside_own_event_callback, 20},
    {"test_free_inside_own_done_callback", test_free_inside_own_done_callback, 20},
    {"test_free_inside_own_app_request_callback", test_free_inside_own_app_request_callback, 20},
    {"test_free_inside_other_clients_callback", test_free_inside_other_clients_callback, 30},
    {"test_free_inside_other_hosts_callback", test_free_inside_other_hosts_callback, 30},
};

int main(int argc, char **argv) {
  if (argc > 1) {
    iterations = atoi(argv[1]);
  }
  RUN_TEST(test_aa_warm_up, 30);
  const kind_t *kinds[] = {&client_kind, &host_kind};
  char name[128];
  for (size_t i = 0; i < 2; i++) {
    K = kinds[i];
    for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
      snprintf(name, sizeof name, "%s: %s", K->name, scenarios[s].name);
      h_run_test(name, scenarios[s].fn,
                 scenarios[s].deadline_s ? scenarios[s].deadline_s : K->race_deadline_s);
    }
  }
  RUN_TEST(test_zz_nothing_left, 20);
  temp_dir_cleanup();
  return h_finish();
}
