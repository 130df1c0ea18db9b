package hosttests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// A host reaches only its own calls: while a blocking call (whose id the
// application never received) and the servers' own listens are in flight,
// Cancel of any id the host did not hand out answers StatusNotFound and
// cancels nothing; an id Call returned is cancelled.
func TestHostCancelReachesOnlyItsOwnCalls(t *testing.T) {
	h, _ := newHost(t, `{"mcpServers":{"one":`+stdioServer("")+`}}`)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	type outcome struct {
		res []byte
		err *core.Error
	}
	blocking := make(chan outcome, 1)
	go func() {
		res, err := h.CallSync("one", "tools/call", []byte(`{"name":"slow","arguments":{"ms":400,"steps":2}}`), core.CallOptions{})
		blocking <- outcome{res, err}
	}()
	time.Sleep(100 * time.Millisecond) // the blocking call is under way
	for id := uint64(0); id < 20; id++ {
		err := h.Cancel(id)
		require.NotNil(t, err, "id %d", id)
		require.Equal(t, core.StatusNotFound, err.Status, "id %d", id)
	}
	got := <-blocking
	require.Nil(t, errOrNil(got.err), "the blocking call was not cancelled")

	done := make(chan core.Status, 1)
	id, err := h.Call("one", "tools/call", []byte(`{"name":"slow","arguments":{"ms":5000,"steps":2}}`), core.CallOptions{}, func(_ uint64, st core.Status, _ []byte) { done <- st })
	require.Nil(t, errOrNil(err))
	require.Nil(t, errOrNil(h.Cancel(id)))
	require.Equal(t, core.StatusCancelled, <-done)
}
