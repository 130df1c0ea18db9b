package streamablehttp

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport/internal/runners"
)

// TestRunnersKeptAndEnded: requests nobody waits on are made by runners
// the transport keeps: one runner makes requests sent one after another,
// a burst leaves at most runners.MaxIdle waiting, and Close ends them all
// before it returns.
func TestRunnersKeptAndEnded(t *testing.T) {
	const burst = runners.MaxIdle + 8
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
	kept := func(n int) func() bool {
		return func() bool { return tr.runners.Idle() == n && tr.runners.Live() == n }
	}
	handshake(t, tr, sink) // initialize: the first runner
	for id := int64(2); id < 22; id++ {
		require.Eventually(t, kept(1), 5*time.Second, time.Millisecond, "the runner did not wait for request %d", id)
		send(t, tr, request(id, "seq"))
		require.JSONEq(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"seq"}}`, id), sink.Next(t))
	}
	require.EqualValues(t, 1, tr.runners.Started(), "requests sent one after another were not made by the one runner kept")

	for id := int64(100); id < 100+burst; id++ {
		send(t, tr, request(id, "gate"))
	}
	for range burst {
		require.Contains(t, sink.Next(t), `"echo":"gate"`)
	}
	require.Eventually(t, kept(runners.MaxIdle), 5*time.Second, time.Millisecond, "the burst's runners past the idle cap did not end")

	require.NoError(t, tr.Close(t.Context()))
	require.Zero(t, tr.runners.Live(), "a runner outlived Close")
}
