package core

import (
	"encoding/json"
	"testing"

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
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	ev := recordEvents(c)
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
	require.True(t, ok)

	_, cerr := c.CallSync("resources/subscribe", []byte(`{"uri":"file:///a"}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	ids := listenIDs(s)
	require.Len(t, ids, 2)
	last := s.requests("subscriptions/listen")[1]
	require.JSONEq(t, `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`, string(params(t, last)["notifications"]))
	_, ok = s.waitFor(func(m wireMsg) bool {
		return m.Method == "notifications/cancelled" && string(params(t, m)["requestId"]) == string(ids[0])
	})
	require.True(t, ok, "the replaced listen is cancelled")

	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{"uri": "file:///a", "_meta": map[string]any{metaSubscriptionID: ids[1]}}})
	payload, ok := ev.wait("notification")
	require.True(t, ok)
	require.Contains(t, string(payload), "notifications/resources/updated")

	_, cerr = c.CallSync("resources/subscribe", []byte(`{"uri":"file:///refused"}`), CallOptions{})
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
}
