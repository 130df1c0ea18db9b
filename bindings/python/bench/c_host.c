/*
 * c_host.c — the C host the Python bench compares against: the same
 * tools/call echo through liblemonmcp with no binding in between.
 *
 *   c_host <server> <calls> <rounds> <inflight> [queue] [host] [threads]
 *
 * inflight 0: sequential lmcp_client_call_sync calls; inflight N > 0: N calls
 * kept in flight with lmcp_client_call (each completion starts the next).
 * With "queue": the N calls are made with lmcp_client_call_queued and the
 * main thread polls the queue's descriptor, pops every completion and
 * starts the next calls (no callback at all).
 * With "host": the same calls through a host of one server ("s"):
 * lmcp_host_call_sync, lmcp_host_call and lmcp_host_call_queued.
 * With "threads": the N in flight are N threads each making sequential
 * call_sync calls (the model of N Python threads on a blocking client).
 * Prints one line per round: the µs per call, wall time then this process's
 * CPU time (all its threads, not the server's). Warm-up
 * calls run first and are not counted. Built and run by bench_call.py.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "lemonmcp.h"

static const char PARAMS[] = "{\"name\":\"echo\",\"arguments\":{\"text\":\"hello\"}}";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time of this process (every thread; not the server's). */
static double cpu_us(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void die(const char *what, lmcp_status st, char *err) {
  fprintf(stderr, "c_host: %s: %s %s\n", what, lmcp_status_string(st), err ? err : "");
  lmcp_free(err);
  exit(2);
}

static lmcp_client *client;
static lmcp_host *host; /* with "host": the calls go through it instead */

/* Windowed driver: `left` calls still to start, `pending` not finished. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static long left, pending, failed;

static void start_one(void);

static void on_done(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  (void)ud, (void)id, (void)json, (void)len;
  pthread_mutex_lock(&mu);
  if (st != LMCP_OK) failed++;
  int more = left > 0;
  if (more) left--;
  else pending--;
  if (pending == 0) pthread_cond_signal(&idle);
  pthread_mutex_unlock(&mu);
  if (more) start_one();
}

static void start_one(void) {
  char *err = NULL;
  lmcp_status st = host ? lmcp_host_call(host, "s", "tools/call", PARAMS, sizeof PARAMS - 1, NULL, 0, on_done, NULL,
                                         NULL, &err)
                        : lmcp_client_call(client, "tools/call", PARAMS, sizeof PARAMS - 1, NULL, 0, on_done, NULL,
                                           NULL, &err);
  if (st != LMCP_OK) die("lmcp_client_call", st, err);
}

static void run_window(long calls, long inflight) {
  pthread_mutex_lock(&mu);
  left = calls - inflight;
  pending = inflight;
  pthread_mutex_unlock(&mu);
  for (long i = 0; i < inflight; i++) start_one();
  pthread_mutex_lock(&mu);
  while (pending > 0) pthread_cond_wait(&idle, &mu);
  pthread_mutex_unlock(&mu);
  if (failed) die("a call failed", LMCP_E_INTERNAL, NULL);
}

static lmcp_queue *queue;
static int queue_fd = -1;

static void start_queued(uint64_t tag) {
  char *err = NULL;
  lmcp_status st = host ? lmcp_host_call_queued(host, "s", "tools/call", PARAMS, sizeof PARAMS - 1, NULL, 0, queue,
                                                tag, NULL, &err)
                        : lmcp_client_call_queued(client, "tools/call", PARAMS, sizeof PARAMS - 1, NULL, 0, queue,
                                                  tag, NULL, &err);
  if (st != LMCP_OK) die("lmcp_client_call_queued", st, err);
}

static void run_queue(long calls, long inflight) {
  long started = 0, finished = 0;
  for (; started < inflight; started++) start_queued((uint64_t)started);
  while (finished < calls) {
    struct pollfd p = {queue_fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) die("poll", LMCP_E_TIMEOUT, NULL);
    lmcp_completion *batch = NULL;
    size_t n = 0;
    lmcp_status st = lmcp_queue_pop(queue, 0, &batch, &n, NULL);
    if (st != LMCP_OK) die("lmcp_queue_pop", st, NULL);
    for (size_t i = 0; i < n; i++) {
      if (batch[i].status != LMCP_OK) die("a call failed", batch[i].status, NULL);
      finished++;
      if (started < calls) start_queued((uint64_t)started++);
    }
    lmcp_free(batch);
  }
}

static void run_seq(long calls) {
  for (long i = 0; i < calls; i++) {
    char *out = NULL, *err = NULL;
    size_t n = 0;
    lmcp_status st =
        host ? lmcp_host_call_sync(host, "s", "tools/call", PARAMS, sizeof PARAMS - 1, NULL, 0, &out, &n, &err)
             : lmcp_client_call_sync(client, "tools/call", PARAMS, sizeof PARAMS - 1, NULL, 0, &out, &n, &err);
    if (st != LMCP_OK) die("lmcp_client_call_sync", st, err);
    lmcp_free(out);
  }
}

static long per_thread;

static void *seq_thread(void *arg) {
  (void)arg;
  run_seq(per_thread);
  return NULL;
}

static void run_threads(long calls, long n) {
  pthread_t tids[256];
  per_thread = calls / n;
  for (long i = 0; i < n; i++)
    if (pthread_create(&tids[i], NULL, seq_thread, NULL) != 0) die("pthread_create", LMCP_E_INTERNAL, NULL);
  for (long i = 0; i < n; i++) pthread_join(tids[i], NULL);
}

int main(int argc, char **argv) {
  int queued = 0, hosted = 0, threaded = 0, bad = argc < 5;
  for (int i = 5; i < argc; i++) {
    if (strcmp(argv[i], "queue") == 0) queued = 1;
    else if (strcmp(argv[i], "host") == 0) hosted = 1;
    else if (strcmp(argv[i], "threads") == 0) threaded = 1;
    else bad = 1;
  }
  if (bad) {
    fprintf(stderr, "usage: c_host <server> <calls> <rounds> <inflight> [queue] [host] [threads]\n");
    return 2;
  }
  const char *server = argv[1];
  long calls = atol(argv[2]), rounds = atol(argv[3]), inflight = atol(argv[4]);
  if (calls <= 0 || rounds <= 0 || inflight < 0 || inflight > calls || inflight > 256) {
    fprintf(stderr, "c_host: bad numbers\n");
    return 2;
  }
  if (threaded && inflight) calls -= calls % inflight; /* every thread makes as many calls */
  char cfg[4096];
  char *err = NULL;
  lmcp_status st;
  if (hosted) {
    snprintf(cfg, sizeof cfg, "{\"mcpServers\":{\"s\":{\"command\":\"%s\"}}}", server);
    if ((st = lmcp_host_new(cfg, strlen(cfg), &host, &err)) != LMCP_OK) die("lmcp_host_new", st, err);
    if ((st = lmcp_host_connect(host, &err)) != LMCP_OK) die("lmcp_host_connect", st, err);
    if ((st = lmcp_host_wait_ready(host, 10000, &err)) != LMCP_OK) die("lmcp_host_wait_ready", st, err);
  } else {
    snprintf(cfg, sizeof cfg, "{\"transport\":{\"type\":\"stdio\",\"command\":\"%s\"}}", server);
    if ((st = lmcp_client_new(cfg, strlen(cfg), &client, &err)) != LMCP_OK) die("lmcp_client_new", st, err);
    if ((st = lmcp_client_connect(client, &err)) != LMCP_OK) die("lmcp_client_connect", st, err);
    if ((st = lmcp_client_wait_ready(client, 10000, &err)) != LMCP_OK) die("lmcp_client_wait_ready", st, err);
  }

  if (queued && (st = lmcp_queue_new(&queue, &queue_fd, &err)) != LMCP_OK) die("lmcp_queue_new", st, err);

  long warm = calls < 200 ? calls : 200;
  if (threaded && inflight) run_threads(warm, inflight < warm ? inflight : warm);
  else if (queued && inflight) run_queue(warm, inflight < warm ? inflight : warm);
  else if (inflight) run_window(warm, inflight < warm ? inflight : warm);
  else run_seq(warm);
  for (long r = 0; r < rounds; r++) {
    double t0 = now_us(), c0 = cpu_us();
    if (threaded && inflight) run_threads(calls, inflight);
    else if (queued && inflight) run_queue(calls, inflight);
    else if (inflight) run_window(calls, inflight);
    else run_seq(calls);
    printf("%.3f %.3f\n", (now_us() - t0) / calls, (cpu_us() - c0) / calls);
    fflush(stdout);
  }
  if (hosted) {
    lmcp_host_close(host, -1, NULL);
    lmcp_host_free(host);
  } else {
    lmcp_client_close(client, -1, NULL);
    lmcp_client_free(client);
  }
  lmcp_queue_free(queue);
  return 0;
}
