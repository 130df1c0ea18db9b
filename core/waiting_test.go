package core

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/memory"
	"github.com/stretchr/testify/require"
)

// inlineTransport runs a waiting request's exchange inside Send, as the
// Streamable HTTP transport does, against a server that never answers: Send
// returns only when the request is aborted.
type inlineTransport struct {
	*memory.Transport
	mu      sync.Mutex
	aborted map[int64]chan struct{}
	threads map[int64]bool // whether each waiting request was a thread's (Outbound.Thread)
	waited  chan int64     // the ids of waiting requests, as Send starts them
	// strayThreads counts messages marked Thread without Waiting.
	strayThreads atomic.Int32
}

func (t *inlineTransport) Send(ctx context.Context, msg transport.Outbound) error {
	if msg.Kind != transport.KindRequest || !msg.Waiting {
		if msg.Thread {
			t.strayThreads.Add(1)
		}
		return t.Transport.Send(ctx, msg)
	}
	ch := make(chan struct{})
	t.mu.Lock()
	t.aborted[msg.ID] = ch
	t.threads[msg.ID] = msg.Thread
	t.mu.Unlock()
	t.waited <- msg.ID
	<-ch
	return nil
}

func (t *inlineTransport) Abort(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ch := t.aborted[id]; ch != nil {
		close(ch)
		delete(t.aborted, id)
	}
}

// inlineClient is a ready client over an inlineTransport to a fake server.
func inlineClient(t *testing.T) (*Client, *fakeServer, *inlineTransport) {
	t.Helper()
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	mem, peer := memory.NewPair(1024)
	s.peer = peer
	tr := &inlineTransport{Transport: mem, aborted: map[int64]chan struct{}{}, threads: map[int64]bool{}, waited: make(chan int64, 4)}
	c := New(testOptions(), tr)
	go s.serve()
	t.Cleanup(func() {
		c.Free()
		close(s.stop)
		<-s.done
	})
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	return c, s, tr
}

// TestCallSyncWaitingTimeout: CallSync marks its request Waiting; when the
// transport holds the caller inside Send, the call's timeout aborts the
// exchange, so the caller gets StatusTimeout at the timeout, and the server
// is still told (notifications/cancelled). An async call never waits, nor
// does CallSyncFromThread.
func TestCallSyncWaitingTimeout(t *testing.T) {
	c, s, tr := inlineClient(t)

	_, err := c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{Timeout: 150 * time.Millisecond, TimeoutSet: true})
	require.NotNil(t, err)
	require.Equal(t, StatusTimeout, err.Status)
	id := <-tr.waited
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/cancelled" })
	require.True(t, ok, "the server was not told of the timeout")
	tr.mu.Lock()
	require.NotContains(t, tr.aborted, id, "the exchange was not aborted")
	tr.mu.Unlock()

	s.handle("tools/call", func(_ *fakeServer, _ wireMsg) reply { return reply{result: map[string]any{"content": []any{}}} })
	_, ch := asyncCall(t, c, "tools/call", `{"name":"x"}`, CallOptions{})
	require.Equal(t, StatusOK, waitCompletion(t, ch).status)
	require.Empty(t, tr.waited, "an async call was sent as waiting")
	_, err = c.CallSyncFromThread("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Empty(t, tr.waited, "a call from a C thread was sent as waiting")
}

// TestCallOptionsWaiting: Call sends a request Waiting only for an Inline
// completion with CallOptions.Waiting (a goroutine serving a blocking call
// for a thread outside Go, as capi's submission workers do); such a call's
// timeout aborts the exchange that holds the caller, and the completion
// runs once with StatusTimeout. Any other call is never sent Waiting.
// CallOptions.Thread marks a waiting request as a thread's
// (Outbound.Thread), and only a waiting one.
func TestCallOptionsWaiting(t *testing.T) {
	cases := []struct {
		name        string
		opts        CallOptions
		wantWaiting bool
		wantThread  bool
	}{
		{"waiting and inline", CallOptions{Waiting: true, Inline: true}, true, false},
		{"waiting and inline, a thread's", CallOptions{Waiting: true, Inline: true, Thread: true}, true, true},
		{"waiting without inline", CallOptions{Waiting: true}, false, false},
		{"inline without waiting", CallOptions{Inline: true}, false, false},
		{"a thread's, not waiting", CallOptions{Inline: true, Thread: true}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s, tr := inlineClient(t)
			if !tc.wantWaiting {
				s.handle("tools/call", func(_ *fakeServer, _ wireMsg) reply { return reply{result: map[string]any{"content": []any{}}} })
			}

			opts := tc.opts
			opts.Timeout, opts.TimeoutSet = 150*time.Millisecond, true
			done := make(chan Status, 2)
			_, err := c.Call("tools/call", []byte(`{"name":"x"}`), opts, func(_ uint64, st Status, _ []byte) { done <- st })
			require.Nil(t, errOrNil(err))
			st := <-done
			require.Zero(t, tr.strayThreads.Load(), "a request not waiting was marked a thread's")
			if !tc.wantWaiting {
				require.Equal(t, StatusOK, st)
				require.Empty(t, tr.waited, "the call was sent as waiting")
				return
			}
			require.Equal(t, StatusTimeout, st)
			id := <-tr.waited
			tr.mu.Lock()
			require.NotContains(t, tr.aborted, id, "the exchange was not aborted")
			require.Equal(t, tc.wantThread, tr.threads[id])
			tr.mu.Unlock()
			require.Empty(t, done, "the completion ran twice")
		})
	}
}

// networkedTransport is a memory transport that says whether it is
// networked (transport.Networked).
type networkedTransport struct {
	*memory.Transport
	networked bool
}

func (t networkedTransport) Networked() bool { return t.networked }

// callerTransport also says whether it exchanges on the caller's thread
// (transport.CallerExchanger), which may change (httpdetect).
type callerTransport struct {
	networkedTransport
	onCaller *atomic.Bool
}

func (t callerTransport) ExchangesOnCaller() bool { return t.onCaller.Load() }

// posterTransport also says whether it POSTs on the caller's thread
// (transport.CallerPoster), which may change (httpdetect).
type posterTransport struct {
	callerTransport
	posts *atomic.Bool
}

func (t posterTransport) PostsOnCaller() bool { return t.posts.Load() }

// TestClientSyncRoute: a blocking caller outside Go makes the call on its
// own thread when the transport exchanges on the caller (Streamable HTTP),
// makes the POST on its own thread and waits outside Go when the transport
// posts on the caller (legacy HTTP+SSE), has it submitted to a library
// goroutine when the transport is otherwise networked (a host-given HTTP
// client), and waits outside Go for anything else; the route follows a
// transport that changes its mind.
func TestClientSyncRoute(t *testing.T) {
	on, off := &atomic.Bool{}, &atomic.Bool{}
	on.Store(true)
	cases := []struct {
		name string
		tr   func(*memory.Transport) transport.Transport
		want SyncRoute
	}{
		{"exchanges on the caller", func(m *memory.Transport) transport.Transport {
			return callerTransport{networkedTransport{m, true}, on}
		}, SyncOnThread},
		{"networked, not on the caller", func(m *memory.Transport) transport.Transport {
			return callerTransport{networkedTransport{m, true}, off}
		}, SyncSubmit},
		{"posts on the caller", func(m *memory.Transport) transport.Transport {
			return posterTransport{callerTransport{networkedTransport{m, true}, off}, on}
		}, SyncPostThenWait},
		{"networked, posts elsewhere", func(m *memory.Transport) transport.Transport {
			return posterTransport{callerTransport{networkedTransport{m, true}, off}, off}
		}, SyncSubmit},
		{"says networked", func(m *memory.Transport) transport.Transport { return networkedTransport{m, true} }, SyncSubmit},
		{"says not networked", func(m *memory.Transport) transport.Transport { return networkedTransport{m, false} }, SyncWaitOutside},
		{"does not say", func(m *memory.Transport) transport.Transport { return m }, SyncWaitOutside},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem, _ := memory.NewPair(16)
			c := New(testOptions(), tc.tr(mem))
			t.Cleanup(c.Free)
			require.Equal(t, tc.want, c.SyncRoute())
		})
	}

	changing := &atomic.Bool{}
	changing.Store(true)
	mem, _ := memory.NewPair(16)
	c := New(testOptions(), callerTransport{networkedTransport{mem, true}, changing})
	t.Cleanup(c.Free)
	require.Equal(t, SyncOnThread, c.SyncRoute())
	changing.Store(false) // httpdetect settled on legacy HTTP+SSE
	require.Equal(t, SyncSubmit, c.SyncRoute())

	exchanges, posts := &atomic.Bool{}, &atomic.Bool{}
	exchanges.Store(true)
	mem, _ = memory.NewPair(16)
	c = New(testOptions(), posterTransport{callerTransport{networkedTransport{mem, true}, exchanges}, posts})
	t.Cleanup(c.Free)
	require.Equal(t, SyncOnThread, c.SyncRoute())
	exchanges.Store(false) // httpdetect settled on legacy HTTP+SSE
	posts.Store(true)
	require.Equal(t, SyncPostThenWait, c.SyncRoute())
}
