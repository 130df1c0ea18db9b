package streamablehttp

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runners counts tr's runner goroutines, and those of them waiting for a
// request (parked in the select), from the goroutine profile: each frame
// names its receiver, so other tests' transports do not count.
func runners(tr *Transport) (all, waiting int) {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	frame := fmt.Sprintf("(*Transport).runner(%p", tr)
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, frame) {
			all++
			if strings.Contains(g, "[select") {
				waiting++
			}
		}
	}
	return all, waiting
}

// TestRunnersKeptAndEnded: requests that do not wait on their sender are
// made by runners the transport keeps: one runner serves requests made one
// after another, a burst leaves at most maxIdleRunners waiting, and Close
// ends them all before Closed.
func TestRunnersKeptAndEnded(t *testing.T) {
	const burst = maxIdleRunners + 8
	var mu sync.Mutex
	arrived := 0
	gate := make(chan struct{})
	srv := newServer(t, mcp("s1", func(w http.ResponseWriter, r *http.Request, m msg) {
		if m.Method == "gate" { // held until the whole burst is in flight
			mu.Lock()
			if arrived++; arrived == burst {
				close(gate)
			}
			mu.Unlock()
			<-gate
		}
		echo(w, r, m)
	}))
	tr, sink := open(t, srv.URL)
	// kept reports whether tr has n runners, every one waiting for a
	// request. (A runner counts itself idle just before it waits: a request
	// sent in between gets a runner of its own, as it may.)
	kept := func(n int) func() bool {
		return func() bool {
			all, waiting := runners(tr)
			return all == n && waiting == n && tr.idleRunners.Load() == int32(n)
		}
	}
	handshake(t, tr, sink)

	for id := int64(2); id < 22; id++ {
		require.Eventually(t, kept(1), 5*time.Second, time.Millisecond,
			"requests made one after another were not made by one kept runner (before request %d)", id)
		send(t, tr, request(id, "seq"))
		require.JSONEq(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"seq"}}`, id), sink.Next(t))
	}

	for id := int64(100); id < 100+burst; id++ {
		send(t, tr, request(id, "gate"))
	}
	for range burst {
		require.Contains(t, sink.Next(t), `"echo":"gate"`)
	}
	require.Eventually(t, kept(maxIdleRunners), 5*time.Second, time.Millisecond, "the burst's runners past the idle cap did not end")

	require.NoError(t, tr.Close(t.Context()))
	all, _ := runners(tr)
	require.Zero(t, all, "a runner outlived Close")
	require.Zero(t, tr.idleRunners.Load())
}
