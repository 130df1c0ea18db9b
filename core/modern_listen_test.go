package core

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// listenServer is a modern fake that advertises list changes and answers
// subscriptions/listen by acknowledging what ack returns for the filter
// asked (nil: everything) and keeping the request open.
func listenServer(t *testing.T, ack func(listenFilter) listenFilter) *fakeServer {
	caps := map[string]any{"tools": map[string]any{"listChanged": true}, "resources": map[string]any{"subscribe": true}, "prompts": map[string]any{}}
	s := newFakeServer(t, "2025-11-25", caps)
	s.handle("server/discover", discoverOK(caps))
	s.handle("subscriptions/listen", func(s *fakeServer, m wireMsg) reply {
		var p struct {
			Notifications listenFilter `json:"notifications"`
		}
		require.NoError(t, json.Unmarshal(m.Params, &p))
		agreed := p.Notifications
		if ack != nil {
			agreed = ack(agreed)
		}
		s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{
			"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": m.ID}, "notifications": agreed}})
		return reply{none: true}
	})
	// A cancelled listen is answered, as the Go SDK's server does.
	s.handle("notifications/cancelled", func(s *fakeServer, m wireMsg) reply {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.sendResult(p.RequestID, map[string]any{"resultType": "complete"})
		return reply{none: true}
	})
	return s
}

// subscribeOnce connects a modern client to s, records its events, and
// once its first listen is out subscribes to file:///a.
func subscribeOnce(t *testing.T, s *fakeServer) (*Client, *events) {
	t.Helper()
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	ev := recordEvents(c)
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
	require.True(t, ok)
	_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	return c, ev
}

func listenIDs(s *fakeServer) []json.RawMessage {
	var ids []json.RawMessage
	for _, m := range s.requests("subscriptions/listen") {
		ids = append(ids, m.ID)
	}
	return ids
}

// The client listens for the list changes the server advertises; a
// notification of that listen reaches the host as a notification event,
// one of an unknown subscription is dropped, and the acknowledgement is
// not an event.
func TestListenListChanges(t *testing.T) {
	s := listenServer(t, nil)
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	ev := recordEvents(c)
	m, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
	require.True(t, ok)
	require.JSONEq(t, `{"toolsListChanged":true}`, string(params(t, m)["notifications"]))
	require.Contains(t, meta(t, m), "io.modelcontextprotocol/protocolVersion")

	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": map[string]any{"_meta": map[string]any{metaSubscriptionID: 999}}})
	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": map[string]any{"_meta": map[string]any{metaSubscriptionID: m.ID}}})
	payload, ok := ev.wait("notification")
	require.True(t, ok)
	require.Contains(t, string(payload), `"notifications/tools/list_changed"`)
	require.Len(t, ev.all("notification"), 1, "the unknown subscription's notification and the acknowledgement are not events")
}

// protocol.listen false: no listen for list changes.
func TestListenOff(t *testing.T) {
	s := listenServer(t, nil)
	opts := modernOptions(ModeModern)
	opts.NoListen = true
	c, err := connectWith(t, s, opts, nil)
	require.Nil(t, errOrNil(err))
	_, cerr := c.CallSync("tools/call", []byte(`{"name":"x","arguments":{"text":"a"}}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Empty(t, s.requests("subscriptions/listen"))
}

// resources/subscribe in the modern era: the uri joins the listen filter,
// the call completes when the server acknowledges it (and fails, naming
// the uri, when it does not), and the replaced listen is cancelled.
// resources/unsubscribe takes it out again.
func TestListenResourceSubscribe(t *testing.T) {
	s := listenServer(t, func(f listenFilter) listenFilter {
		var keep []string
		for _, u := range f.ResourceSubscriptions {
			if u != "file:///refused" {
				keep = append(keep, u)
			}
		}
		f.ResourceSubscriptions = keep
		return f
	})
	c, ev := subscribeOnce(t, s)
	ids := listenIDs(s)
	require.Len(t, ids, 2)
	last := s.requests("subscriptions/listen")[1]
	require.JSONEq(t, `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`, string(params(t, last)["notifications"]))
	_, ok := s.waitFor(func(m wireMsg) bool {
		return m.Method == "notifications/cancelled" && string(params(t, m)["requestId"]) == string(ids[0])
	})
	require.True(t, ok, "the replaced listen is cancelled")

	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{"uri": "file:///a", "_meta": map[string]any{metaSubscriptionID: ids[1]}}})
	payload, ok := ev.wait("notification")
	require.True(t, ok)
	require.Contains(t, string(payload), "notifications/resources/updated")

	_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///refused"}`), CallOptions{})
	require.NotNil(t, cerr)
	require.Equal(t, StatusUnsupported, cerr.Status)
	require.Contains(t, cerr.Message, "file:///refused")

	_, cerr = c.CallSync("resources/unsubscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	_, ok = s.waitFor(func(m wireMsg) bool {
		return m.Method == "subscriptions/listen" && string(params(t, m)["notifications"]) == `{"toolsListChanged":true}` && string(m.ID) != string(ids[0])
	})
	require.True(t, ok, "unsubscribe listens again without the uri")

	_, cerr = c.CallSync("resources/subscribe", []byte(`{}`), CallOptions{})
	require.NotNil(t, cerr)
	require.Equal(t, StatusInvalidArgument, cerr.Status)
}

// A listen the server refuses with a JSON-RPC error fails the waiting
// subscribe with that error; a graceful end is not retried.
func TestListenRefusedAndEnded(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		s := newModernServer(t)
		c, err := connectWith(t, s, modernOptions(ModeModern), nil)
		require.Nil(t, errOrNil(err))
		_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
		require.NotNil(t, cerr)
		require.Equal(t, StatusProtocol, cerr.Status)
		require.Contains(t, cerr.Message, "subscriptions/listen failed")
	})
	t.Run("graceful end", func(t *testing.T) {
		s := listenServer(t, nil)
		s.handle("subscriptions/listen", func(*fakeServer, wireMsg) reply {
			return reply{result: map[string]any{"resultType": "complete"}}
		})
		c, err := connectWith(t, s, modernOptions(ModeModern), nil)
		require.Nil(t, errOrNil(err))
		_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
		require.True(t, ok)
		_, cerr := c.CallSync("tools/call", []byte(`{"name":"x","arguments":{"text":"a"}}`), CallOptions{})
		require.Nil(t, errOrNil(cerr))
		require.Len(t, s.requests("subscriptions/listen"), 1)
	})
	t.Run("graceful end before the acknowledgement", func(t *testing.T) {
		// The server ends the listen with its SubscriptionsListenResult
		// instead of acknowledging it: the subscribe waiting for it fails
		// at once, naming the uri, instead of at its timeout.
		s := listenServer(t, nil)
		s.handle("subscriptions/listen", func(_ *fakeServer, m wireMsg) reply {
			return reply{result: map[string]any{"resultType": "complete", "_meta": map[string]any{metaSubscriptionID: m.ID}}}
		})
		c, err := connectWith(t, s, modernOptions(ModeModern), nil)
		require.Nil(t, errOrNil(err))
		_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
		require.NotNil(t, cerr)
		require.Equal(t, StatusClosed, cerr.Status)
		require.Contains(t, cerr.Message, "file:///a")
	})
}

// protocol.listen false means no listen at all: resources/subscribe fails
// with StatusInvalidState instead of opening one.
func TestListenOffRefusesSubscribe(t *testing.T) {
	s := listenServer(t, nil)
	opts := modernOptions(ModeModern)
	opts.NoListen = true
	c, err := connectWith(t, s, opts, nil)
	require.Nil(t, errOrNil(err))
	_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
	require.NotNil(t, cerr)
	require.Equal(t, StatusInvalidState, cerr.Status)
	require.Contains(t, cerr.Message, "protocol.listen")
	_, cerr = c.CallSync("tools/call", []byte(`{"name":"x","arguments":{"text":"a"}}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Empty(t, s.requests("subscriptions/listen"))
}

// The host reaches only its own calls: the library's listen has a call id
// the host never received, and cancelling it answers StatusNotFound and
// leaves the listen open.
func TestCancelOwnListenNotFound(t *testing.T) {
	s := listenServer(t, nil)
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
	require.True(t, ok)
	c.mu.Lock()
	var own []uint64
	for id := range c.calls {
		own = append(own, id)
	}
	c.mu.Unlock()
	require.NotEmpty(t, own, "the listen is an accepted call")
	for _, id := range own {
		cerr := c.Cancel(id)
		require.NotNil(t, cerr)
		require.Equal(t, StatusNotFound, cerr.Status)
	}
	c.mu.Lock()
	live := len(c.listen.live)
	c.mu.Unlock()
	require.Equal(t, 1, live, "the listen is still open")
	require.Empty(t, s.requests("notifications/cancelled"))
}

// A listen is replaced only once acknowledged: a subscribe made while the
// first listen is not acknowledged yet waits for that acknowledgement
// before it cancels anything (the TypeScript SDK v2 answered the next
// listen "Method not found" when its predecessor was cancelled while it
// was being set up).
func TestListenSwitchWaitsForAcknowledgement(t *testing.T) {
	s := listenServer(t, nil)
	release := make(chan struct{})
	var first json.RawMessage
	var mu sync.Mutex
	ackFirst := s.handlers["subscriptions/listen"]
	s.handle("subscriptions/listen", func(fs *fakeServer, m wireMsg) reply {
		mu.Lock()
		isFirst := first == nil
		if isFirst {
			first = m.ID
		}
		mu.Unlock()
		if isFirst {
			go func() {
				<-release
				ackFirst(fs, m)
			}()
			return reply{none: true}
		}
		return ackFirst(fs, m)
	})
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
	require.True(t, ok)
	done := make(chan *Error, 1)
	go func() {
		_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
		done <- cerr
	}()
	time.Sleep(100 * time.Millisecond)
	require.Empty(t, s.requests("notifications/cancelled"), "the unacknowledged listen is not cancelled")
	require.Len(t, s.requests("subscriptions/listen"), 1)
	close(release)
	select {
	case cerr := <-done:
		require.Nil(t, errOrNil(cerr))
	case <-time.After(5 * time.Second):
		t.Fatal("the subscribe did not complete")
	}
	require.Len(t, s.requests("subscriptions/listen"), 2)
}

// Over stdio against a server that does not answer a cancelled listen
// (the TypeScript and Python SDKs): the first switch goes on when the
// server answers the server/discover sent after the cancellation, not
// after a fixed wait; later switches open the new listen first and cancel
// the old one once the new one is acknowledged.
func TestListenSwitchWithoutCancelAnswers(t *testing.T) {
	s := listenServer(t, nil)
	s.handle("notifications/cancelled", func(*fakeServer, wireMsg) reply { return reply{none: true} })
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
	require.True(t, ok)
	_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Len(t, s.requests("server/discover"), 2, "the handshake's, and the fence of the first switch")

	_, cerr = c.CallSync("resources/subscribe", []byte(`{"uri":"file:///b"}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Len(t, s.requests("server/discover"), 2, "no fence once the server is known")
	ids := listenIDs(s)
	require.Len(t, ids, 3)
	_, ok = s.waitFor(func(m wireMsg) bool {
		return m.Method == "notifications/cancelled" && string(params(t, m)["requestId"]) == string(ids[1])
	})
	require.True(t, ok, "the replaced listen is cancelled after the new one was acknowledged")
	s.mu.Lock()
	var order []string
	for _, m := range s.received {
		switch {
		case m.Method == "subscriptions/listen" && string(m.ID) == string(ids[2]):
			order = append(order, "new")
		case m.Method == "notifications/cancelled" && string(params(t, m)["requestId"]) == string(ids[1]):
			order = append(order, "cancel old")
		}
	}
	s.mu.Unlock()
	require.Equal(t, []string{"new", "cancel old"}, order)
}

// What the host keeps lists on: HearsListChanges is true only while an
// acknowledged listen carries the server's list changes, and each gap in
// that (the first acknowledgement, a listen the server ended) moves
// ListChangeGaps; a server that announces no list changes has none to
// miss, and protocol.listen false hears none.
func TestListChangeGaps(t *testing.T) {
	t.Run("acknowledged, then ended by the server", func(t *testing.T) {
		s := listenServer(t, nil)
		c, err := connectWith(t, s, modernOptions(ModeModern), nil)
		require.Nil(t, errOrNil(err))
		m, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
		require.True(t, ok)
		require.Eventually(t, c.HearsListChanges, 5*time.Second, 5*time.Millisecond, "the acknowledged listen carries the changes")
		gaps := c.ListChangeGaps()
		require.NotZero(t, gaps, "the first acknowledgement ends a gap")
		// Nothing changes while the listen holds.
		_, cerr := c.CallSync("tools/call", []byte(`{"name":"x","arguments":{"text":"a"}}`), CallOptions{})
		require.Nil(t, errOrNil(cerr))
		require.Equal(t, gaps, c.ListChangeGaps())
		require.True(t, c.HearsListChanges())

		s.sendResult(m.ID, map[string]any{"resultType": "complete", "_meta": map[string]any{metaSubscriptionID: m.ID}})
		require.Eventually(t, func() bool { return !c.HearsListChanges() }, 5*time.Second, 5*time.Millisecond, "the ended listen carries nothing")
		require.Greater(t, c.ListChangeGaps(), gaps)
	})
	t.Run("a server that announces no list changes", func(t *testing.T) {
		s := newModernServer(t)
		c, err := connectWith(t, s, modernOptions(ModeModern), nil)
		require.Nil(t, errOrNil(err))
		require.True(t, c.HearsListChanges())
	})
	t.Run("protocol.listen false", func(t *testing.T) {
		s := listenServer(t, nil)
		opts := modernOptions(ModeModern)
		opts.NoListen = true
		c, err := connectWith(t, s, opts, nil)
		require.Nil(t, errOrNil(err))
		require.False(t, c.HearsListChanges())
	})
}

// Over stdio against a server that answers a cancelled listen only after
// the fence of the first switch, and tears it down as it answers, taking
// the session's one list-change registration with it whichever listen
// made it (the Go SDK v1.8.0's server when its handler goroutine wakes
// late, seen under load): the late answer makes the client switch again,
// cancelling the listen opened at the fence and opening one once that is
// answered, so list changes are heard again.
func TestListenSwitchLateCancelAnswer(t *testing.T) {
	s := listenServer(t, nil)
	var mu sync.Mutex
	var registered json.RawMessage // the session's list-change registration
	ack := s.handlers["subscriptions/listen"]
	s.handle("subscriptions/listen", func(fs *fakeServer, m wireMsg) reply {
		mu.Lock()
		registered = m.ID
		mu.Unlock()
		return ack(fs, m)
	})
	held := make(chan json.RawMessage, 1)
	first := true
	s.handle("notifications/cancelled", func(fs *fakeServer, m wireMsg) reply {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		mu.Lock()
		hold := first
		first = false
		if !hold {
			registered = nil // the teardown, then the answer
		}
		mu.Unlock()
		if hold {
			held <- p.RequestID // answered later, after the fence's answer
			return reply{none: true}
		}
		fs.sendResult(p.RequestID, map[string]any{"resultType": "complete"})
		return reply{none: true}
	})
	c, ev := subscribeOnce(t, s)
	require.Len(t, s.requests("server/discover"), 2, "the handshake's, and the fence of the first switch")
	require.Len(t, listenIDs(s), 2, "the listen opened at the fence")

	old := <-held
	mu.Lock()
	registered = nil // the late teardown undoes the registration of the listen opened at the fence
	mu.Unlock()
	s.sendResult(old, map[string]any{"resultType": "complete"})

	var id json.RawMessage
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		id = registered
		return id != nil && c.HearsListChanges()
	}, 5*time.Second, 5*time.Millisecond, "no listen was registered again after the late answer")
	ids := listenIDs(s)
	require.Len(t, ids, 3)
	require.Equal(t, string(ids[2]), string(id))
	_, ok := s.waitFor(func(m wireMsg) bool {
		return m.Method == "notifications/cancelled" && string(params(t, m)["requestId"]) == string(ids[1])
	})
	require.True(t, ok, "the listen opened at the fence was cancelled first")
	require.JSONEq(t, `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`, string(params(t, s.requests("subscriptions/listen")[2])["notifications"]))

	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": map[string]any{"_meta": map[string]any{metaSubscriptionID: id}}})
	payload, ok := ev.wait("notification")
	require.True(t, ok)
	require.Contains(t, string(payload), "notifications/tools/list_changed")
}

// Over stdio against a server that answers a cancelled listen just after
// the fence of the first switch (the Go SDK's server, most of the time):
// the switch waits for that answer (fenceGrace) and opens the new listen
// only then, so the old listen's teardown cannot undo it; no switch is
// redone, and later switches wait for the answers without a fence.
func TestListenSwitchWaitsForAnAnswerAfterTheFence(t *testing.T) {
	saved := fenceGrace
	fenceGrace = time.Minute // the answer below comes well within it
	t.Cleanup(func() { fenceGrace = saved })
	s := listenServer(t, nil)
	answer := s.handlers["notifications/cancelled"]
	ack := s.handlers["subscriptions/listen"]
	var fences atomic.Int32
	var early atomic.Bool              // a listen came before the cancelled one was answered
	listened := make(chan struct{}, 8) // listens after the fence
	var heldCancel wireMsg
	answered := make(chan struct{})
	s.handle("notifications/cancelled", func(fs *fakeServer, m wireMsg) reply {
		if fences.Load() == 0 {
			heldCancel = m // answered after the fence's answer
			return reply{none: true}
		}
		return answer(fs, m)
	})
	s.handle("subscriptions/listen", func(fs *fakeServer, m wireMsg) reply {
		if fences.Load() > 0 {
			listened <- struct{}{}
		}
		return ack(fs, m)
	})
	discover := s.handlers["server/discover"]
	s.handle("server/discover", func(fs *fakeServer, m wireMsg) reply {
		r := discover(fs, m)
		if len(s.requests("subscriptions/listen")) == 0 {
			return r // the handshake's
		}
		fences.Add(1)
		held := heldCancel
		go func() {
			fs.sendResult(m.ID, r.result)
			select {
			case <-listened:
				early.Store(true)
			case <-time.After(100 * time.Millisecond):
			}
			answer(fs, held)
			close(answered)
		}()
		return reply{none: true}
	})
	c, _ := subscribeOnce(t, s)
	<-answered
	require.EqualValues(t, 1, fences.Load())
	require.False(t, early.Load(), "the new listen went out before the cancelled one was answered")

	_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///b"}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.EqualValues(t, 1, fences.Load(), "no fence once the server is known")
	require.Len(t, listenIDs(s), 3, "no switch was redone")
	c.mu.Lock()
	require.EqualValues(t, 1, c.listen.cancelAnswers, "the server answers cancelled listens")
	c.mu.Unlock()
}
