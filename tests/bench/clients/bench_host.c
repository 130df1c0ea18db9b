/* bench_host: LemonMCP through a C host, for `make bench` (tests/bench).
 * It speaks the same command line and prints the same JSON line as
 * tests/bench/benchclient:
 *
 *   bench_host -mode calls -n N -par P -pn PN [-queue 1] (-stdio "CMD ARGS" | -url URL)
 *   bench_host -mode large -n N (-stdio ... | -url ...)
 *   bench_host -mode many -n CLIENTS -stdio ...
 *   bench_host -mode start -n STARTS -stdio ... [-sandbox JSON]  (a server's start cost)
 *
 * -telemetry 1 sets a telemetry handler (it counts the records) on each
 * client, to measure what telemetry costs against the row without one.
 *
 * Every call is lmcp_client_call_sync, as a blocking C host makes it; the
 * P-way figure runs P threads on one client, or with -queue 1 one thread
 * keeping P calls in flight with lmcp_client_call_queued (or
 * lmcp_host_call_tool_queued), as an event loop does. With -host 1 (modes calls and
 * large) the same calls go through the multi-server host instead: one
 * server named "bench" in an lmcp_host_new config, every call
 * lmcp_host_call_tool_sync of "bench__echo" (or "bench__large"). Figures are printed, never
 * checked: the machines are shared and noisy. */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lemonmcp.h"

#define PINNED "2025-11-25"
static const char ECHO[] = "{\"name\":\"echo\",\"arguments\":{\"text\":\"hello\"}}";
static const char LARGE[] = "{\"name\":\"large\",\"arguments\":{\"bytes\":10485760}}";
/* The same two calls through the host: the tool's host name and its
 * arguments. */
static const char ECHO_ARGS[] = "{\"text\":\"hello\"}";
static const char LARGE_ARGS[] = "{\"bytes\":10485760}";

/* host: -host 1, the calls go through an lmcp_host with one server. */
static int host;

/* telemetry: set a handler; records counts what it received. */
static int telemetry;
static long records;

static void count_record(void *ud, const char *kind, const char *json, size_t len) {
  (void)ud, (void)kind, (void)json, (void)len;
  __atomic_add_fetch(&records, 1, __ATOMIC_RELAXED);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* cpu_us is the CPU time (user + system) this process has used, all
 * threads: its difference over a run of calls, divided by the calls, is
 * what one call costs the host however loaded the machine is. */
static double cpu_us(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void die(const char *what, lmcp_status st, char *err) {
  fprintf(stderr, "bench_host: %s: %s (%s)\n", what, lmcp_status_string(st), err ? err : "");
  lmcp_free(err);
  exit(1);
}

/* proc_status reads one numeric field of /proc/self/status. */
static long proc_status(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  size_t n = strlen(field);
  long v = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return v;
}

static long tasks(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  long n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] != '.') n++;
  }
  closedir(d);
  return n;
}

/* json_str appends s as a JSON string (the arguments come from the bench
 * driver: paths and flags, no control characters). */
static void json_str(char *out, size_t cap, const char *s) {
  size_t len = strlen(out);
  if (len + 1 < cap) out[len++] = '"';
  for (; *s && len + 3 < cap; s++) {
    if (*s == '"' || *s == '\\') out[len++] = '\\';
    out[len++] = *s;
  }
  out[len++] = '"';
  out[len] = 0;
}

static char config[8192];

/* sandbox: -sandbox JSON, the stdio transport's "sandbox" object. */
static const char *sandbox;

/* append_transport appends a transport's members to config: the URL of a
 * Streamable HTTP server, or the command and arguments of a stdio one. */
static void append_transport(const char *stdio_cmd, const char *url) {
  if (url) {
    /* benchserver serves the legacy HTTP+SSE transport under /sse */
    size_t n = strlen(url);
    int sse = n >= 4 && strcmp(url + n - 4, "/sse") == 0;
    strcat(config, sse ? "\"type\":\"sse\",\"url\":" : "\"type\":\"streamable_http\",\"url\":");
    json_str(config, sizeof config, url);
    return;
  }
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", stdio_cmd);
  strcat(config, "\"type\":\"stdio\",\"command\":");
  char *save = NULL;
  char *tok = strtok_r(buf, " ", &save);
  json_str(config, sizeof config, tok);
  strcat(config, ",\"args\":[");
  int first = 1;
  while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
    if (!first) strcat(config, ",");
    json_str(config, sizeof config, tok);
    first = 0;
  }
  strcat(config, "]");
  if (sandbox) {
    strcat(config, ",\"sandbox\":");
    strncat(config, sandbox, sizeof config - strlen(config) - 1);
  }
}

/* build_config writes the client's config, or with -host the host's: one
 * server, "bench", with the same transport and protocol. */
static void build_config(const char *stdio_cmd, const char *url) {
  if (host) {
    strcpy(config, "{\"mcpServers\":{\"bench\":{\"protocol\":{\"mode\":\"legacy\",\"versions\":[\"" PINNED "\"]},");
    append_transport(stdio_cmd, url);
    strcat(config, "}}}");
    return;
  }
  strcpy(config, "{\"protocol\":{\"mode\":\"legacy\",\"versions\":[\"" PINNED "\"]},\"transport\":{");
  append_transport(stdio_cmd, url);
  strcat(config, "}}");
}

static lmcp_client *connect_client(void) {
  lmcp_client *c = NULL;
  char *err = NULL;
  lmcp_status st = lmcp_client_new(config, strlen(config), &c, &err);
  if (st != LMCP_OK) die("lmcp_client_new", st, err);
  if (telemetry && (st = lmcp_client_set_telemetry_handler(c, count_record, NULL, NULL, &err)) != LMCP_OK)
    die("lmcp_client_set_telemetry_handler", st, err);
  if ((st = lmcp_client_connect(c, &err)) != LMCP_OK) die("lmcp_client_connect", st, err);
  if ((st = lmcp_client_wait_ready(c, 30000, &err)) != LMCP_OK) die("lmcp_client_wait_ready", st, err);
  return c;
}

static void call(lmcp_client *c, const char *params) {
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_client_call_sync(c, "tools/call", params, strlen(params), NULL, 0, &out, &n, &err);
  if (st != LMCP_OK) die("lmcp_client_call_sync", st, err);
  lmcp_free(out);
}

static void close_client(lmcp_client *c) {
  char *err = NULL;
  lmcp_client_close(c, 5000, &err);
  lmcp_free(err);
  lmcp_client_free(c);
}

/* conn is what modes calls and large call through: a client, or with
 * -host 1 a host whose one server is "bench". */
struct conn {
  lmcp_client *c;
  lmcp_host *h;
};

static struct conn open_conn(void) {
  struct conn k = {NULL, NULL};
  if (!host) {
    k.c = connect_client();
    return k;
  }
  char *err = NULL;
  lmcp_status st = lmcp_host_new(config, strlen(config), &k.h, &err);
  if (st != LMCP_OK) die("lmcp_host_new", st, err);
  if (telemetry && (st = lmcp_host_set_telemetry_handler(k.h, count_record, NULL, NULL, &err)) != LMCP_OK)
    die("lmcp_host_set_telemetry_handler", st, err);
  if ((st = lmcp_host_connect(k.h, &err)) != LMCP_OK) die("lmcp_host_connect", st, err);
  if ((st = lmcp_host_wait_ready(k.h, 30000, &err)) != LMCP_OK) die("lmcp_host_wait_ready", st, err);
  return k;
}

/* conn_call makes one call of echo, or of large when large is set. */
static void conn_call(struct conn k, int large) {
  if (k.c) {
    call(k.c, large ? LARGE : ECHO);
    return;
  }
  const char *name = large ? "bench__large" : "bench__echo", *args = large ? LARGE_ARGS : ECHO_ARGS;
  char *out = NULL, *err = NULL;
  size_t n = 0;
  lmcp_status st = lmcp_host_call_tool_sync(k.h, name, args, strlen(args), NULL, 0, &out, &n, &err);
  if (st != LMCP_OK) die("lmcp_host_call_tool_sync", st, err);
  lmcp_free(out);
}

static void close_conn(struct conn k) {
  if (k.c) {
    close_client(k.c);
    return;
  }
  char *err = NULL;
  lmcp_host_close(k.h, 5000, &err);
  lmcp_free(err);
  lmcp_host_free(k.h);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

struct worker {
  struct conn c;
  int calls;
};

static void *work(void *arg) {
  struct worker *w = arg;
  for (int i = 0; i < w->calls; i++) conn_call(w->c, 0);
  return NULL;
}

/* queued: -queue 1, the P-way figure keeps P calls in flight from this one
 * thread with the never-blocking queued calls instead of P threads making
 * blocking ones: each completion popped from the queue starts the next
 * call, as an event loop does (the queue's descriptor polled). */
static int queued;

static void start_queued(struct conn k, lmcp_queue *q) {
  char *err = NULL;
  lmcp_call_id id = 0;
  lmcp_status st;
  if (k.c) {
    st = lmcp_client_call_queued(k.c, "tools/call", ECHO, strlen(ECHO), NULL, 0, q, 0, &id, &err);
  } else {
    st = lmcp_host_call_tool_queued(k.h, "bench__echo", ECHO_ARGS, strlen(ECHO_ARGS), NULL, 0, q, 0, &id, &err);
  }
  if (st != LMCP_OK) die("queued call", st, err);
}

/* run_queued makes calls calls, par of them in flight at a time. */
static void run_queued(struct conn k, int par, int calls) {
  char *err = NULL;
  lmcp_queue *q = NULL;
  int fd = -1;
  lmcp_status st = lmcp_queue_new(&q, &fd, &err);
  if (st != LMCP_OK) die("lmcp_queue_new", st, err);
  int started = 0, done = 0;
  for (; started < par && started < calls; started++) start_queued(k, q);
  while (done < calls) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, -1) < 0) continue;
    lmcp_completion *batch = NULL;
    size_t count = 0;
    if ((st = lmcp_queue_pop(q, 0, &batch, &count, NULL)) != LMCP_OK) die("lmcp_queue_pop", st, NULL);
    for (size_t i = 0; i < count; i++) {
      if (batch[i].status != LMCP_OK) die("queued call's completion", batch[i].status, NULL);
      done++;
      if (started < calls) {
        start_queued(k, q);
        started++;
      }
    }
    lmcp_free(batch);
  }
  lmcp_queue_free(q);
}

static void mode_calls(int n, int par, int pn) {
  double t0 = now_us();
  struct conn c = open_conn();
  double connect_us = now_us() - t0;
  t0 = now_us();
  conn_call(c, 0);
  double first_us = now_us() - t0;
  int warm = n / 10 < 200 ? n / 10 : 200;
  for (int i = 0; i < warm; i++) conn_call(c, 0);
  double *lat = malloc(sizeof(double) * (size_t)n);
  double cpu0 = cpu_us();
  for (int i = 0; i < n; i++) {
    t0 = now_us();
    conn_call(c, 0);
    lat[i] = now_us() - t0;
  }
  double cpu_call = (cpu_us() - cpu0) / n;
  qsort(lat, (size_t)n, sizeof(double), cmp_double);
  pthread_t th[256];
  struct worker w[256];
  if (par > 256) par = 256;
  t0 = now_us();
  cpu0 = cpu_us();
  if (queued) {
    run_queued(c, par, pn / par * par);
  } else {
    for (int i = 0; i < par; i++) {
      w[i].c = c;
      w[i].calls = pn / par;
      pthread_create(&th[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < par; i++) pthread_join(th[i], NULL);
  }
  double wall = now_us() - t0;
  double pcpu_call = (cpu_us() - cpu0) / (pn / par * par);
  printf("{\"connect_us\":%.1f,\"first_us\":%.1f,\"p50_us\":%.2f,\"p99_us\":%.2f,\"cps\":%.0f,\"rss_kb\":%ld,\"threads\":%ld,"
         "\"cpu_us\":%.2f,\"pcpu_us\":%.2f}\n",
         connect_us, first_us, lat[n / 2], lat[n * 99 / 100], (pn / par * par) / (wall / 1e6), proc_status("VmRSS"),
         tasks(), cpu_call, pcpu_call);
  free(lat);
  close_conn(c);
}

static void mode_large(int n) {
  struct conn c = open_conn();
  conn_call(c, 1); /* warm-up */
  double *ts = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    conn_call(c, 1);
    ts[i] = now_us() - t0;
  }
  qsort(ts, (size_t)n, sizeof(double), cmp_double);
  printf("{\"large_ms\":%.2f,\"hwm_kb\":%ld}\n", ts[n / 2] / 1e3, proc_status("VmHWM"));
  free(ts);
  close_conn(c);
}

/* count_children counts this process's children, zombies included. */
static int count_children(void) {
  DIR *d = opendir("/proc");
  if (!d) return -1;
  char self[32], path[300], buf[512];
  snprintf(self, sizeof self, "%d", (int)getpid());
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *p = strrchr(buf, ')'); /* after it: state ppid ... */
    char state, ppid[32];
    if (p && sscanf(p + 1, " %c %31s", &state, ppid) == 2 && !strcmp(ppid, self)) n++;
  }
  closedir(d);
  return n;
}

/* children_left waits up to two seconds for the children to go and
 * reports how many are left: what the clients leave behind. */
static int children_left(void) {
  for (int i = 0; i < 40; i++) {
    int n = count_children();
    if (n <= 0) return n;
    struct timespec t = {0, 50 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  return count_children();
}

/* mode_many holds n clients at once, each having made one call. */
static void mode_many(int n) {
  long base = proc_status("VmRSS");
  lmcp_client **cs = calloc((size_t)n, sizeof(*cs));
  double t0 = now_us();
  char *err = NULL;
  for (int i = 0; i < n; i++) { /* connect returns at once: all start together */
    lmcp_status st = lmcp_client_new(config, strlen(config), &cs[i], &err);
    if (st != LMCP_OK) die("lmcp_client_new", st, err);
    if ((st = lmcp_client_connect(cs[i], &err)) != LMCP_OK) die("lmcp_client_connect", st, err);
  }
  for (int i = 0; i < n; i++) {
    lmcp_status st = lmcp_client_wait_ready(cs[i], 60000, &err);
    if (st != LMCP_OK) die("lmcp_client_wait_ready", st, err);
    call(cs[i], ECHO);
  }
  double elapsed = now_us() - t0;
  struct timespec settle = {0, 200 * 1000 * 1000};
  nanosleep(&settle, NULL);
  long rss = proc_status("VmRSS");
  long threads = tasks();
  for (int i = 0; i < n; i++) close_client(cs[i]); /* each server reaped before exit */
  free(cs);
  printf("{\"clients\":%d,\"rss_kb\":%ld,\"rss_per_client_kb\":%.1f,\"threads\":%ld,\"connect_all_ms\":%.0f,\"children_left\":%d}\n",
         n, rss, (double)(rss - base) / n, threads, elapsed / 1e3, children_left());
}

/* mode_start starts, connects and closes one stdio server n times (after
 * one start that warms the library and the sandbox probe up): what a
 * server's start costs, through the sandbox helper or not. */
static void mode_start(int n) {
  close_client(connect_client());
  double *lat = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    lmcp_client *c = connect_client();
    lat[i] = now_us() - t0;
    close_client(c);
  }
  qsort(lat, (size_t)n, sizeof(double), cmp_double);
  printf("{\"start_p50_ms\":%.2f,\"start_p90_ms\":%.2f}\n", lat[n / 2] / 1e3, lat[n * 9 / 10] / 1e3);
  free(lat);
}

int main(int argc, char **argv) {
  const char *mode = "calls", *stdio_cmd = NULL, *url = NULL;
  int n = 2000, par = 16, pn = 4000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "-mode")) mode = v;
    else if (!strcmp(k, "-stdio")) stdio_cmd = v;
    else if (!strcmp(k, "-url")) url = v;
    else if (!strcmp(k, "-n")) n = atoi(v);
    else if (!strcmp(k, "-par")) par = atoi(v);
    else if (!strcmp(k, "-pn")) pn = atoi(v);
    else if (!strcmp(k, "-telemetry")) telemetry = atoi(v);
    else if (!strcmp(k, "-host")) host = atoi(v);
    else if (!strcmp(k, "-queue")) queued = atoi(v);
    else if (!strcmp(k, "-sandbox")) sandbox = v;
    else {
      fprintf(stderr, "bench_host: unknown flag %s\n", k);
      return 2;
    }
  }
  if ((stdio_cmd == NULL) == (url == NULL) || n < 1 || par < 1 || pn < par) {
    fprintf(stderr, "bench_host: need exactly one of -stdio and -url, and positive counts\n");
    return 2;
  }
  if (host && !strcmp(mode, "many")) {
    fprintf(stderr, "bench_host: -host 1 runs modes calls and large only\n");
    return 2;
  }
  build_config(stdio_cmd, url);
  if (!strcmp(mode, "calls")) mode_calls(n, par, pn);
  else if (!strcmp(mode, "large")) mode_large(n);
  else if (!strcmp(mode, "many")) mode_many(n);
  else if (!strcmp(mode, "start")) mode_start(n);
  else {
    fprintf(stderr, "bench_host: unknown -mode %s\n", mode);
    return 2;
  }
  return 0;
}
