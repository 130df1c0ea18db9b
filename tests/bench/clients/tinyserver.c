/* tinyserver: the smallest MCP stdio server, for holding many servers at
 * once in `make bench` (N simultaneous clients): it answers initialize,
 * ping and tools/call (echo) with fixed bytes, one line per request, and
 * exits at EOF. Its memory is a few hundred KiB, so 1,000 of them measure
 * the client, not the servers. Not a conformant server. */
#include <stdio.h>
#include <string.h>

static char line[1 << 16];

int main(void) {
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  while (fgets(line, sizeof line, stdin)) {
    const char *id = strstr(line, "\"id\":");
    if (id == NULL) continue; /* a notification */
    id += 5;
    size_t idlen = strcspn(id, ",}");
    const char *result = "{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}";
    if (strstr(line, "\"initialize\"")) {
      result = "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"tiny\",\"version\":\"1\"}}";
    } else if (strstr(line, "\"ping\"")) {
      result = "{}";
    }
    printf("{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":%s}\n", (int)idlen, id, result);
    fflush(stdout);
  }
  return 0;
}
