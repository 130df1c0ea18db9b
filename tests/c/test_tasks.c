/*
 * test_tasks.c — 2025-11-25 tasks through the C ABI: a task-augmented
 * tools/call is one call that completes (with progress events), against the
 * fixture server (the Go SDK with -legacy-tasks) and the TypeScript SDK v1
 * server (tests/fixtures/tsv1tasks, prepared by make in LMCP_TSV1_DIR).
 *
 *   required    a tool whose taskSupport is "required": the call completes
 *               with the task's result; its status messages are "progress"
 *               events naming the task
 *   ask         the task's elicitation, delivered by tasks/result, reaches
 *               the app request handler
 *   optional    "task":true in the options runs an optional tool as a task
 *   cancel      lmcp_client_cancel cancels the task (tasks/list then shows
 *               it cancelled)
 *   receiver    with "protocol": {"tasks": true} the client serves the
 *               TypeScript SDK v1's task-augmented elicitation and sampling:
 *               each is answered with a task, its question (naming the
 *               task) reaches the app request handler, and the server's
 *               tasks/result gets the answer
 *
 * Usage: lmcp_tasks_test [name-filter...]
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef LMCP_TSV1_DIR
#error "LMCP_TSV1_DIR must name the prepared tests/fixtures/tsv1tasks directory"
#endif

typedef struct {
  const char *name;
  const char *config_args; /* the transport's command and args */
  const char *slow, *slow_args, *slow_text;
  const char *ask, *forever, *maybe, *maybe_text;
} peer_t;

static const char *elicit_answer = "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}";

static void answer_elicitation(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  lmcp_client *c = (lmcp_client *)ud;
  (void)json;
  (void)len;
  if (strcmp(kind, "elicitation") == 0) {
    lmcp_client_respond(c, id, LMCP_OK, elicit_answer, strlen(elicit_answer), NULL);
  } else {
    lmcp_client_respond(c, id, LMCP_E_UNSUPPORTED, NULL, 0, NULL);
  }
}

static lmcp_client *start(const peer_t *p, evrec_t *ev) {
  char cfg[2048];
  snprintf(cfg, sizeof cfg,
           "{\"transport\":{\"type\":\"stdio\",%s},\"handlers\":{\"elicitation\":{}},"
           "\"timeouts\":{\"ready_ms\":20000,\"call_ms\":15000,\"close_grace_ms\":500}}",
           p->config_args);
  return start_client_with(cfg, ev, answer_elicitation, 30000);
}

static void stop(lmcp_client *c) {
  stop_client(c, NULL);
}

/* Calls a tool; the result (lmcp_free) or NULL. */
static char *tool(lmcp_client *c, const char *name, const char *args, const char *opts) {
  char params[512];
  char *res = NULL, *err = NULL;
  size_t len = 0;
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", name, args);
  CHECK_ST(lmcp_client_call_sync(c, "tools/call", params, strlen(params), opts, opts ? strlen(opts) : 0, &res,
                                 &len, &err),
           LMCP_OK, err);
  lmcp_free(err);
  if (res != NULL) CHECKE(json_valid(res, len), res);
  return res;
}

/* Counts the cancelled tasks tasks/list reports. */
static int cancelled_tasks(lmcp_client *c) {
  const char *opts = "{\"all_pages\":true}";
  char *res = NULL, *err = NULL;
  size_t len = 0;
  lmcp_status st = lmcp_client_call_sync(c, "tasks/list", NULL, 0, opts, strlen(opts), &res, &len, &err);
  lmcp_free(err);
  int n = st == LMCP_OK && res != NULL ? count_substr(res, "\"status\":\"cancelled\"") : -1;
  lmcp_free(res);
  return n;
}

static void check_peer(const peer_t *p) {
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start(p, &ev);
  if (c == NULL) {
    evrec_free(&ev);
    return;
  }
  char *info = NULL, *err = NULL;
  size_t ilen = 0;
  CHECK_ST(lmcp_client_server_info(c, &info, &ilen, &err), LMCP_OK, err);
  lmcp_free(err);
  CHECKE(info != NULL && strstr(info, "\"protocolVersion\":\"2025-11-25\"") != NULL, info);
  lmcp_free(info);

  /* required: one call, progress from the task's status messages */
  char *res = tool(c, p->slow, p->slow_args, "{\"progress\":true}");
  CHECKE(res != NULL && strstr(res, p->slow_text) != NULL, res);
  lmcp_free(res);
  CHECKM(evrec_wait(&ev, "progress", "\"task_id\"", 1, 5000) >= 1, NULL, "%s: no progress event for the task",
         p->name);

  /* ask: the elicitation comes through tasks/result */
  res = tool(c, p->ask, "{}", NULL);
  CHECKE(res != NULL && strstr(res, "hello Ada") != NULL, res);
  lmcp_free(res);

  /* optional: plain, then as a task */
  res = tool(c, p->maybe, "{\"text\":\"lemon\"}", NULL);
  CHECKE(res != NULL && strstr(res, p->maybe_text) != NULL, res);
  lmcp_free(res);
  res = tool(c, p->maybe, "{\"text\":\"lemon\"}", "{\"task\":true}");
  CHECKE(res != NULL && strstr(res, p->maybe_text) != NULL, res);
  lmcp_free(res);

  /* cancel: the task is cancelled on the server */
  donerec_t done;
  donerec_init(&done, 1);
  char params[128];
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":{}}", p->forever);
  lmcp_call_id id = 0;
  CHECK_ST(
      lmcp_client_call(c, "tools/call", params, strlen(params), NULL, 0, done_cb, &done.slots[0], &id, NULL),
      LMCP_OK, NULL);
  sleep_ms(300); /* the task exists and is being polled */
  CHECK_ST(lmcp_client_cancel(c, id), LMCP_OK, NULL);
  CHECK(donerec_wait_all(&done, 10000) == 1);
  CHECK(done.slots[0].status == LMCP_E_CANCELLED);
  int cancelled = 0;
  for (int i = 0; i < 100 && cancelled < 1; i++) {
    cancelled = cancelled_tasks(c);
    if (cancelled < 1) sleep_ms(50);
  }
  CHECKM(cancelled == 1, NULL, "%s: tasks/list shows %d cancelled tasks", p->name, cancelled);
  donerec_free(&done);

  stop(c);
  evrec_wait_destroys(&ev, 1, 5000);
  evrec_free(&ev);
}

static void go_fixture(void) {
  char args[1024];
  snprintf(args, sizeof args, "\"command\":\"%s\",\"args\":[\"-legacy-tasks\"]", fixture_path());
  peer_t p = {"go fixture",   args,         "task_echo", "{\"text\":\"lemon\"}", "lemon", "task_ask",
              "task_forever", "task_maybe", "lemon"};
  check_peer(&p);
}

static void typescript_sdk_v1(void) {
  const char *args = "\"command\":\"node\",\"args\":[\"" LMCP_TSV1_DIR "/server.mjs\"]";
  peer_t p = {"typescript sdk v1", args,    "delay",      "{\"ms\":300}", "done after 300 ms", "ask",
              "forever",           "maybe", "maybe lemon"};
  check_peer(&p);
}

/* The receiver's questions that named their task, by kind. */
static pthread_mutex_t receiver_mu = PTHREAD_MUTEX_INITIALIZER;
static int receiver_elicited, receiver_sampled;
static const char *sample_answer =
    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"hi\"},\"model\":\"stand-in\"}";

static void answer_as_receiver(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  lmcp_client *c = (lmcp_client *)ud;
  int names_task = json != NULL && len > 0 && strstr(json, "\"task_id\"") != NULL;
  const char *answer = NULL;
  pthread_mutex_lock(&receiver_mu);
  if (strcmp(kind, "elicitation") == 0) {
    answer = elicit_answer;
    receiver_elicited += names_task;
  } else if (strcmp(kind, "sampling") == 0) {
    answer = sample_answer;
    receiver_sampled += names_task;
  }
  pthread_mutex_unlock(&receiver_mu);
  lmcp_client_respond(c, id, answer ? LMCP_OK : LMCP_E_UNSUPPORTED, answer, answer ? strlen(answer) : 0,
                      NULL);
}

static void receiver(void) {
  const char *cfg = "{\"transport\":{\"type\":\"stdio\",\"command\":\"node\",\"args\":[\"" LMCP_TSV1_DIR
                    "/server.mjs\"]},\"protocol\":{\"tasks\":true},"
                    "\"handlers\":{\"elicitation\":{},\"sampling\":{}},"
                    "\"timeouts\":{\"ready_ms\":20000,\"call_ms\":15000,\"close_grace_ms\":500}}";
  evrec_t ev;
  evrec_init(&ev);
  lmcp_client *c = start_client_with(cfg, &ev, answer_as_receiver, 30000);
  if (c == NULL) {
    evrec_free(&ev);
    return;
  }
  char *res = tool(c, "ask_as_task", "{}", NULL);
  CHECKE(res != NULL && strstr(res, "hello Ada (task created)") != NULL, res);
  lmcp_free(res);
  res = tool(c, "sample_as_task", "{}", NULL);
  CHECKE(res != NULL && strstr(res, "the model says hi (task created)") != NULL, res);
  lmcp_free(res);
  pthread_mutex_lock(&receiver_mu);
  CHECKM(receiver_elicited == 1 && receiver_sampled == 1, NULL,
         "questions naming their task: %d elicitation, %d sampling", receiver_elicited, receiver_sampled);
  pthread_mutex_unlock(&receiver_mu);
  stop(c);
  evrec_wait_destroys(&ev, 1, 5000);
  evrec_free(&ev);
}

static const h_test k_tests[] = {
    {"go_fixture", go_fixture},
    {"typescript_sdk_v1", typescript_sdk_v1},
    {"receiver", receiver},
};

int main(int argc, char **argv) {
  return h_main(argc, argv, k_tests, sizeof k_tests / sizeof k_tests[0], 60);
}
