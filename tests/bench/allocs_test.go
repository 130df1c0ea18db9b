package bench

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/hostclient"
)

// The allocations of one sequential tools/call, through the core as a host
// makes it (core.Client.CallSync), against servers in processes of their
// own so that only the client's allocations count. Each is named here by
// the code that makes it (go test -memprofile with -memprofilerate 1); a
// change that adds one fails the test until it is named here too, and
// justified: the per-call path stays lean (issue #41). Counts, not times:
// nothing here depends on the machine's speed or load.
//
// stdio, 14 (the rawecho fixture):
//   - core.callSync: none (its waiter, channel and bound completion, is
//     pooled);
//   - core.call: the call's state, core.call (1);
//   - core.sendCtxFor: the send context, boxed as a context.Context (1);
//   - core.startTimerLocked: the call's timeout, time.AfterFunc (2: the
//     timer and its closure);
//   - core.envelopeMember: the result, copied out of the reader's buffer
//     for the caller (1), and the iterator's capture of it (1);
//   - json-iterator's ReadString: the member names of the response
//     ("jsonrpc", "id", "result") read as strings (3);
//   - five tiny allocations (under 16 bytes, without pointers: the
//     runtime packs them, and the memory profile does not list them one
//     by one) of the above.
//
// Streamable HTTP, 63 (this binary serving minimalHTTP; 85 before the
// exchange ran on the caller's goroutine, transport/internal/callerhttp;
// 65 before a connection kept for under a millisecond was taken again
// without the peek whether the server closed it):
// the same 9 of the core, the transport's (the request body's copy and
// its reader, the pending request with its context and cancel function,
// the context marking the exchange for the caller's thread, the request's
// header values built once per session, the body read into one slice of
// its Content-Length), callerhttp's (the pool key, the watch that wakes
// the thread when the request's context ends, context.AfterFunc's 3 with
// its registration, and the response body's wrapper), and net/http's own
// per exchange (about 35: the request and its header map and URL,
// Client.Do's copy of the request and its header copier, Request.Write's
// transfer writer, the response, its MIME header and body reader).
var callAllocBudget = []struct {
	transport string
	allocs    float64
}{
	{"stdio", 14},
	{"streamable_http", 63},
}

func TestCallPathAllocations(t *testing.T) {
	for _, tc := range callAllocBudget {
		t.Run(tc.transport, func(t *testing.T) {
			c := hostclient.Ready(t, callConfig(t, tc.transport))
			call := func() {
				if _, err := c.CallSync("tools/call", echoParams, core.CallOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 50; i++ {
				call() // warm: pools filled, connections open, buffers grown
			}
			got := testing.AllocsPerRun(500, call)
			t.Logf("%s: %.1f allocations per call", tc.transport, got)
			if got > tc.allocs+raceAllocs[tc.transport] {
				t.Errorf("a %s call allocates %.1f times, more than the %.0f accounted for in allocs_test.go: name the new one there, or remove it", tc.transport, got, tc.allocs)
			}
		})
	}
}

// callConfig is a client's config for a server of the transport, in a
// process of its own: the rawecho fixture over stdio, this test binary
// serving minimalHTTP over Streamable HTTP.
func callConfig(t *testing.T, transport string) string {
	legacy := `"protocol":{"mode":"legacy","versions":["` + pinnedVersion + `"]}`
	if transport == "stdio" {
		p := fixtureT(t, "rawecho")
		return `{"transport":{"type":"stdio","command":"` + p + `"},` + legacy + `}`
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMinimalHTTPServer$")
	cmd.Env = append(os.Environ(), "LEMONMCP_BENCH_HTTP_SERVER=1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		t.Fatalf("the HTTP server did not start: %q %v", line, err)
	}
	return `{"transport":{"type":"streamable_http","url":"` + strings.TrimSpace(line) + `"},` + legacy + `}`
}

// TestMinimalHTTPServer is the HTTP server of TestCallPathAllocations when
// the test binary runs as its child (it prints its URL and serves until
// stdin closes); otherwise it does nothing.
func TestMinimalHTTPServer(t *testing.T) {
	if os.Getenv("LEMONMCP_BENCH_HTTP_SERVER") != "1" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(minimalHTTP))
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	buf := make([]byte, 1)
	os.Stdin.Read(buf) // until the parent closes it
	ln.Close()
}

func fixtureT(t *testing.T, name string) string {
	p, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p = p + "/../../build/fixtures/" + name
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("fixture server not built (run make fixtures): %v", err)
	}
	return p
}
