/* One process of the shared-grant test: a client of the C library that
 * calls the echo tool from several threads until a deadline and prints
 * {"ok", "failed", "errors"} as one JSON line (errors: the first status).
 *
 *   cworker CONFIG THREADS START_AT_MS UNTIL_MS
 */
#include <lemonmcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static lmcp_client *client;
static long long until_ms;
static atomic_long ok_calls, failed_calls;
static atomic_int first_failure;

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long long ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static void *run(void *arg) {
  (void)arg;
  const char *params = "{\"name\":\"echo\",\"arguments\":{\"text\":\"c\"}}";
  while (now_ms() < until_ms) {
    char *result = NULL, *err = NULL;
    size_t len = 0;
    lmcp_status st =
        lmcp_client_call_sync(client, "tools/call", params, strlen(params), NULL, 0, &result, &len, &err);
    if (st == LMCP_OK) {
      atomic_fetch_add(&ok_calls, 1);
    } else {
      atomic_fetch_add(&failed_calls, 1);
      int zero = 0;
      atomic_compare_exchange_strong(&first_failure, &zero, (int)st);
    }
    lmcp_free(result);
    lmcp_free(err);
    sleep_ms(100); /* paced: every thread still meets each expiry */
  }
  return NULL;
}

static void fail(const char *what, lmcp_status st) {
  printf("{\"ok\": 0, \"failed\": 1, \"errors\": [\"%s: %s\"]}\n", what, lmcp_status_string(st));
  exit(1);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: cworker CONFIG THREADS START_AT_MS UNTIL_MS\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char config[65536];
  size_t n = fread(config, 1, sizeof config, f);
  fclose(f);
  int threads = atoi(argv[2]);
  long long start_ms = atoll(argv[3]);
  until_ms = atoll(argv[4]);
  sleep_ms(start_ms - now_ms());
  lmcp_status st = lmcp_client_new(config, n, &client, NULL);
  if (st != LMCP_OK) fail("client_new", st);
  if ((st = lmcp_client_connect(client, NULL)) != LMCP_OK) fail("connect", st);
  if ((st = lmcp_client_wait_ready(client, 30000, NULL)) != LMCP_OK) fail("wait_ready", st);
  pthread_t ts[64];
  if (threads > 64) threads = 64;
  for (int i = 0; i < threads; i++) pthread_create(&ts[i], NULL, run, NULL);
  for (int i = 0; i < threads; i++) pthread_join(ts[i], NULL);
  lmcp_client_close(client, 5000, NULL);
  lmcp_client_free(client);
  int ff = atomic_load(&first_failure);
  printf("{\"ok\": %ld, \"failed\": %ld, \"errors\": [%s%s%s]}\n", atomic_load(&ok_calls),
         atomic_load(&failed_calls), ff ? "\"" : "", ff ? lmcp_status_string((lmcp_status)ff) : "",
         ff ? "\"" : "");
  return 0;
}
