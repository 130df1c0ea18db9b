package gatewaytests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/gateway"
)

// sseEvent is one event of an SSE stream.
type sseEvent struct{ id, data string }

// openSSE posts body and returns the response's SSE events as they come.
func openSSE(t *testing.T, method, url, body string, headers map[string]string) (*http.Response, <-chan sseEvent) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan sseEvent, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			case line == "":
				if ev.data != "" {
					events <- ev
				}
				ev = sseEvent{}
			}
		}
	}()
	return resp, events
}

func initSession(t *testing.T, url string) map[string]string {
	t.Helper()
	status, hdr, body := post(t, url, initBody, nil)
	require.Equal(t, http.StatusOK, status, body)
	sid := map[string]string{"Mcp-Session-Id": hdr.Get("Mcp-Session-Id")}
	status, _, _ = post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
	require.Equal(t, http.StatusAccepted, status)
	return sid
}

// TestResumeAfterTheStreamDrops: a front that lost a call's stream gets
// the rest of it, result included, with Last-Event-ID.
func TestResumeAfterTheStreamDrops(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	sid := initSession(t, url)
	resp, events := openSSE(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"ms":1500,"steps":5},"_meta":{"progressToken":"p7"}}}`, sid)
	first := waitFor(t, events, "the first progress event")
	require.Contains(t, first.data, "notifications/progress")
	require.NotEmpty(t, first.id)
	resp.Body.Close() // the connection drops mid-call

	hdrs := map[string]string{"Last-Event-ID": first.id}
	for k, v := range sid {
		hdrs[k] = v
	}
	resp2, rest := openSSE(t, http.MethodGet, url, "", hdrs)
	defer resp2.Body.Close()
	var last sseEvent
	for ev := range rest {
		require.NotEqual(t, first.id, ev.id, "an event already seen is not sent again")
		last = ev
		if strings.Contains(ev.data, `"id":7`) {
			break
		}
	}
	require.Contains(t, last.data, `"result"`, "the resumed stream ends with the call's result")
}

// TestFrontVanishingCancelsTheServerCall: a front that drops a call's
// stream and never resumes it gets the call cancelled upstream.
func TestFrontVanishingCancelsTheServerCall(t *testing.T) {
	logFile := t.TempDir() + "/stdin.log"
	h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`", "args": ["-log-file", "`+logFile+`"], "protocol": {"mode": "legacy"}}}, "tool_prefix": "never"}`)
	g := newGateway(t, h, `{"resume_grace_ms": 100}`)
	url := httpFront(t, g)
	sid := initSession(t, url)
	resp, events := openSSE(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"slow","arguments":{"ms":30000,"steps":300},"_meta":{"progressToken":"p8"}}}`, sid)
	waitFor(t, events, "a progress event")
	resp.Body.Close()
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Contains(string(b), "cancelled ")
	}, 15*time.Second, 20*time.Millisecond, "the server call was never cancelled")
	// The session and the gateway still serve.
	status, _, body := post(t, url, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, sid)
	require.Equal(t, http.StatusOK, status, body)
}

// TestSessionsAreBounded: max_sessions refuses one more, and idle
// sessions are closed.
func TestSessionsAreBounded(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"max_sessions": 2, "session_idle_timeout_ms": 200}`)
	url := httpFront(t, g)
	initSession(t, url)
	initSession(t, url)
	status, _, body := post(t, url, initBody, nil)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "max_sessions")
	require.Eventually(t, func() bool { return g.SessionCount() == 0 }, 10*time.Second, 20*time.Millisecond, "idle sessions were not closed")
	initSession(t, url) // room again
}

// TestAbandonedSessionsGiveTheirMemoryBack: many sessions opened and
// abandoned leave the heap where it was once their idle timeout passed.
// Under the race detector it opens 2,000 (HTTP round trips are what it
// costs); make test-fixtures also runs it without, with
// LEMONMCP_GATEWAY_SESSIONS=100000: the count.
func TestAbandonedSessionsGiveTheirMemoryBack(t *testing.T) {
	sessions := 2000
	if n, err := strconv.Atoi(os.Getenv("LEMONMCP_GATEWAY_SESSIONS")); err == nil && n > 0 {
		sessions = n
	}
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"max_sessions": 1000000, "session_idle_timeout_ms": 100}`)
	url := httpFront(t, g)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var opened atomic.Int64 // sessions the gateway opened (a refusal opens none)
	initOnce := func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") != "" {
				opened.Add(1)
			}
		}
	}
	for range 200 {
		initOnce()
	}
	require.Eventually(t, func() bool { return g.SessionCount() == 0 }, 10*time.Second, 20*time.Millisecond)
	before := heap()
	var wg sync.WaitGroup
	work := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				initOnce()
			}
		}()
	}
	for range sessions {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	require.Equal(t, int64(200+sessions), opened.Load(), "every initialize opened a session")
	require.Eventually(t, func() bool { return g.SessionCount() == 0 }, 20*time.Second, 20*time.Millisecond, "abandoned sessions stay")
	after := heap()
	// What stays is the same whatever the count (about 200 KiB: the
	// connections' buffers); 1 MiB catches 512 bytes kept per session at
	// 2,000, 10 at 100,000.
	require.Less(t, after, before+1<<20, "the heap grew from %d to %d bytes over %d abandoned sessions", before, after, sessions)
}

func heap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestStopWaitsForCallsThenEnds: Stop lets a call under way finish
// (its front gets the result), refuses new connections, and ends.
func TestStopWaitsForCallsThenEnds(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	ctx, cs, progress := relayHTTPSession(t, url)
	result := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600, "steps": 3}, Meta: mcp.Meta{"progressToken": "stop"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error")
		}
		result <- err
	}()
	waitFor(t, progress, "the call's first progress") // the call is under way
	require.Nil(t, g.Stop(10*time.Second))
	err := <-result
	require.NoError(t, err, "the call under way finished: %v", err)
	_, err = net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://"), time.Second)
	require.Error(t, err, "a stopped gateway takes no connection")
}

// TestSlowLorisDoesNotBlockOthers: connections that trickle their
// headers do not keep other fronts from being served.
func TestSlowLorisDoesNotBlockOthers(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	addr := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	var conns []net.Conn
	for range 64 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, _ = c.Write([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "))
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	initSession(t, url)
}

// TestStdioSessionOutlivesIdleTimeout: a stdio front's session is its
// connection's; the idle timeout (for HTTP sessions) never closes it.
func TestStdioSessionOutlivesIdleTimeout(t *testing.T) {
	h := newHost(t, legacy)
	g := newGateway(t, h, `{"session_idle_timeout_ms": 20}`)
	_, cs := stdioSession(t, g)
	time.Sleep(300 * time.Millisecond) // many idle sweeps (every 10 ms)
	require.Equal(t, 1, g.SessionCount())
	require.Contains(t, callText(t, cs, "echo", map[string]any{"text": "still here"}), "still here")
}

// TestWaitZeroAfterStopSaysEnded: once Stop returned, Wait(0) says the
// gateway ended, every time (a 0 ms timer must not win against an end
// already there). Many gateways in turn over one host: a coin toss per
// round would not pass them all.
func TestWaitZeroAfterStopSaysEnded(t *testing.T) {
	h := newHost(t, legacy)
	for i := range 64 {
		o, err := gateway.ParseOptions(nil)
		require.Nil(t, err)
		g, err := gateway.New(h, o)
		require.Nil(t, err)
		_, err = g.ServeHTTP("127.0.0.1:0")
		require.Nil(t, err)
		require.Nil(t, g.Stop(5*time.Second))
		require.Nil(t, g.Wait(0), "round %d: Wait(0) right after Stop", i)
		g.Release()
	}
}

// TestStopIsBoundedByItsTimeout: a call that outlasts Stop's timeout
// does not hold the gateway up: Stop ends serving, the server's request
// is cancelled, and the front's call fails rather than hanging.
func TestStopIsBoundedByItsTimeout(t *testing.T) {
	logFile := t.TempDir() + "/stdin.log"
	h := hostFromConfig(t, `{"mcpServers": {"fx": {"command": "`+fixtureBin+`", "args": ["-log-file", "`+logFile+`"], "protocol": {"mode": "legacy"}}}, "tool_prefix": "never"}`)
	g := newGateway(t, h, "")
	url := httpFront(t, g)
	ctx, cs, progress := relayHTTPSession(t, url)
	completed := make(chan bool, 1) // whether the call got its whole result
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 25000, "steps": 250}, Meta: mcp.Meta{"progressToken": "long"}})
		completed <- err == nil && !res.IsError
	}()
	waitFor(t, progress, "the call's first progress")
	require.Nil(t, g.Stop(200*time.Millisecond), "Stop returns once serving ended")
	require.Nil(t, g.Wait(0))
	require.Eventually(t, func() bool { return strings.Contains(readFile(logFile), "cancelled ") }, 15*time.Second, 10*time.Millisecond,
		"the server's request was not cancelled")
	select {
	case ok := <-completed:
		require.False(t, ok, "the call outlived the stop")
	case <-ctx.Done():
		t.Fatal("the front's call hangs after the gateway stopped")
	}
}
