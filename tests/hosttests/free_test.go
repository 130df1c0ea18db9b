package hosttests

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// TestHostFreeRacesCalls frees a host of two live servers while goroutines
// call it and progress events flow: when Free returns every accepted call
// has completed (the pending ones with StatusCancelled), no callback runs
// or starts again, the handler's destroy ran, and calls after it fail with
// StatusInvalidHandle. Then no goroutine of the host is left.
func TestHostFreeRacesCalls(t *testing.T) {
	baseline := runtime.NumGoroutine()
	for it := 0; it < 5; it++ {
		h, err := host.Parse([]byte(fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(""))), "test")
		require.Nil(t, errOrNil(err))
		var freed, stop atomic.Bool
		var accepted, dones, cancelled, late, running, destroys, lateStatus atomic.Int32
		enter := func() {
			if freed.Load() {
				late.Add(1)
			}
			running.Add(1)
		}
		h.SetEventHandler(func(string, []byte) { enter(); running.Add(-1) }, func() { destroys.Add(1) })
		require.Nil(t, errOrNil(h.Connect()))
		require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
		done := func(_ uint64, st core.Status, _ []byte) {
			enter()
			defer running.Add(-1)
			if st == core.StatusCancelled {
				cancelled.Add(1)
			}
			dones.Add(1)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					after := freed.Load()
					var err *core.Error
					op := (g + i) % 3
					switch op {
					case 0:
						_, err = h.CallTool("a__slow", []byte(`{"ms":300,"steps":30}`), core.CallOptions{Progress: true}, done)
					case 1:
						_, err = h.Call("b", "tools/call", []byte(`{"name":"echo","arguments":{"text":"x"}}`), core.CallOptions{}, done)
					default:
						_, err = h.CallSync("b", "tools/call", []byte(`{"name":"echo","arguments":{"text":"x"}}`), core.CallOptions{})
					}
					if err == nil && op != 2 { // an async call: done runs
						accepted.Add(1)
					}
					if after && (err == nil || err.Status != core.StatusInvalidHandle) {
						lateStatus.Add(1)
					}
					if err != nil && err.Status == core.StatusInvalidHandle {
						time.Sleep(time.Millisecond)
					}
				}
			}()
		}
		time.Sleep(time.Duration(20+it*15) * time.Millisecond)
		h.Free()
		require.Zero(t, running.Load(), "iteration %d: callbacks running when Free returned", it)
		atDone, atDestroys := dones.Load(), destroys.Load()
		freed.Store(true)
		time.Sleep(20 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		require.EqualValues(t, 1, atDestroys, "iteration %d: the destroy ran before Free returned", it)
		require.Equal(t, atDone, dones.Load(), "iteration %d: completions after Free returned", it)
		require.Equal(t, accepted.Load(), dones.Load(), "iteration %d: every accepted call completed", it)
		require.Zero(t, late.Load(), "iteration %d: callbacks started after Free returned", it)
		require.Zero(t, lateStatus.Load(), "iteration %d: calls after Free not answered StatusInvalidHandle", it)
		require.Positive(t, cancelled.Load(), "iteration %d: some calls were pending at Free", it)
	}
	// The servers' teardown goes on in the background; then nothing is left.
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= baseline+1 }, 10*time.Second, 20*time.Millisecond,
		"goroutines: %d before, %d after", baseline, runtime.NumGoroutine())
}
