/* harness.c — see harness.h. */
#define _GNU_SOURCE
#include "harness.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef LMCP_FIXTURE_PATH
#define LMCP_FIXTURE_PATH "build/fixtures/mcpfixture"
#endif

/* --------------------------------------------------------------- checking */

int h_checks_failed;
static int h_passed, h_failed;
static const char *h_current = "(none)";

int h_check(int ok, const char *expr, const char *file, int line, const char *err_json, const char *fmt,
            ...) {
  if (ok) return 1;
  h_checks_failed++;
  fprintf(stderr, "  CHECK FAILED %s:%d [%s]: %s", file, line, h_current, expr);
  if (fmt != NULL) {
    va_list ap;
    va_start(ap, fmt);
    fputs(" — ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
  }
  fputc('\n', stderr);
  if (err_json != NULL) fprintf(stderr, "    err: %s\n", err_json);
  return 0;
}

int h_check_status(lmcp_status got, lmcp_status want, const char *expr, const char *file, int line,
                   const char *err_json) {
  if (got == want) return 1;
  return h_check(0, expr, file, line, err_json, "got %d (%s), want %d (%s)", (int)got,
                 lmcp_status_string(got), (int)want, lmcp_status_string(want));
}

/* The watchdog: one thread, armed per test. */
static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cv = PTHREAD_COND_INITIALIZER;
static int64_t wd_deadline; /* 0: disarmed */
static int wd_started;

static void *watchdog(void *arg) {
  (void)arg;
  pthread_mutex_lock(&wd_mu);
  for (;;) {
    if (wd_deadline == 0) {
      pthread_cond_wait(&wd_cv, &wd_mu);
      continue;
    }
    int64_t left = wd_deadline - now_ms();
    if (left <= 0) {
      fprintf(stderr, "  WATCHDOG: test %s did not finish in time (a hang)\n", h_current);
      printf("[FAIL] %s (hung)\n", h_current);
      printf("%d passed, %d failed\n", h_passed, h_failed + 1);
      fflush(stdout);
      fflush(stderr);
      _exit(3);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += left / 1000;
    ts.tv_nsec += (left % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&wd_cv, &wd_mu, &ts);
  }
  return NULL;
}

void h_run_test(const char *name, void (*fn)(void), int deadline_s) {
  if (!wd_started) {
    pthread_t t;
    pthread_create(&t, NULL, watchdog, NULL);
    pthread_detach(t);
    wd_started = 1;
  }
  pthread_mutex_lock(&wd_mu);
  h_current = name;
  wd_deadline = now_ms() + (int64_t)deadline_s * 1000 * h_time_scale;
  pthread_cond_signal(&wd_cv);
  pthread_mutex_unlock(&wd_mu);

  printf("[ RUN  ] %s\n", name);
  fflush(stdout);
  h_checks_failed = 0;
  int64_t t0 = now_ms();
  fn();
  int64_t dt = now_ms() - t0;

  pthread_mutex_lock(&wd_mu);
  wd_deadline = 0;
  pthread_cond_signal(&wd_cv);
  pthread_mutex_unlock(&wd_mu);
  if (h_checks_failed == 0) {
    h_passed++;
    printf("[  OK  ] %s (%lld ms)\n", name, (long long)dt);
  } else {
    h_failed++;
    printf("[ FAIL ] %s (%d failed checks, %lld ms)\n", name, h_checks_failed, (long long)dt);
  }
  fflush(stdout);
}

int h_main(int argc, char **argv, const h_test *tests, size_t n, int deadline_s) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGPIPE, SIG_IGN);
  for (size_t i = 0; i < n; i++) {
    int selected = argc <= 1;
    for (int a = 1; a < argc; a++) selected |= strstr(tests[i].name, argv[a]) != NULL;
    if (selected) h_run_test(tests[i].name, tests[i].fn, deadline_s);
  }
  temp_dir_cleanup();
  return h_finish();
}

int h_finish(void) {
  printf("%d passed, %d failed\n", h_passed, h_failed);
  fflush(stdout);
  return h_failed == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------ utils */

int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

char *read_file(const char *path, size_t *len_out) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
    size_t got = fread(buf + n, 1, 4096, f);
    n += got;
    if (got < 4096) break;
  }
  fclose(f);
  buf[n] = 0;
  if (len_out != NULL) *len_out = n;
  return buf;
}

int count_substr(const char *hay, const char *needle) {
  int n = 0;
  size_t nl = strlen(needle);
  if (hay == NULL || nl == 0) return 0;
  for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + nl, needle)) n++;
  return n;
}

/* ------------------------------------------------------------------- JSON */

typedef struct {
  const char *s, *end;
  int depth;
} jp;

static void j_ws(jp *p) {
  while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static int j_value(jp *p);

static int j_string(jp *p) {
  if (p->s >= p->end || *p->s != '"') return 0;
  p->s++;
  while (p->s < p->end) {
    unsigned char c = (unsigned char)*p->s++;
    if (c == '"') return 1;
    if (c < 0x20) return 0;
    if (c == '\\') {
      if (p->s >= p->end) return 0;
      char e = *p->s++;
      if (e == 'u') {
        for (int i = 0; i < 4; i++) {
          if (p->s >= p->end || !isxdigit((unsigned char)*p->s)) return 0;
          p->s++;
        }
      } else if (strchr("\"\\/bfnrt", e) == NULL) {
        return 0;
      }
    }
  }
  return 0;
}

static int j_digits(jp *p) {
  const char *start = p->s;
  while (p->s < p->end && isdigit((unsigned char)*p->s)) p->s++;
  return p->s > start;
}

static int j_number(jp *p) {
  if (p->s < p->end && *p->s == '-') p->s++;
  if (p->s < p->end && *p->s == '0') {
    p->s++;
  } else if (!j_digits(p)) {
    return 0;
  }
  if (p->s < p->end && *p->s == '.') {
    p->s++;
    if (!j_digits(p)) return 0;
  }
  if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
    p->s++;
    if (p->s < p->end && (*p->s == '+' || *p->s == '-')) p->s++;
    if (!j_digits(p)) return 0;
  }
  return 1;
}

static int j_lit(jp *p, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(p->end - p->s) < n || memcmp(p->s, lit, n) != 0) return 0;
  p->s += n;
  return 1;
}

static int j_value(jp *p) {
  j_ws(p);
  if (p->s >= p->end) return 0;
  if (++p->depth > 512) return 0;
  int ok;
  switch (*p->s) {
  case '{':
    p->s++;
    j_ws(p);
    if (p->s < p->end && *p->s == '}') {
      p->s++;
      ok = 1;
      break;
    }
    for (;;) {
      j_ws(p);
      if (!j_string(p)) return 0;
      j_ws(p);
      if (p->s >= p->end || *p->s != ':') return 0;
      p->s++;
      if (!j_value(p)) return 0;
      j_ws(p);
      if (p->s < p->end && *p->s == ',') {
        p->s++;
        continue;
      }
      if (p->s < p->end && *p->s == '}') {
        p->s++;
        break;
      }
      return 0;
    }
    ok = 1;
    break;
  case '[':
    p->s++;
    j_ws(p);
    if (p->s < p->end && *p->s == ']') {
      p->s++;
      ok = 1;
      break;
    }
    for (;;) {
      if (!j_value(p)) return 0;
      j_ws(p);
      if (p->s < p->end && *p->s == ',') {
        p->s++;
        continue;
      }
      if (p->s < p->end && *p->s == ']') {
        p->s++;
        break;
      }
      return 0;
    }
    ok = 1;
    break;
  case '"': ok = j_string(p); break;
  case 't': ok = j_lit(p, "true"); break;
  case 'f': ok = j_lit(p, "false"); break;
  case 'n': ok = j_lit(p, "null"); break;
  default: ok = j_number(p); break;
  }
  p->depth--;
  return ok;
}

int json_valid(const char *s, size_t len) {
  if (s == NULL) return 0;
  jp p = {s, s + len, 0};
  if (!j_value(&p)) return 0;
  j_ws(&p);
  return p.s == p.end;
}

static const char *json_find_key(const char *json, const char *key) {
  if (json == NULL) return NULL;
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\"", key);
  for (const char *p = strstr(json, pat); p != NULL; p = strstr(p + 1, pat)) {
    const char *q = p + strlen(pat);
    while (*q == ' ') q++;
    if (*q == ':') {
      q++;
      while (*q == ' ') q++;
      return q;
    }
  }
  return NULL;
}

int json_get_int(const char *json, const char *key, long long *out) {
  const char *q = json_find_key(json, key);
  if (q == NULL || !(*q == '-' || isdigit((unsigned char)*q))) return 0;
  *out = strtoll(q, NULL, 10);
  return 1;
}

int json_get_str(const char *json, const char *key, char *buf, size_t n) {
  const char *q = json_find_key(json, key);
  if (q == NULL || *q != '"' || n == 0) return 0;
  q++;
  size_t i = 0;
  while (*q && *q != '"') {
    if (*q == '\\' && q[1]) {
      if (i + 1 < n) buf[i++] = *q;
      q++;
    }
    if (i + 1 < n) buf[i++] = *q;
    q++;
  }
  buf[i] = 0;
  return *q == '"';
}

int check_err_json(const char *err, lmcp_status want, const char *file, int line) {
  int ok = 1;
  long long st = 0;
  char msg[8];
  ok &= h_check(err != NULL, "err != NULL", file, line, NULL, "no err JSON for status %d", (int)want);
  if (err == NULL) return 0;
  ok &= h_check(json_valid(err, strlen(err)), "json_valid(err)", file, line, err, NULL);
  ok &= h_check(json_get_int(err, "status", &st) && st == want, "err.status == want", file, line, err,
                "want %d", (int)want);
  ok &= h_check(json_get_str(err, "message", msg, sizeof msg), "err has \"message\"", file, line, err, NULL);
  return ok;
}

/* ----------------------------------------------------------------- config */

const char *fixture_path(void) {
  const char *p = getenv("LMCP_FIXTURE");
  return p != NULL && *p ? p : LMCP_FIXTURE_PATH;
}

char *fixture_config(char *buf, size_t n, const char *args, const char *tr_extra, const char *extra) {
  int w = snprintf(buf, n, "{\"transport\":{\"type\":\"stdio\",\"command\":\"%s\",\"args\":[%s]%s%s}%s%s}",
                   fixture_path(), args ? args : "", tr_extra ? "," : "", tr_extra ? tr_extra : "",
                   extra ? "," : "", extra ? extra : "");
  if (w < 0 || (size_t)w >= n) {
    fprintf(stderr, "fixture_config: buffer too small\n");
    abort();
  }
  return buf;
}

static char tmp_dir[256];
static int tmp_seq;

void temp_path(char *buf, size_t n, const char *stem) {
  if (tmp_dir[0] == 0) {
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/lmcp-ctest-XXXXXX");
    if (mkdtemp(tmp_dir) == NULL) {
      perror("mkdtemp");
      abort();
    }
  }
  snprintf(buf, n, "%s/%s-%d", tmp_dir, stem, ++tmp_seq);
}

void temp_dir_cleanup(void) {
  if (tmp_dir[0] == 0) return;
  /* No fork() after loading the Go library (header rule): no `rm -rf`. */
  DIR *d = opendir(tmp_dir);
  if (d != NULL) {
    struct dirent *e;
    char path[600];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(tmp_dir);
  tmp_dir[0] = 0;
}

/* ------------------------------------------------------------ event recorder */

void evrec_init(evrec_t *r) {
  memset(r, 0, sizeof *r);
  r->live = 1;
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
}

void evrec_cb(void *ud, const char *kind, const char *json, size_t len) {
  evrec_t *r = ud;
  int bad = kind == NULL || json == NULL || json[len] != 0 || !json_valid(json, len);
  pthread_mutex_lock(&r->mu);
  r->inflight++;
  if (r->inflight > r->max_inflight) r->max_inflight = r->inflight;
  if (r->destroys > 0) r->after_destroy++;
  if (bad) r->bad_payloads++;
  pthread_mutex_unlock(&r->mu);

  char *copy = malloc(len + 1);
  if (json != NULL) memcpy(copy, json, len);
  copy[len] = 0;

  pthread_mutex_lock(&r->mu);
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->evs = realloc(r->evs, r->cap * sizeof *r->evs);
  }
  h_event *e = &r->evs[r->n++];
  snprintf(e->kind, sizeof e->kind, "%s", kind ? kind : "(null)");
  e->json = copy;
  e->len = len;
  r->inflight--;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

void evrec_destroy(void *ud) {
  evrec_t *r = ud;
  pthread_mutex_lock(&r->mu);
  r->destroys++;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static int ev_match(const h_event *e, const char *kind, const char *needle) {
  return (kind == NULL || strcmp(e->kind, kind) == 0) && (needle == NULL || strstr(e->json, needle) != NULL);
}

static int evrec_count_locked(evrec_t *r, const char *kind, const char *needle) {
  int c = 0;
  for (size_t i = 0; i < r->n; i++) c += ev_match(&r->evs[i], kind, needle);
  return c;
}

int evrec_count(evrec_t *r, const char *kind, const char *needle) {
  pthread_mutex_lock(&r->mu);
  int c = evrec_count_locked(r, kind, needle);
  pthread_mutex_unlock(&r->mu);
  return c;
}

static void deadline_ts(struct timespec *ts, int ms) {
  clock_gettime(CLOCK_REALTIME, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (long)(ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

int evrec_wait(evrec_t *r, const char *kind, const char *needle, int n, int timeout_ms) {
  struct timespec ts;
  deadline_ts(&ts, timeout_ms);
  pthread_mutex_lock(&r->mu);
  int c;
  while ((c = evrec_count_locked(r, kind, needle)) < n) {
    if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == ETIMEDOUT) {
      c = evrec_count_locked(r, kind, needle);
      break;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return c;
}

int evrec_wait_destroys(evrec_t *r, int n, int timeout_ms) {
  struct timespec ts;
  deadline_ts(&ts, timeout_ms);
  pthread_mutex_lock(&r->mu);
  while (r->destroys < n) {
    if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == ETIMEDOUT) break;
  }
  int d = r->destroys;
  pthread_mutex_unlock(&r->mu);
  return d;
}

char *evrec_first(evrec_t *r, const char *kind, const char *needle) {
  char *out = NULL;
  pthread_mutex_lock(&r->mu);
  for (size_t i = 0; i < r->n; i++) {
    if (ev_match(&r->evs[i], kind, needle)) {
      out = strdup(r->evs[i].json);
      break;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return out;
}

int evrec_index(evrec_t *r, const char *kind, const char *needle) {
  int idx = -1;
  pthread_mutex_lock(&r->mu);
  for (size_t i = 0; i < r->n; i++) {
    if (ev_match(&r->evs[i], kind, needle)) {
      idx = (int)i;
      break;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return idx;
}

void evrec_free(evrec_t *r) {
  for (size_t i = 0; i < r->n; i++) free(r->evs[i].json);
  free(r->evs);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------- completion recorder */

__thread int h_in_call;
int h_inline_completions;

void donerec_init(donerec_t *r, int n) {
  memset(r, 0, sizeof *r);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  r->n = n;
  r->slots = calloc((size_t)n, sizeof *r->slots);
  for (int i = 0; i < n; i++) r->slots[i].rec = r;
}

void done_cb(void *ud, lmcp_call_id id, lmcp_status st, const char *json, size_t len) {
  doneslot_t *s = ud;
  donerec_t *r = s->rec;
  int bad = json == NULL || json[len] != 0 || !json_valid(json, len);
  char *copy = malloc(len + 1);
  if (json != NULL) memcpy(copy, json, len);
  copy[len] = 0;
  pthread_mutex_lock(&r->mu);
  r->inflight++;
  if (r->inflight > r->max_inflight) r->max_inflight = r->inflight;
  s->count++;
  r->total++;
  if (h_in_call) __atomic_add_fetch(&h_inline_completions, 1, __ATOMIC_SEQ_CST);
  if (s->count == 1) {
    s->status = st;
    s->json = copy;
    s->len = len;
    s->cb_call_id = id;
    s->bad_payload = bad;
    s->on_caller_thread = h_in_call;
    copy = NULL;
  }
  pthread_mutex_unlock(&r->mu);
  free(copy);
  /* Stay "inside" the callback briefly so overlapping deliveries would show. */
  sleep_ms(0);
  pthread_mutex_lock(&r->mu);
  r->inflight--;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

int donerec_wait_all(donerec_t *r, int timeout_ms) {
  struct timespec ts;
  deadline_ts(&ts, timeout_ms);
  pthread_mutex_lock(&r->mu);
  int done;
  for (;;) {
    done = 0;
    for (int i = 0; i < r->n; i++) done += r->slots[i].count > 0;
    if (done == r->n) break;
    if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == ETIMEDOUT) {
      done = 0;
      for (int i = 0; i < r->n; i++) done += r->slots[i].count > 0;
      break;
    }
  }
  pthread_mutex_unlock(&r->mu);
  return done;
}

int donerec_wait_slot(donerec_t *r, int i, int timeout_ms) {
  struct timespec ts;
  deadline_ts(&ts, timeout_ms);
  pthread_mutex_lock(&r->mu);
  while (r->slots[i].count == 0) {
    if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == ETIMEDOUT) break;
  }
  int c = r->slots[i].count;
  pthread_mutex_unlock(&r->mu);
  return c;
}

int donerec_count(donerec_t *r, int i) {
  pthread_mutex_lock(&r->mu);
  int c = r->slots[i].count;
  pthread_mutex_unlock(&r->mu);
  return c;
}

int donerec_count_total(donerec_t *r) {
  pthread_mutex_lock(&r->mu);
  int c = r->total;
  pthread_mutex_unlock(&r->mu);
  return c;
}

void donerec_free(donerec_t *r) {
  for (int i = 0; i < r->n; i++) free(r->slots[i].json);
  free(r->slots);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------ app-request recorder */

void hostrec_init(hostrec_t *r, const char *answer) {
  memset(r, 0, sizeof *r);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  r->answer = answer;
}

void hostrec_cb(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  hostrec_t *r = ud;
  lmcp_status st = LMCP_OK;
  if (r->answer != NULL) {
    st = lmcp_client_respond(r->client, id, LMCP_OK, r->answer, strlen(r->answer), NULL);
  }
  pthread_mutex_lock(&r->mu);
  if (r->n < 16) {
    r->ids[r->n] = id;
    snprintf(r->kinds[r->n], sizeof r->kinds[r->n], "%s", kind ? kind : "(null)");
    r->payloads[r->n] = malloc(len + 1);
    memcpy(r->payloads[r->n], json, len);
    r->payloads[r->n][len] = 0;
    r->respond_status[r->n] = st;
  }
  r->n++;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

void hostrec_destroy(void *ud) {
  hostrec_t *r = ud;
  pthread_mutex_lock(&r->mu);
  r->destroys++;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

int hostrec_wait(hostrec_t *r, int n, int timeout_ms) {
  struct timespec ts;
  deadline_ts(&ts, timeout_ms);
  pthread_mutex_lock(&r->mu);
  while (r->n < n) {
    if (pthread_cond_timedwait(&r->cv, &r->mu, &ts) == ETIMEDOUT) break;
  }
  int c = r->n;
  pthread_mutex_unlock(&r->mu);
  return c;
}

void hostrec_free(hostrec_t *r) {
  for (int i = 0; i < r->n && i < 16; i++) free(r->payloads[i]);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
}

/* -------------------------------------------------------------- processes */

int pid_gone(pid_t pid) {
  if (kill(pid, 0) == -1 && errno == ESRCH) return 1;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  char *stat = read_file(path, NULL);
  if (stat == NULL) return 1;
  /* pid (comm) S ppid ... — comm may contain spaces: parse after the last ')' */
  char *rp = strrchr(stat, ')');
  int gone = 0;
  if (rp != NULL) {
    char state = 0;
    int ppid = 0;
    if (sscanf(rp + 1, " %c %d", &state, &ppid) == 2) gone = state == 'Z' && ppid != (int)getpid();
  }
  free(stat);
  return gone;
}

int pid_reaped(pid_t pid) {
  char path[64];
  struct stat st;
  snprintf(path, sizeof path, "/proc/%d", (int)pid);
  return stat(path, &st) == -1 && errno == ENOENT;
}

int wait_pid_gone(pid_t pid, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  while (!pid_gone(pid)) {
    if (now_ms() > end) return 0;
    sleep_ms(20);
  }
  return 1;
}

int wait_pid_reaped(pid_t pid, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  while (!pid_reaped(pid)) {
    if (now_ms() > end) return 0;
    sleep_ms(20);
  }
  return 1;
}

/* ------------------------------------------------------------- diagnostics */

int get_diag(h_diag *d) {
  char *json = NULL;
  size_t len = 0;
  if (lmcp_diagnostics(&json, &len) != LMCP_OK) return 0;
  int ok = json_valid(json, len) && json_get_int(json, "goroutines", &d->goroutines) &&
           json_get_int(json, "live_clients", &d->live_clients) &&
           json_get_int(json, "pending_calls", &d->pending_calls);
  lmcp_free(json);
  return ok;
}

int get_idle_diag(h_diag *d) {
  /* The Go runtime may still be ending a goroutine of its own start-up (or
   * of a handle just freed) when the first read is taken: the count is
   * idle once five reads 10 ms apart agree. */
  int64_t deadline = now_ms() + T(2000);
  int same = 0;
  long long last = -1;
  while (same < 5) {
    if (!get_diag(d)) return 0;
    same = d->goroutines == last ? same + 1 : 1;
    last = d->goroutines;
    if (now_ms() >= deadline) break;
    sleep_ms(10);
  }
  return 1;
}

/* --------------------------------------------------------- fixture clients */

int h_time_scale = 1;

/* Every test program gets the scale before main runs, so no program can
 * forget it (a deadline that is not scaled fails under valgrind). */
__attribute__((constructor)) static void read_time_scale(void) {
  const char *scale = getenv("LMCP_TEST_TIME_SCALE"); /* slower under valgrind */
  h_time_scale = scale != NULL ? atoi(scale) : 1;
  if (h_time_scale < 1) h_time_scale = 1;
}

int destroy_count;
void count_destroy(void *ud) {
  (void)ud;
  destroy_count++;
}
void never_event(void *ud, const char *k, const char *j, size_t n) {
  (void)ud, (void)k, (void)j, (void)n;
}
void never_host(void *ud, lmcp_request_id id, const char *k, const char *j, size_t n) {
  (void)ud, (void)id, (void)k, (void)j, (void)n;
}

lmcp_client *new_client(const char *cfg, evrec_t *rec) {
  lmcp_client *c = NULL;
  char *err = NULL;
  lmcp_status st = lmcp_client_new(cfg, strlen(cfg), &c, &err);
  CHECK_ST(st, LMCP_OK, err);
  CHECK(err == NULL);
  lmcp_free(err);
  if (st != LMCP_OK) return NULL;
  if (rec != NULL) {
    err = NULL;
    st = lmcp_client_set_event_handler(c, evrec_cb, rec, evrec_destroy, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
  }
  return c;
}

/* new + event handler + connect + wait_ready */
lmcp_client *start_client(const char *cfg, evrec_t *rec) {
  return start_client_with(cfg, rec, NULL, 5000);
}

lmcp_host *start_host(const char *cfg) {
  lmcp_host *h = NULL;
  char *err = NULL;
  lmcp_status st = lmcp_host_new(cfg, strlen(cfg), &h, &err);
  CHECK_ST(st, LMCP_OK, err);
  if (st == LMCP_OK) {
    lmcp_free(err);
    err = NULL;
    st = lmcp_host_connect(h, &err);
    CHECK_ST(st, LMCP_OK, err);
  }
  if (st == LMCP_OK) {
    lmcp_free(err);
    err = NULL;
    st = lmcp_host_wait_ready(h, T(15000), &err);
    CHECK_ST(st, LMCP_OK, err);
  }
  lmcp_free(err);
  if (st != LMCP_OK) {
    lmcp_host_free(h);
    return NULL;
  }
  return h;
}

lmcp_client *start_client_with(const char *cfg, evrec_t *rec, lmcp_app_request_cb cb, int ready_ms) {
  lmcp_client *c = new_client(cfg, rec);
  if (c == NULL) return NULL;
  char *err = NULL;
  lmcp_status st = LMCP_OK;
  if (cb != NULL) {
    st = lmcp_client_set_app_request_handler(c, cb, c, NULL, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
  }
  if (st == LMCP_OK) {
    st = lmcp_client_connect(c, &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
    err = NULL;
  }
  if (st == LMCP_OK) {
    st = lmcp_client_wait_ready(c, T(ready_ms), &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
  }
  if (st != LMCP_OK) {
    lmcp_client_free(c);
    if (rec != NULL) finish_recorder(rec); /* callers just return */
    return NULL;
  }
  return c;
}

/* Checks the recorder's invariants (one delivery at a time, valid payloads,
 * nothing after destroy, destroy exactly once) and releases it. Call after
 * the client was freed. */
void finish_recorder(evrec_t *rec) {
  if (!rec->live) return; /* already finished (start_client failed) */
  int d = evrec_wait_destroys(rec, 1, T(2000));
  sleep_ms(20);
  pthread_mutex_lock(&rec->mu);
  d = rec->destroys;
  int maxin = rec->max_inflight, after = rec->after_destroy, bad = rec->bad_payloads;
  pthread_mutex_unlock(&rec->mu);
  CHECKM(d == 1, NULL, "event handler destroy ran %d times", d);
  CHECKM(maxin <= 1, NULL, "%d event callbacks of one client ran at once", maxin);
  CHECKM(after == 0, NULL, "%d events delivered after destroy", after);
  CHECKM(bad == 0, NULL, "%d event payloads invalid or not NUL-terminated", bad);
  evrec_free(rec);
}

/* close (must succeed) + free + recorder checks */
void stop_client(lmcp_client *c, evrec_t *rec) {
  if (c != NULL) {
    char *err = NULL;
    lmcp_status st = lmcp_client_close(c, T(5000), &err);
    CHECK_ST(st, LMCP_OK, err);
    lmcp_free(err);
    lmcp_client_free(c);
  }
  if (rec != NULL) finish_recorder(rec);
}

lmcp_status call_sync(lmcp_client *c, const char *method, const char *params, const char *opts, char **result,
                      char **err) {
  size_t rlen = 0;
  *result = NULL;
  *err = NULL;
  lmcp_status st = lmcp_client_call_sync(c, method, params, params ? strlen(params) : 0, opts,
                                         opts ? strlen(opts) : 0, result, &rlen, err);
  if (st == LMCP_OK) {
    CHECK(*result != NULL && rlen == strlen(*result));
    CHECKE(json_valid(*result, rlen), *result);
    CHECK(*err == NULL);
  } else {
    CHECK(*result == NULL);
    CHECK_ERR_JSON(*err, st);
  }
  return st;
}

lmcp_status tool_sync(lmcp_client *c, const char *tool, const char *args, const char *opts, char **result,
                      char **err) {
  char params[1024];
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", tool, args ? args : "{}");
  return call_sync(c, "tools/call", params, opts, result, err);
}

lmcp_status tool_async(lmcp_client *c, const char *tool, const char *args, const char *opts, doneslot_t *slot,
                       lmcp_call_id *id_out) {
  char params[1024];
  char *err = NULL;
  snprintf(params, sizeof params, "{\"name\":\"%s\",\"arguments\":%s}", tool, args ? args : "{}");
  slot->caller = pthread_self();
  h_in_call = 1;
  lmcp_status st = lmcp_client_call(c, "tools/call", params, strlen(params), opts, opts ? strlen(opts) : 0,
                                    done_cb, slot, id_out, &err);
  h_in_call = 0;
  if (st != LMCP_OK) {
    CHECK_ERR_JSON(err, st);
  } else {
    CHECK(err == NULL);
    CHECK(id_out == NULL || *id_out != 0);
  }
  lmcp_free(err);
  return st;
}

lmcp_state state_of(lmcp_client *c) {
  lmcp_state s = -1;
  CHECK_ST(lmcp_client_state(c, &s), LMCP_OK, NULL);
  return s;
}

/* Expects a successful echo of text. */
void expect_echo(lmcp_client *c, const char *text) {
  char *res, *err;
  char args[256], want[300];
  snprintf(args, sizeof args, "{\"text\":\"%s\"}", text);
  snprintf(want, sizeof want, "\"text\":\"%s\"", text);
  lmcp_status st = tool_sync(c, "echo", args, NULL, &res, &err);
  CHECK_ST(st, LMCP_OK, err);
  CHECKE(res != NULL && strstr(res, want) != NULL, res);
  lmcp_free(res);
  lmcp_free(err);
}

/* Reads the integer text of a tool result ({"content":[{"type":"text","text":"123"}]}). */
long long tool_int(lmcp_client *c, const char *tool) {
  char *res, *err;
  long long v = -1;
  char text[64];
  lmcp_status st = tool_sync(c, tool, NULL, NULL, &res, &err);
  CHECK_ST(st, LMCP_OK, err);
  if (st == LMCP_OK && json_get_str(res, "text", text, sizeof text)) v = atoll(text);
  CHECKE(v > 0, res);
  lmcp_free(res);
  lmcp_free(err);
  return v;
}

/* The JSON-RPC id of the first line of the log file containing both needles. */
long long request_id_in_log(const char *log, const char *n1, const char *n2) {
  char *text = read_file(log, NULL);
  long long id = -1;
  if (text == NULL) return -1;
  for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (strstr(line, n1) && (n2 == NULL || strstr(line, n2)) && json_get_int(line, "id", &id)) break;
    id = -1;
  }
  free(text);
  return id;
}

/* Waits until the log file has a notifications/cancelled line for request id. */
int wait_cancelled_in_log(const char *log, long long id, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  for (;;) {
    char *text = read_file(log, NULL);
    int found = 0;
    if (text != NULL) {
      for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        long long rid;
        if (strstr(line, "\"notifications/cancelled\"") && json_get_int(line, "requestId", &rid) &&
            rid == id) {
          found = 1;
          break;
        }
      }
      free(text);
    }
    if (found) return 1;
    if (now_ms() > end) return 0;
    sleep_ms(20);
  }
}

/* Waits until the log file contains needle. */
int wait_in_file(const char *path, const char *needle, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  for (;;) {
    char *text = read_file(path, NULL);
    int found = text != NULL && strstr(text, needle) != NULL;
    free(text);
    if (found) return 1;
    if (now_ms() > end) return 0;
    sleep_ms(20);
  }
}
