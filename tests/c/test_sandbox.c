/*
 * test_sandbox.c — escapes from a confined server through the C ABI (issue
 * 28), with the application itself run as root and as an unprivileged user.
 *
 * The server is the shared escape script (tests/fixtures/escapes/escapes.sh):
 * it tries writes outside allowWrite (direct, through symlinks, renames, a
 * truncation), reads of denyRead (direct, through a symlink), TCP and UDP to
 * the host's loopback and DNS, writes its report, starts a daemon, then
 * becomes the fixture. A worker (this program with --worker) runs one host of
 * that server as whichever user runs it and prints what happened; the tests
 * run the worker as the current user and, when that is root, again under
 * `setpriv` as nobody, so that the process that loads the library and starts
 * the server is itself unprivileged. A control without sandbox or helper lets
 * every escape through, which proves each case can fail.
 *
 * Processes are started with posix_spawn (never fork() after loading the
 * library, see the header).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#ifndef LMCP_ESCAPES_PATH
#error "LMCP_ESCAPES_PATH names tests/fixtures/escapes/escapes.sh"
#endif

extern char **environ;

#define NOBODY 65534
#define ESCAPES 10 /* the script's "escape" lines */

/* The escape script: LMCP_ESCAPES when the test staged a copy (stage). */
static const char *escapes_path(void) {
  const char *p = getenv("LMCP_ESCAPES");
  return p != NULL && *p ? p : LMCP_ESCAPES_PATH;
}

/* ---------------------------------------------------------------- spawning */

/* Runs argv with env added to ours, its stdout into *out (malloc'd, may be
 * NULL); returns the exit status, or -1. */
static int run(char *const argv[], const char *const env[], char **out) {
  size_t n = 0, k = 0;
  while (environ[n]) n++;
  while (env && env[k]) k++;
  char **envp = calloc(n + k + 1, sizeof *envp);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    int overridden = 0;
    for (size_t j = 0; j < k; j++) {
      size_t len = strcspn(env[j], "=") + 1;
      overridden |= strncmp(environ[i], env[j], len) == 0;
    }
    if (!overridden) envp[m++] = environ[i];
  }
  for (size_t j = 0; j < k; j++) envp[m++] = (char *)env[j];
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    free(envp);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  free(envp);
  close(p[1]);
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  for (ssize_t r; rc == 0 && (r = read(p[0], buf + len, cap - len - 1)) != 0;) {
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    len += (size_t)r;
    if (cap - len < 2) buf = realloc(buf, cap *= 2);
  }
  buf[len] = 0;
  close(p[0]);
  int status = -1;
  if (rc == 0) {
    while (waitpid(pid, &status, 0) == -1 && errno == EINTR) {
    }
  }
  if (out)
    *out = buf;
  else
    free(buf);
  return rc == 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_tree(const char *dir) {
  char *argv[] = {"rm", "-rf", (char *)dir, NULL};
  run(argv, NULL, NULL);
}

/* ------------------------------------------------------------------ worker */

static pid_t find_process(const char *cmdline, size_t len) {
  DIR *d = opendir("/proc");
  pid_t found = 0;
  struct dirent *e;
  while (d && found == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
    size_t n = 0;
    char *c = read_file(path, &n);
    if (c && n == len && memcmp(c, cmdline, len) == 0) found = (pid_t)atoi(e->d_name);
    free(c);
  }
  if (d) closedir(d);
  return found;
}

static int wait_found(const char *cmdline, size_t len, int want, int timeout_ms) {
  int64_t end = now_ms() + timeout_ms;
  for (;;) {
    int found = find_process(cmdline, len) != 0;
    if (found == want || now_ms() > end) return found == want;
    sleep_ms(10);
  }
}

static int listener(int type, int *port) {
  int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || (type == SOCK_STREAM && listen(s, 8) != 0) ||
      getsockname(s, (struct sockaddr *)&a, &al) != 0)
    return -1;
  *port = ntohs(a.sin_port);
  return s;
}

/* Runs the escape server through one host as the current user and prints
 * "key value" lines: uid, ready, echo, namespaces, report <line>...,
 * udp_received, daemon_started, daemon_gone. mode is "sandbox" or
 * "control". */
static int worker(const char *mode) {
  int control = strcmp(mode, "control") == 0;
  const char *tmp = getenv("TMPDIR");
  char root[512];
  snprintf(root, sizeof root, "%s/escapes-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(root) == NULL) return 2;
  char *sandbox = NULL;
  char *setup[] = {"/bin/sh", (char *)escapes_path(), "setup", root, NULL};
  if (run(setup, NULL, &sandbox) != 0) return 2;
  sandbox[strcspn(sandbox, "\n")] = 0;
  int tcp_port = 0, udp_port = 0;
  int tcp = listener(SOCK_STREAM, &tcp_port), udp = listener(SOCK_DGRAM, &udp_port);
  if (tcp < 0 || udp < 0) return 2;
  char token[64], daemon[80];
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  snprintf(token, sizeof token, "300.%09ld", ts.tv_nsec);
  int dlen = snprintf(daemon, sizeof daemon, "sleep%c%s%c", 0, token, 0);

  char cfg[4096];
  snprintf(cfg, sizeof cfg,
           "{\"mcpServers\":{\"escapes\":{\"command\":\"/bin/sh\",\"args\":[\"%s\",\"try\",\"%s\",\"%s\"],"
           "\"env\":{\"ESCAPES_TCP_PORT\":\"%d\",\"ESCAPES_UDP_PORT\":\"%d\",\"ESCAPES_TOKEN\":\"%s\"},"
           "\"timeouts\":{\"close_grace_ms\":300,\"ready_ms\":%d}%s%s}}}",
           escapes_path(), root, fixture_path(), tcp_port, udp_port, token, T(30000),
           control ? "" : ",\"sandboxEnabled\":true,\"sandbox\":", control ? "" : sandbox);
  printf("uid %d\n", (int)getuid());
  lmcp_host *h = NULL;
  char *err = NULL, *res = NULL;
  if (lmcp_host_new(cfg, strlen(cfg), &h, &err) != LMCP_OK || lmcp_host_connect(h, &err) != LMCP_OK) {
    printf("error %s\n", err ? err : "");
    return 2;
  }
  printf("ready %d\n", lmcp_host_wait_ready(h, T(30000), NULL) == LMCP_OK);
  if (lmcp_host_call_tool_sync(h, "escapes__echo", "{\"text\":\"served\"}", 17, NULL, 0, &res, NULL, NULL) ==
      LMCP_OK)
    printf("echo %d\n", strstr(res, "served") != NULL);
  lmcp_free(res);
  char *servers = NULL;
  if (lmcp_host_servers(h, &servers, NULL, NULL) == LMCP_OK)
    printf("namespaces %d\n", strstr(servers, "\"namespaces\":true") != NULL);
  lmcp_free(servers);
  printf("daemon_started %d\n", wait_found(daemon, (size_t)dlen, 1, T(30000)));

  char path[600];
  snprintf(path, sizeof path, "%s/allowed/report", root);
  char *report = read_file(path, NULL);
  for (char *line = report ? strtok(report, "\n") : NULL; line; line = strtok(NULL, "\n"))
    printf("report %s\n", line);
  free(report);
  char b[16];
  printf("udp_received %d\n", recv(udp, b, sizeof b, MSG_DONTWAIT) > 0);

  lmcp_host_free(h);
  printf("daemon_gone %d\n", wait_found(daemon, (size_t)dlen, 0, control ? 0 : T(30000)));
  pid_t left = find_process(daemon, (size_t)dlen);
  if (left > 0) kill(left, SIGKILL); /* the control's daemon, stopped here */
  close(tcp);
  close(udp);
  free(sandbox);
  remove_tree(root);
  return 0;
}

/* Runs, as the current user on a machine withoutlayers made (no Landlock,
 * or no user namespaces), a host of three servers that each try a write
 * outside allowWrite before becoming the fixture: "boxed" (sandboxEnabled,
 * so required), "loose" ("required": false) and "plain". Prints "servers
 * <lmcp_host_servers>" once boxed failed and loose is ready, and
 * "written_boxed 0|1". */
static int worker_fails_closed(void) {
  const char *tmp = getenv("TMPDIR");
  char root[512], outside[600];
  snprintf(root, sizeof root, "%s/fails-closed-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(root) == NULL) return 2;
  snprintf(outside, sizeof outside, "%s/outside", root);
  if (mkdir(outside, 0777) != 0) return 2;
  char cfg[4096];
  const char *srv = "\"command\":\"/bin/sh\",\"args\":[\"-c\",\"echo x > %s/%s; exec %s\"],\"restart\":false";
  char boxed[1024], loose[1024], plain[1024];
  snprintf(boxed, sizeof boxed, srv, outside, "boxed", fixture_path());
  snprintf(loose, sizeof loose, srv, outside, "loose", fixture_path());
  snprintf(plain, sizeof plain, srv, outside, "plain", fixture_path());
  snprintf(cfg, sizeof cfg,
           "{\"mcpServers\":{\"boxed\":{%s,\"sandboxEnabled\":true,\"sandbox\":{\"filesystem\":{"
           "\"allowWrite\":[\"%s/in\"]}}},"
           "\"loose\":{%s,\"sandboxEnabled\":true,\"sandbox\":{\"required\":false}},\"plain\":{%s}}}",
           boxed, root, loose, plain);
  lmcp_host *h = NULL;
  char *err = NULL;
  if (lmcp_host_new(cfg, strlen(cfg), &h, &err) != LMCP_OK || lmcp_host_connect(h, &err) != LMCP_OK) {
    printf("error %s\n", err ? err : "");
    return 2;
  }
  char *servers = NULL;
  for (int waited = 0; waited < T(60000); waited += 20) {
    lmcp_free(servers);
    servers = NULL;
    if (lmcp_host_servers(h, &servers, NULL, NULL) != LMCP_OK) return 2;
    char *b = strstr(servers, "\"boxed\":"), *l = strstr(servers, "\"loose\":");
    if (b && l && strstr(b, "\"state\":\"failed\"") && strstr(l, "\"state\":\"ready\"")) break;
    usleep(20 * 1000);
  }
  printf("servers %s\n", servers ? servers : "");
  lmcp_free(servers);
  lmcp_host_free(h);
  char path[700];
  snprintf(path, sizeof path, "%s/boxed", outside);
  printf("written_boxed %d\n", access(path, F_OK) == 0);
  remove_tree(root);
  return 0;
}

/* ------------------------------------------------------------------- tests */

/* What nobody runs, copied where nobody can read it: the checkout may lie
 * beneath a directory of mode 0700 (a home, mktemp -d), where nobody cannot
 * reach this program, the library, the fixture or the escape script. The
 * stage is one 0755 directory, made once; stage_env gives the environment
 * that points the worker at it. */
static char stage_dir[64];

static int copy_file(const char *from, const char *to) {
  size_t len = 0;
  char *b = read_file(from, &len);
  if (b == NULL) return -1;
  int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  int ok = fd >= 0 && write(fd, b, len) == (ssize_t)len;
  if (fd >= 0) close(fd);
  free(b);
  return ok ? 0 : -1;
}

static const char *stage(void) {
  if (stage_dir[0]) return stage_dir;
  char dir[] = "/tmp/lmcp-stage-XXXXXX";
  if (mkdtemp(dir) == NULL || chmod(dir, 0755) != 0) return NULL;
  Dl_info lib;
  char self[512], helper[600], wrapper[600], to[700];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0 || dladdr((void *)lmcp_host_new, &lib) == 0 || lib.dli_fname == NULL) return NULL;
  self[n] = 0;
  snprintf(helper, sizeof helper, "%.*s/lemonmcp-sandbox", (int)(strrchr(lib.dli_fname, '/') - lib.dli_fname),
           lib.dli_fname);
  snprintf(wrapper, sizeof wrapper, "%.*s/withoutlayers",
           (int)(strrchr(fixture_path(), '/') - fixture_path()), fixture_path());
  const char *files[][2] = {{self, "test"},
                            {lib.dli_fname, "liblemonmcp.so.1"},
                            {helper, "lemonmcp-sandbox"},
                            {fixture_path(), "mcpfixture"},
                            {wrapper, "withoutlayers"},
                            {escapes_path(), "escapes.sh"}};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(to, sizeof to, "%s/%s", dir, files[i][1]);
    if (copy_file(files[i][0], to) != 0) return NULL;
  }
  memcpy(stage_dir, dir, sizeof dir);
  return stage_dir;
}

/* The staged program and the environment entries that point it at the
 * staged copies; prog and env must hold 700 bytes and 4 entries of 700. */
static int staged(char *prog, char env[4][700]) {
  const char *d = stage();
  if (d == NULL) return -1;
  snprintf(prog, 700, "%s/test", d);
  snprintf(env[0], 700, "LD_LIBRARY_PATH=%s", d);
  snprintf(env[1], 700, "LMCP_FIXTURE=%s/mcpfixture", d);
  snprintf(env[2], 700, "LMCP_ESCAPES=%s/escapes.sh", d);
  snprintf(env[3], 700, "LEMONMCP_SANDBOX_HELPER=%s/lemonmcp-sandbox", d);
  return 0;
}

/* On a machine without a layer (withoutlayers FLAG, beside the fixture),
 * as uid: the required server fails naming the layer and why and writes
 * nothing; the best-effort one runs and its report names what is missing. */
static void check_fails_closed(uid_t uid, const char *flag, const char *layer) {
  char home[] = "/tmp/lmcp-fails-closed-XXXXXX";
  CHECK(mkdtemp(home) != NULL && chown(home, uid, uid) == 0);
  char self[700], wrapper[700], senv[4][700];
  CHECK(staged(self, senv) == 0);
  snprintf(wrapper, sizeof wrapper, "%s/withoutlayers", stage_dir);
  char tmpdir[600], homev[600], cache[600];
  snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", home);
  snprintf(homev, sizeof homev, "HOME=%s", home);
  snprintf(cache, sizeof cache, "XDG_CACHE_HOME=%s/cache", home);
  const char *env[] = {tmpdir, homev, cache, senv[0], senv[1], senv[2], senv[3], NULL};
  char uidv[32], gidv[32];
  snprintf(uidv, sizeof uidv, "--reuid=%d", (int)uid);
  snprintf(gidv, sizeof gidv, "--regid=%d", (int)uid);
  char *as_uid[] = {"setpriv",    uidv, gidv, "--clear-groups",        wrapper,
                    (char *)flag, "--", self, "--worker-fails-closed", NULL};
  char *as_me[] = {wrapper, (char *)flag, "--", self, "--worker-fails-closed", NULL};
  char *out = NULL;
  int st = run(uid == getuid() ? as_me : as_uid, env, &out);
  remove_tree(home);
  CHECKM(st == 0, NULL, "the worker (uid %d, %s) failed with %d:\n%s", (int)uid, flag, st, out ? out : "");
  if (st != 0) return;
  CHECKM(strstr(out, "sandbox: cannot be set up in full") && strstr(out, layer), NULL,
         "uid %d %s: the required server's error does not name the layer:\n%s", (int)uid, flag, out);
  CHECKM(strstr(out, "\"missing\":[") != NULL, NULL, "uid %d %s: no missing list:\n%s", (int)uid, flag, out);
  CHECKM(strstr(out, "written_boxed 0\n") != NULL, NULL, "uid %d %s: the refused server ran:\n%s", (int)uid,
         flag, out);
  free(out);
}

static const char *landlock_layer =
    "Landlock: landlock_create_ruleset(VERSION) failed: function not implemented";
static const char *userns_layer =
    "namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: no space left on device";

void test_fails_closed_without_landlock(void) {
  check_fails_closed(getuid(), "-landlock", landlock_layer);
  if (getuid() == 0) check_fails_closed(NOBODY, "-landlock", landlock_layer);
}

void test_fails_closed_without_user_namespaces(void) {
  check_fails_closed(getuid(), "-userns", userns_layer);
  if (getuid() == 0) check_fails_closed(NOBODY, "-userns", userns_layer);
}

/* The worker's output, run as uid in mode; its temporary, home and cache
 * directories are a fresh directory that uid owns, removed afterwards. */
static char *escapes(uid_t uid, const char *mode, const char *extra_env) {
  char home[] = "/tmp/lmcp-escapes-XXXXXX";
  if (mkdtemp(home) == NULL || chown(home, uid, uid) != 0) return NULL;
  char self[700], senv[4][700];
  if (staged(self, senv) != 0) return NULL;
  char tmpdir[600], homev[600], cache[600];
  snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", home);
  snprintf(homev, sizeof homev, "HOME=%s", home);
  snprintf(cache, sizeof cache, "XDG_CACHE_HOME=%s/cache", home);
  /* extra_env last: it may name another helper (the control). */
  const char *env[] = {tmpdir, homev, cache, senv[0], senv[1], senv[2], extra_env ? extra_env : senv[3],
                       NULL};
  char uidv[32], gidv[32];
  snprintf(uidv, sizeof uidv, "--reuid=%d", (int)uid);
  snprintf(gidv, sizeof gidv, "--regid=%d", (int)uid);
  char *as_uid[] = {"setpriv", uidv, gidv, "--clear-groups", self, "--worker", (char *)mode, NULL};
  char *as_me[] = {self, "--worker", (char *)mode, NULL};
  char *out = NULL;
  int st = run(uid == getuid() ? as_me : as_uid, env, &out);
  remove_tree(home);
  CHECKM(st == 0, NULL, "the worker (uid %d, %s) failed with %d:\n%s", (int)uid, mode, st, out ? out : "");
  return out;
}

/* Counts the report lines "KIND NAME OUTCOME" of out with that kind and
 * outcome; *total gets the number of that kind. */
static int outcomes(const char *out, const char *kind, const char *outcome, int *total) {
  int n = 0;
  *total = 0;
  char prefix[64];
  snprintf(prefix, sizeof prefix, "report %s ", kind);
  for (const char *l = out; l && (l = strstr(l, prefix)) != NULL; l++) {
    const char *end = strchr(l, '\n');
    const char *last = end ? end : l + strlen(l);
    size_t ol = strlen(outcome);
    (*total)++;
    n += (size_t)(last - l) > ol && strncmp(last - ol, outcome, ol) == 0 && last[-(int)ol - 1] == ' ';
  }
  return n;
}

static void check_confined(uid_t uid) {
  char *out = escapes(uid, "sandbox", NULL);
  if (out == NULL) return;
  char want[32];
  snprintf(want, sizeof want, "uid %d\n", (int)uid);
  int total = 0;
  CHECKM(strstr(out, want) != NULL, NULL, "%s", out);
  CHECKM(strstr(out, "ready 1\n") && strstr(out, "echo 1\n") && strstr(out, "namespaces 1\n"), NULL, "%s",
         out);
  CHECKM(strstr(out, "report end\n") != NULL, NULL, "the report is incomplete:\n%s", out);
  CHECKM(outcomes(out, "escape", "denied", &total) == ESCAPES && total == ESCAPES, NULL,
         "uid %d: an escape got through:\n%s", (int)uid, out);
  CHECKM(outcomes(out, "control", "ok", &total) == total && total == 2, NULL, "%s", out);
  CHECKM(strstr(out, "udp_received 0\n") != NULL, NULL, "uid %d: a datagram reached the host's loopback",
         (int)uid);
  CHECKM(strstr(out, "daemon_started 1\n") && strstr(out, "daemon_gone 1\n"), NULL,
         "uid %d: the daemon outlived the host:\n%s", (int)uid, out);
  free(out);
}

void test_escapes_as_root(void) {
  check_confined(getuid());
}

void test_escapes_as_nobody(void) {
  if (getuid() != 0) {
    printf("  already unprivileged: the run as this user is the unprivileged run\n");
    return;
  }
  check_confined(NOBODY);
}

/* Without sandbox and without the helper, every escape gets through and
 * the daemon outlives the host: each case can fail. */
void test_escapes_control(void) {
  char *out = escapes(getuid(), "control", "LEMONMCP_SANDBOX_HELPER=/nonexistent");
  if (out == NULL) return;
  int total = 0;
  CHECKM(strstr(out, "report end\n") != NULL, NULL, "%s", out);
  CHECKM(outcomes(out, "escape", "ok", &total) == ESCAPES && total == ESCAPES, NULL,
         "the control should let every escape through:\n%s", out);
  CHECKM(strstr(out, "udp_received 1\n") && strstr(out, "daemon_gone 0\n"), NULL, "%s", out);
  free(out);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--worker") == 0) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    return worker(argv[2]);
  }
  if (argc == 2 && strcmp(argv[1], "--worker-fails-closed") == 0) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    return worker_fails_closed();
  }
  static const h_test tests[] = {
      {"test_escapes_control", test_escapes_control},
      {"test_escapes_as_root", test_escapes_as_root},
      {"test_escapes_as_nobody", test_escapes_as_nobody},
      {"test_fails_closed_without_landlock", test_fails_closed_without_landlock},
      {"test_fails_closed_without_user_namespaces", test_fails_closed_without_user_namespaces},
  };
  int rc = h_main(argc, argv, tests, sizeof tests / sizeof tests[0], 300);
  if (stage_dir[0]) remove_tree(stage_dir);
  return rc;
}
