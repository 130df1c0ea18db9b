/*
 * test_host_pins.c — pinned definitions from C (issue 27): the attacker
 * cases of tests/fixtures/rugpull/cases.json (the table every binding
 * runs) against the rugpull fixture. A host pins what the server offers
 * on first use; the server changes (a description, a schema, an
 * annotation flip, text in _meta, a rename, hidden characters, a prompt,
 * a resource, its instructions) and announces list_changed (or, for
 * instructions, the next host run sees them); the change is a
 * definition_changed event; a held tool is not listed and its call fails
 * with LMCP_E_POLICY_DENIED; lmcp_host_approve refuses a stale hash and
 * pins the one shown, after which everything is callable again.
 *
 * No fork() after loading the library: the make rule writes each case's
 * definitions and the table (rugpull -case, -cases) into LMCP_PINS_DIR
 * before this runs.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef LMCP_PINS_DIR
#error "LMCP_PINS_DIR: the directory of the cases the make rule wrote"
#endif

typedef struct {
  char defs[512], pid[512], pins[512], rugpull[512];
} rig_t;

static int write_file(const char *path, const char *data, size_t len) {
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) return -1;
  size_t n = fwrite(data, 1, len, f);
  fclose(f);
  if (n != len) return -1;
  return rename(tmp, path);
}

/* Copies the definitions of case name (or "base") to the server's file. */
static int use_case(const rig_t *rig, const char *name) {
  char path[600];
  snprintf(path, sizeof path, "%s/%s.json", LMCP_PINS_DIR, name);
  size_t len = 0;
  char *data = read_file(path, &len);
  if (data == NULL) return -1;
  int rc = write_file(rig->defs, data, len);
  free(data);
  return rc;
}

static lmcp_host *open_host(const rig_t *rig, evrec_t *rec) {
  char cfg[4096];
  snprintf(
      cfg, sizeof cfg,
      "{\"pins\":{\"store\":{\"type\":\"file\",\"path\":\"%s\"}},\"mcpServers\":{\"r\":{\"command\":\"%s\",\"args\":[\"-defs\",\"%s\"],"
      "\"env\":{\"RUGPULL_PIDFILE\":\"%s\"},\"timeouts\":{\"ready_ms\":5000,\"close_grace_ms\":300}}}}",
      rig->pins, rig->rugpull, rig->defs, rig->pid);
  lmcp_host *h = NULL;
  char *err = NULL;
  CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
  if (h == NULL) return NULL;
  evrec_init(rec);
  CHECK_ST(lmcp_host_set_event_handler(h, evrec_cb, rec, evrec_destroy, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_wait_ready(h, 15000, &err), LMCP_OK, err);
  return h;
}

static void close_host(lmcp_host *h) {
  lmcp_host_close(h, 5000, NULL);
  lmcp_host_free(h);
}

static void signal_server(const rig_t *rig) {
  size_t len = 0;
  char *pid = read_file(rig->pid, &len);
  CHECKM(pid != NULL, NULL, "the server's process id in %s", rig->pid);
  if (pid != NULL) {
    CHECK(kill((pid_t)atol(pid), SIGUSR1) == 0);
    free(pid);
  }
}

static int call_tool(lmcp_host *h, const char *tool, lmcp_status want, const char *needle) {
  char name[128], *res = NULL, *err = NULL;
  snprintf(name, sizeof name, "r__%s", tool);
  lmcp_status st = lmcp_host_call_tool_sync(h, name, NULL, 0, NULL, 0, &res, NULL, &err);
  CHECK_ST(st, want, err);
  const char *text = st == LMCP_OK ? res : err;
  int ok = text != NULL && strstr(text, needle) != NULL;
  CHECKM(ok, text, "%s: %s", name, needle);
  lmcp_free(res);
  lmcp_free(err);
  return ok;
}

/* Calls fn(tool) for each tool of a comma-separated list ("-": none). */
static void each_tool(const char *list, lmcp_host *h, int held) {
  if (strcmp(list, "-") == 0) return;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
    char needle[160];
    snprintf(needle, sizeof needle, "called %s", t);
    if (held) {
      call_tool(h, t, LMCP_E_POLICY_DENIED, "is held");
      char *js = NULL, *err = NULL;
      CHECK_ST(lmcp_host_list_tools(h, &js, NULL, &err), LMCP_OK, err);
      char quoted[160];
      snprintf(quoted, sizeof quoted, "\"r__%s\"", t);
      CHECKM(js && !strstr(js, quoted), js, "%s is not listed", t);
      lmcp_free(js);
    } else {
      call_tool(h, t, LMCP_OK, needle);
    }
  }
}

static void run_case(char *line) {
  char *save = NULL;
  char *name = strtok_r(line, "\t", &save);
  char *held = strtok_r(NULL, "\t", &save);
  char *callable = strtok_r(NULL, "\t", &save);
  char *expect = strtok_r(NULL, "\t\n", &save);
  if (!CHECK(name && held && callable && expect)) return;
  printf("  case %s\n", name);
  rig_t rig;
  temp_path(rig.defs, sizeof rig.defs, "defs");
  temp_path(rig.pid, sizeof rig.pid, "pid");
  temp_path(rig.pins, sizeof rig.pins, "pins");
  const char *fx = fixture_path();
  const char *slash = strrchr(fx, '/');
  snprintf(rig.rugpull, sizeof rig.rugpull, "%.*s/rugpull", slash ? (int)(slash - fx) : 1, slash ? fx : ".");
  if (!CHECK(use_case(&rig, "base") == 0)) return;

  evrec_t rec;
  lmcp_host *h = open_host(&rig, &rec);
  if (h == NULL) return;
  /* First use: the report lists every list, so the base is pinned before
   * the server changes (else the change would be what is seen first). */
  char *first = NULL, *ferr = NULL;
  CHECK_ST(lmcp_host_pins(h, &first, NULL, &ferr), LMCP_OK, ferr);
  CHECKM(first && !strstr(first, "\"held\":true") && strstr(first, "\"greet\"") &&
             strstr(first, "file:///notes"),
         first, "everything pinned on first use");
  lmcp_free(first);
  call_tool(h, "echo", LMCP_OK, "called echo");
  CHECK(use_case(&rig, name) == 0);
  if (strcmp(name, "instructions") == 0) {
    close_host(h); /* instructions come with the next handshake */
    h = open_host(&rig, &rec);
    if (h == NULL) return;
  } else {
    signal_server(&rig);
  }

  /* Each expected status arrives as one definition_changed event. */
  char exp[512];
  snprintf(exp, sizeof exp, "%s", expect);
  char *esave = NULL;
  for (char *e = strtok_r(exp, ";", &esave); e != NULL; e = strtok_r(NULL, ";", &esave)) {
    char kind[32], ename[128], status[32], needle[256], want[64];
    if (!CHECK(sscanf(e, "%31s %127s %31s", kind, ename, status) == 3)) continue;
    snprintf(needle, sizeof needle, "\"kind\":\"%s\",\"name\":\"%s\",", kind,
             strcmp(ename, "-") ? ename : "");
    snprintf(want, sizeof want, "\"status\":\"%s\"", status);
    CHECKM(evrec_wait(&rec, "definition_changed", needle, 1, 10000) >= 1, NULL, "definition_changed %s",
           needle);
    char *ev = evrec_first(&rec, "definition_changed", needle);
    CHECKM(ev && strstr(ev, want) && strstr(ev, "\"server\":\"r\""), ev, "%s", want);
    if (ev != NULL && strcmp(status, "removed") != 0) {
      char hash[160] = "", pinned[160] = "", approval[512], *err = NULL;
      json_get_str(ev, "hash", hash, sizeof hash);
      if (!json_get_str(ev, "pinned_hash", pinned, sizeof pinned) || pinned[0] == 0)
        snprintf(pinned, sizeof pinned, "sha256:%064d", 0);
      /* A stale approval: the hash pinned before is not what is offered. */
      snprintf(approval, sizeof approval,
               "{\"server\":\"r\",\"kind\":\"%s\",\"name\":\"%s\",\"hash\":\"%s\"}", kind,
               strcmp(ename, "-") ? ename : "", pinned);
      CHECK_ST(lmcp_host_approve(h, approval, strlen(approval), &err), LMCP_E_INVALID_STATE, err);
      CHECK_ERR_JSON(err, LMCP_E_INVALID_STATE);
      lmcp_free(err);
      err = NULL;
      /* Held until approved. */
      each_tool(held, h, 1);
      each_tool(callable, h, 0);
      snprintf(approval, sizeof approval,
               "{\"server\":\"r\",\"kind\":\"%s\",\"name\":\"%s\",\"hash\":\"%s\"}", kind,
               strcmp(ename, "-") ? ename : "", hash);
      CHECK_ST(lmcp_host_approve(h, approval, strlen(approval), &err), LMCP_OK, err);
      lmcp_free(err);
    }
    free(ev);
  }
  each_tool(held, h, 0);
  each_tool(callable, h, 0);

  /* The report: nothing held once approved. */
  char *js = NULL, *err = NULL;
  CHECK_ST(lmcp_host_pins(h, &js, NULL, &err), LMCP_OK, err);
  CHECKM(js && json_valid(js, strlen(js)) && !strstr(js, "\"held\":true"), js, "nothing held");
  lmcp_free(js);
  close_host(h);
}

static void test_pins_attacker_cases(void) {
  size_t len = 0;
  char *table = read_file(LMCP_PINS_DIR "/cases.tsv", &len);
  if (!CHECKM(table != NULL, NULL, "%s/cases.tsv (make writes it)", LMCP_PINS_DIR)) return;
  int n = 0;
  char *save = NULL;
  for (char *line = strtok_r(table, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    run_case(line);
    n++;
  }
  CHECKM(n >= 9, NULL, "%d cases", n);
  free(table);
}

/* "store": {"type": "app"}: the application keeps the store, here one
 * document in memory (the test's one server), answering store_load and
 * store_save with a compare-and-save from the request callback. */
typedef struct {
  lmcp_host *h;
  pthread_mutex_t mu;
  char *doc; /* NULL: nothing stored */
  long version;
  int loads, saves;
} app_store_t;

static void app_store_cb(void *ud, lmcp_request_id id, const char *kind, const char *json, size_t len) {
  app_store_t *st = ud;
  char answer[65536];
  pthread_mutex_lock(&st->mu);
  if (strcmp(kind, "store_load") == 0) {
    st->loads++;
    if (st->doc)
      snprintf(answer, sizeof answer, "{\"version\":%ld,\"document\":%s}", st->version, st->doc);
    else
      snprintf(answer, sizeof answer, "{\"version\":0}");
    lmcp_host_respond(st->h, id, LMCP_OK, answer, strlen(answer), NULL);
  } else if (strcmp(kind, "store_save") == 0) {
    /* {"collection", "key", "expected_version": n, "document": {...}} */
    const char *ev = strstr(json, "\"expected_version\":");
    const char *doc = strstr(json, "\"document\":");
    long expected = ev ? strtol(ev + strlen("\"expected_version\":"), NULL, 10) : -1;
    if (ev == NULL || doc == NULL) {
      lmcp_host_respond(st->h, id, LMCP_E_INVALID_ARGUMENT, NULL, 0, NULL);
    } else if (expected != st->version) {
      snprintf(answer, sizeof answer, "{\"conflict\":true,\"version\":%ld,\"document\":%s}", st->version,
               st->doc ? st->doc : "null");
      lmcp_host_respond(st->h, id, LMCP_OK, answer, strlen(answer), NULL);
    } else {
      doc += strlen("\"document\":");
      size_t n = (size_t)(json + len - 1 - doc); /* up to the closing brace */
      free(st->doc);
      st->doc = malloc(n + 1);
      memcpy(st->doc, doc, n);
      st->doc[n] = 0;
      st->version++;
      st->saves++;
      snprintf(answer, sizeof answer, "{\"version\":%ld}", st->version);
      lmcp_host_respond(st->h, id, LMCP_OK, answer, strlen(answer), NULL);
    }
  } else {
    lmcp_host_respond(st->h, id, LMCP_E_UNSUPPORTED, NULL, 0, NULL);
  }
  pthread_mutex_unlock(&st->mu);
}

static lmcp_host *open_app_host(const rig_t *rig, app_store_t *st) {
  char cfg[4096], *err = NULL;
  snprintf(
      cfg, sizeof cfg,
      "{\"pins\":{\"store\":{\"type\":\"app\"}},\"mcpServers\":{\"r\":{\"command\":\"%s\",\"args\":[\"-defs\",\"%s\"],"
      "\"env\":{\"RUGPULL_PIDFILE\":\"%s\"},\"timeouts\":{\"ready_ms\":5000,\"close_grace_ms\":300}}}}",
      rig->rugpull, rig->defs, rig->pid);
  lmcp_host *h = NULL;
  CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
  if (h == NULL) return NULL;
  st->h = h;
  CHECK_ST(lmcp_host_set_app_request_handler(h, app_store_cb, st, NULL, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_connect(h, &err), LMCP_OK, err);
  CHECK_ST(lmcp_host_wait_ready(h, 15000, &err), LMCP_OK, err);
  return h;
}

static void test_pins_app_store(void) {
  rig_t rig;
  temp_path(rig.defs, sizeof rig.defs, "defs");
  temp_path(rig.pid, sizeof rig.pid, "pid");
  rig.pins[0] = 0;
  const char *fx = fixture_path();
  const char *slash = strrchr(fx, '/');
  snprintf(rig.rugpull, sizeof rig.rugpull, "%.*s/rugpull", slash ? (int)(slash - fx) : 1, slash ? fx : ".");
  if (!CHECK(use_case(&rig, "base") == 0)) return;
  app_store_t st = {.h = NULL, .doc = NULL, .version = 0, .loads = 0, .saves = 0};
  pthread_mutex_init(&st.mu, NULL);

  /* First use: pinned through store_save. */
  lmcp_host *h = open_app_host(&rig, &st);
  if (h == NULL) return;
  char *js = NULL, *err = NULL;
  CHECK_ST(lmcp_host_pins(h, &js, NULL, &err), LMCP_OK, err);
  CHECKM(js && !strstr(js, "\"held\":true") && strstr(js, "\"approved\""), js, "pinned on first use");
  lmcp_free(js);
  js = NULL;
  pthread_mutex_lock(&st.mu);
  CHECKM(st.saves >= 1 && st.version >= 1 && st.doc && strstr(st.doc, "\"body\""), st.doc, "saved through the app");
  pthread_mutex_unlock(&st.mu);

  /* A change is held; the approval is saved through the app. */
  CHECK(use_case(&rig, "description") == 0);
  signal_server(&rig);
  for (int i = 0; i < 500; i++) {
    CHECK_ST(lmcp_host_pins(h, &js, NULL, &err), LMCP_OK, err);
    if (js && strstr(js, "\"changed\"")) break;
    lmcp_free(js);
    js = NULL;
    sleep_ms(20);
  }
  CHECKM(js && strstr(js, "\"changed\""), js, "the change is seen");
  char hash[160] = "", approval[512];
  const char *echo = js ? strstr(js, "\"echo\":{") : NULL;
  CHECK(echo && json_get_str(echo, "hash", hash, sizeof hash));
  lmcp_free(js);
  js = NULL;
  call_tool(h, "echo", LMCP_E_POLICY_DENIED, "is held");
  int saves_before = st.saves;
  snprintf(approval, sizeof approval, "{\"server\":\"r\",\"name\":\"echo\",\"hash\":\"%s\"}", hash);
  CHECK_ST(lmcp_host_approve(h, approval, strlen(approval), &err), LMCP_OK, err);
  call_tool(h, "echo", LMCP_OK, "called echo");
  pthread_mutex_lock(&st.mu);
  CHECK(st.saves > saves_before && st.doc && strstr(st.doc, hash));
  pthread_mutex_unlock(&st.mu);
  close_host(h);

  /* The next run trusts what the app kept. */
  h = open_app_host(&rig, &st);
  if (h != NULL) {
    CHECK_ST(lmcp_host_pins(h, &js, NULL, &err), LMCP_OK, err);
    CHECKM(js && !strstr(js, "\"held\":true"), js, "the approval persisted");
    lmcp_free(js);
    call_tool(h, "echo", LMCP_OK, "called echo");
    close_host(h);
  }
  free(st.doc);
  pthread_mutex_destroy(&st.mu);
}

static void test_pins_bad_input(void) {
  char cfg[1024], *err = NULL;
  lmcp_host *h = NULL;
  /* No pins: both functions say so. */
  snprintf(cfg, sizeof cfg, "{\"mcpServers\":{\"a\":{\"command\":\"%s\",\"enabled\":false}}}",
           fixture_path());
  CHECK_ST(lmcp_host_new(cfg, strlen(cfg), &h, &err), LMCP_OK, err);
  char *js = NULL;
  CHECK_ST(lmcp_host_pins(h, &js, NULL, &err), LMCP_E_INVALID_STATE, err);
  CHECKM(err && strstr(err, "no \\\"pins\\\""), err, "names the missing option");
  lmcp_free(err);
  err = NULL;
  static const struct {
    const char *approval;
    lmcp_status want;
    const char *needle;
  } bad[] = {
      {"{\"server\":\"a\",\"name\":\"x\",\"hash\":\"sha256:0\"}", LMCP_E_INVALID_STATE, "no \\\"pins\\\""},
      {"[1]", LMCP_E_INVALID_ARGUMENT, "approval: must be a JSON object"},
      {"{\"server\":\"a\",\"name\":\"x\"}", LMCP_E_INVALID_ARGUMENT, "approval.hash"},
      {"{\"server\":\"a\",\"name\":\"x\",\"hash\":\"h\",\"extra\":1}", LMCP_E_INVALID_ARGUMENT,
       "approval.extra"},
      {"{\"server\":\"a\",\"hash\":\"h\"}", LMCP_E_INVALID_ARGUMENT, "approval.name"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_ST(lmcp_host_approve(h, bad[i].approval, strlen(bad[i].approval), &err), bad[i].want, err);
    CHECKM(err && strstr(err, bad[i].needle), err, "%s", bad[i].needle);
    lmcp_free(err);
    err = NULL;
  }
  CHECK_ST(lmcp_host_approve(h, NULL, 0, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  CHECK_ST(lmcp_host_pins(h, NULL, NULL, &err), LMCP_E_INVALID_ARGUMENT, err);
  lmcp_free(err);
  err = NULL;
  lmcp_host_free(h);
  /* A freed handle. */
  CHECK_ST(lmcp_host_pins(h, &js, NULL, NULL), LMCP_E_INVALID_HANDLE, NULL);
  CHECK_ST(lmcp_host_approve(h, "{}", 2, NULL), LMCP_E_INVALID_HANDLE, NULL);
}

/* A tool changed while no host ran is held from the first use of every
 * fresh host: STARTS hosts (eight threads at a time), each calling it right
 * after it is ready, or listing right away. The defect this guards against
 * (the call went out before the server's pin verdict) showed in most starts,
 * never in all. */
#define STARTS 100
#define START_THREADS 8

typedef struct {
  const rig_t *rig;
  int first, failures;
  char why[512];
} starts_t;

static void *run_starts(void *arg) {
  starts_t *st = arg;
  char cfg[4096];
  snprintf(cfg, sizeof cfg,
           "{\"pins\":{\"store\":{\"type\":\"file\",\"path\":\"%s\"}},\"mcpServers\":{\"r\":{\"command\":\"%s\",\"args\":[\"-defs\",\"%s\"],"
           "\"timeouts\":{\"ready_ms\":5000,\"close_grace_ms\":300}}}}",
           st->rig->pins, st->rig->rugpull, st->rig->defs);
  for (int i = st->first; i < STARTS; i += START_THREADS) {
    lmcp_host *h = NULL;
    char *res = NULL, *err = NULL;
    const char *bad = NULL;
    if (lmcp_host_new(cfg, strlen(cfg), &h, &err) != LMCP_OK || lmcp_host_connect(h, &err) != LMCP_OK ||
        lmcp_host_wait_ready(h, 15000, &err) != LMCP_OK) {
      bad = "the host did not start";
    } else if (i % 2 == 0) {
      lmcp_status s = lmcp_host_call_tool_sync(h, "r__echo", "{}", 2, NULL, 0, &res, NULL, &err);
      if (s != LMCP_E_POLICY_DENIED) bad = "the held tool was not refused";
      else if (err == NULL || strstr(err, "\"held\":{\"server\":\"r\",\"kind\":\"tool\",\"name\":\"echo\",\"status\":\"changed\"}") == NULL)
        bad = "the refusal does not carry the held reason as data";
    } else {
      if (lmcp_host_list_tools(h, &res, NULL, &err) != LMCP_OK) bad = "the list failed";
      else if (strstr(res, "\"r__add\"") == NULL || strstr(res, "\"r__echo\"") != NULL) bad = "the held tool was listed";
    }
    if (bad != NULL && st->failures++ == 0) snprintf(st->why, sizeof st->why, "start %d: %s: %s", i, bad, err ? err : (res ? res : ""));
    lmcp_free(res);
    lmcp_free(err);
    if (h != NULL) close_host(h);
  }
  return NULL;
}

static void test_pins_held_from_the_first_use(void) {
  rig_t rig;
  temp_path(rig.defs, sizeof rig.defs, "defs");
  temp_path(rig.pid, sizeof rig.pid, "pid");
  temp_path(rig.pins, sizeof rig.pins, "pins");
  const char *fx = fixture_path();
  const char *slash = strrchr(fx, '/');
  snprintf(rig.rugpull, sizeof rig.rugpull, "%.*s/rugpull", slash ? (int)(slash - fx) : 1, slash ? fx : ".");
  if (!CHECK(use_case(&rig, "base") == 0)) return;
  evrec_t rec;
  lmcp_host *h = open_host(&rig, &rec); /* pins everything on first use */
  if (h == NULL) return;
  call_tool(h, "echo", LMCP_OK, "called echo");
  close_host(h);
  if (!CHECK(use_case(&rig, "description") == 0)) return; /* echo changes while no host runs */
  starts_t st[START_THREADS];
  pthread_t th[START_THREADS];
  for (int i = 0; i < START_THREADS; i++) {
    st[i] = (starts_t){.rig = &rig, .first = i};
    CHECK(pthread_create(&th[i], NULL, run_starts, &st[i]) == 0);
  }
  for (int i = 0; i < START_THREADS; i++) {
    pthread_join(th[i], NULL);
    CHECKM(st[i].failures == 0, st[i].why, "%d of the starts failed", st[i].failures);
  }
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  RUN_TEST(test_pins_held_from_the_first_use, 120);
  RUN_TEST(test_pins_attacker_cases, 300);
  RUN_TEST(test_pins_app_store, 120);
  RUN_TEST(test_pins_bad_input, 60);
  temp_dir_cleanup();
  return h_finish();
}
