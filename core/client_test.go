package core

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/memory"
	"github.com/stretchr/testify/require"
)

func TestHandshakeNegotiation(t *testing.T) {
	cases := []struct {
		name        string
		answer      string // the version the server answers with
		wantStatus  Status
		wantVersion string
	}{
		{"newest", "2025-11-25", StatusOK, "2025-11-25"},
		{"older supported", "2025-03-26", StatusOK, "2025-03-26"},
		{"oldest supported", "2024-11-05", StatusOK, "2024-11-05"},
		{"unknown future", "2099-01-01", StatusUnsupported, ""},
		{"unknown past", "2023-01-01", StatusUnsupported, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, tc.answer, defaultCaps())
			c := s.client(testOptions())
			ev := recordEvents(c)
			require.Nil(t, errOrNil(c.Connect()))
			err := c.WaitReady(3 * time.Second)
			init, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "initialize" })
			require.True(t, ok)
			var p struct {
				ProtocolVersion string         `json:"protocolVersion"`
				ClientInfo      map[string]any `json:"clientInfo"`
				Capabilities    map[string]any `json:"capabilities"`
			}
			require.NoError(t, json.Unmarshal(init.Params, &p))
			require.Equal(t, "2025-11-25", p.ProtocolVersion, "the newest version is offered")
			require.Equal(t, "lemonmcp", p.ClientInfo["name"])
			require.Empty(t, p.Capabilities, "no capability is claimed without a handler")
			if tc.wantStatus != StatusOK {
				require.NotNil(t, err)
				require.Equal(t, tc.wantStatus, err.Status)
				require.Contains(t, err.Message, tc.answer)
				require.Equal(t, StateFailed, c.State())
				_, ok := ev.wait("failed")
				require.True(t, ok)
				return
			}
			require.Nil(t, errOrNil(err))
			_, ok = s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/initialized" })
			require.True(t, ok, "notifications/initialized is sent")
			info, ierr := c.ServerInfo()
			require.Nil(t, errOrNil(ierr))
			var si map[string]any
			require.NoError(t, json.Unmarshal(info, &si))
			require.Equal(t, tc.wantVersion, si["protocolVersion"])
			require.Equal(t, "memory", si["transport"])
			require.Equal(t, "be nice", si["instructions"])
			_, ok = ev.wait("ready")
			require.True(t, ok)
		})
	}
}

func TestHandshakeRetriesWithSupportedVersion(t *testing.T) {
	s := newFakeServer(t, "2024-11-05", defaultCaps())
	var offers []string
	var mu sync.Mutex
	s.handle("initialize", func(_ *fakeServer, m wireMsg) reply {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		mu.Lock()
		offers = append(offers, p.ProtocolVersion)
		mu.Unlock()
		if p.ProtocolVersion != "2024-11-05" {
			s.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
				"code": -32602, "message": "Unsupported protocol version",
				"data": map[string]any{"supported": []string{"2024-11-05"}, "requested": p.ProtocolVersion},
			}})
			return reply{none: true}
		}
		return reply{result: map[string]any{"protocolVersion": "2024-11-05", "capabilities": defaultCaps(), "serverInfo": map[string]any{"name": "old", "version": "1"}}}
	})
	c := readyClient(t, s, testOptions())
	require.Equal(t, StateReady, c.State())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"2025-11-25", "2024-11-05"}, offers)
}

func TestHandshakeFailures(t *testing.T) {
	t.Run("initialize error", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("initialize", func(*fakeServer, wireMsg) reply {
			return reply{err: &rpcError{Code: -32603, Message: "no thanks"}}
		})
		c := s.client(testOptions())
		require.Nil(t, errOrNil(c.Connect()))
		err := c.WaitReady(3 * time.Second)
		require.NotNil(t, err)
		require.Equal(t, StatusProtocol, err.Status)
		require.NotNil(t, err.Code)
		require.EqualValues(t, -32603, *err.Code)
		require.Contains(t, err.Message, "no thanks")
		require.Equal(t, StateFailed, c.State())
	})
	t.Run("no answer within ready timeout", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("initialize", func(*fakeServer, wireMsg) reply { return reply{none: true} })
		opts := testOptions()
		opts.Timeouts.Ready = 100 * time.Millisecond
		c := s.client(opts)
		require.Nil(t, errOrNil(c.Connect()))
		err := c.WaitReady(3 * time.Second)
		require.NotNil(t, err)
		require.Equal(t, StatusTimeout, err.Status)
		require.Equal(t, StateFailed, c.State())
		for _, m := range s.methods() {
			require.NotEqual(t, "notifications/cancelled", m, "initialize is never cancelled")
		}
	})
	t.Run("wait_ready bounds the wait", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("initialize", func(*fakeServer, wireMsg) reply { return reply{none: true} })
		c := s.client(testOptions())
		require.Nil(t, errOrNil(c.Connect()))
		err := c.WaitReady(50 * time.Millisecond)
		require.NotNil(t, err)
		require.Equal(t, StatusTimeout, err.Status)
		require.Equal(t, StateConnecting, c.State())
	})
	t.Run("server hangs up during the handshake", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("initialize", func(s *fakeServer, _ wireMsg) reply {
			go s.peer.Hangup("server exited with status 1", 1)
			return reply{none: true}
		})
		c := s.client(testOptions())
		require.Nil(t, errOrNil(c.Connect()))
		err := c.WaitReady(3 * time.Second)
		require.NotNil(t, err)
		require.Equal(t, StatusClosed, err.Status)
		require.Contains(t, err.Message, "status 1")
	})
	t.Run("connect twice", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		c := readyClient(t, s, testOptions())
		err := c.Connect()
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidState, err.Status)
	})
}

func TestCallBeforeReady(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	gate := make(chan struct{})
	s.handle("initialize", func(s *fakeServer, m wireMsg) reply {
		go func() {
			<-gate
			s.sendResult(m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": defaultCaps(), "serverInfo": map[string]any{"name": "x", "version": "1"}})
		}()
		return reply{none: true}
	})
	c := s.client(legacyOptions())
	_, err := c.Call("tools/list", nil, CallOptions{}, func(uint64, Status, []byte) { t.Error("must not fire") })
	require.NotNil(t, err)
	require.Equal(t, StatusInvalidState, err.Status)

	require.Nil(t, errOrNil(c.Connect()))
	_, err = c.Call("tools/list", nil, CallOptions{}, func(uint64, Status, []byte) { t.Error("must not fire") })
	require.NotNil(t, err)
	require.Equal(t, StatusInvalidState, err.Status)

	_, ch := asyncCall(t, c, "tools/call", `{"name":"echo","arguments":{"text":"queued"}}`, CallOptions{WaitReady: true})
	close(gate)
	got := waitCompletion(t, ch)
	require.Equal(t, StatusOK, got.status, string(got.data))
	require.Contains(t, string(got.data), "queued")
	methods := s.methods()
	require.Equal(t, []string{"initialize", "notifications/initialized", "tools/call"}, methods, "initialized precedes queued calls")
}

func TestResponsesRoutedByIDNotShape(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	// The server answers tools/call with something shaped like a tools list,
	// and answers in reverse order of arrival.
	var mu sync.Mutex
	var held []wireMsg
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		mu.Lock()
		held = append(held, m)
		n := len(held)
		mu.Unlock()
		if n == 3 {
			for i := 2; i >= 0; i-- {
				var p struct {
					Arguments map[string]any `json:"arguments"`
				}
				_ = json.Unmarshal(held[i].Params, &p)
				s.sendResult(held[i].ID, map[string]any{"tools": []any{}, "echo": p.Arguments["text"]})
			}
		}
		return reply{none: true}
	})
	c := readyClient(t, s, testOptions())
	var chans []chan completion
	for i := 0; i < 3; i++ {
		_, ch := asyncCall(t, c, "tools/call", fmt.Sprintf(`{"name":"echo","arguments":{"text":"t%d"}}`, i), CallOptions{})
		chans = append(chans, ch)
	}
	for i, ch := range chans {
		got := waitCompletion(t, ch)
		require.Equal(t, StatusOK, got.status)
		require.Contains(t, string(got.data), fmt.Sprintf(`"echo":"t%d"`, i))
	}
}

func TestTimeoutSendsCancelledAndIgnoresLateResponse(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	late := make(chan json.RawMessage, 1)
	s.handle("tools/call", func(_ *fakeServer, m wireMsg) reply { late <- m.ID; return reply{none: true} })
	c := readyClient(t, s, testOptions())
	ev := recordEvents(c)
	_, ch := asyncCall(t, c, "tools/call", `{"name":"slow"}`, CallOptions{Timeout: 50 * time.Millisecond, TimeoutSet: true})
	got := waitCompletion(t, ch)
	require.Equal(t, StatusTimeout, got.status)
	require.Contains(t, string(got.data), "within 50 ms")
	id := <-late
	m, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/cancelled" })
	require.True(t, ok)
	require.Contains(t, string(m.Params), `"requestId":`+string(id))
	// The late response is ignored and the client goes on.
	s.sendResult(id, map[string]any{"content": []any{}})
	s.handle("tools/call", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{"ok": true}} })
	out, err := c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	require.JSONEq(t, `{"ok":true}`, string(out))
	select {
	case extra := <-ch:
		t.Fatalf("the completion ran twice: %+v", extra)
	case <-time.After(20 * time.Millisecond):
	}
	require.Empty(t, ev.all("failed"))
}

// unansweredCall is a ready client with a tools/call the server has
// received and never answers.
func unansweredCall(t *testing.T) (*fakeServer, *Client, uint64, chan completion) {
	t.Helper()
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("tools/call", func(*fakeServer, wireMsg) reply { return reply{none: true} })
	c := readyClient(t, s, testOptions())
	id, ch := asyncCall(t, c, "tools/call", `{"name":"slow"}`, CallOptions{})
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tools/call" })
	require.True(t, ok)
	return s, c, id, ch
}

func TestCancel(t *testing.T) {
	s, c, id, ch := unansweredCall(t)
	require.Nil(t, errOrNil(c.Cancel(id)))
	got := waitCompletion(t, ch)
	require.Equal(t, StatusCancelled, got.status)
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/cancelled" })
	require.True(t, ok)
	err := c.Cancel(id)
	require.NotNil(t, err)
	require.Equal(t, StatusNotFound, err.Status)
	err = c.Cancel(987654)
	require.NotNil(t, err)
	require.Equal(t, StatusNotFound, err.Status)
}

func TestProgress(t *testing.T) {
	// A call with a 1 s timeout whose result comes 2 s after its request.
	// In between the server sends progress every 20 ms, so a timeout that
	// resets on progress has 980 ms of slack at every step: only a
	// scheduler stall of about a second could break it, where fixed 100 ms
	// steps broke on a loaded machine. Without reset, or under a 200 ms
	// hard cap, the timeout runs out long before the result exists, so
	// those cases do not depend on timing at all.
	const (
		timeout    = time.Second
		resultAt   = 2 * time.Second
		progressEv = 20 * time.Millisecond
	)
	cases := []struct {
		name       string
		opts       CallOptions
		steady     bool // progress until resultAt, not three steps at once
		wantStatus Status
		wantEvents int
	}{
		{"events when asked", CallOptions{Progress: true}, false, StatusOK, 3},
		{"reset keeps the call alive", CallOptions{Timeout: timeout, TimeoutSet: true, ResetOnProgress: true, ResetSet: true}, true, StatusOK, 0},
		{"without reset the call times out", CallOptions{Timeout: timeout, TimeoutSet: true}, true, StatusTimeout, 0},
		{"hard cap wins over progress", CallOptions{Timeout: timeout, TimeoutSet: true, ResetOnProgress: true, ResetSet: true, MaxTotal: 200 * time.Millisecond, MaxTotalSet: true}, true, StatusTimeout, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			var ev *events // set before the call is made
			s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
				var p struct {
					Meta struct {
						ProgressToken any `json:"progressToken"`
					} `json:"_meta"`
				}
				_ = json.Unmarshal(m.Params, &p)
				progress := func(i int) {
					if p.Meta.ProgressToken != nil {
						s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i, "message": fmt.Sprintf("step %d", i)}})
					}
				}
				go func() {
					if !tc.steady {
						for i := 1; i <= 3; i++ {
							progress(i)
						}
						// The result follows once the events were
						// delivered, so the count below is not a race.
						for deadline := time.Now().Add(10 * time.Second); len(ev.all("progress")) < 3 && time.Now().Before(deadline); {
							time.Sleep(time.Millisecond)
						}
					} else {
						start := time.Now()
						for i := 1; time.Since(start) < resultAt; i++ {
							time.Sleep(progressEv)
							progress(i)
						}
					}
					s.sendResult(m.ID, map[string]any{"content": []any{}})
				}()
				return reply{none: true}
			})
			c := readyClient(t, s, testOptions())
			ev = recordEvents(c)
			id, ch := asyncCall(t, c, "tools/call", `{"name":"slow"}`, tc.opts)
			got := waitCompletion(t, ch)
			require.Equal(t, tc.wantStatus, got.status, string(got.data))
			progress := ev.all("progress")
			require.Len(t, progress, tc.wantEvents)
			for _, p := range progress {
				require.Contains(t, string(p), fmt.Sprintf(`"call_id":%d`, id))
			}
		})
	}
}

func TestServerRequestsAndNotifications(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	c := readyClient(t, s, testOptions())
	ev := recordEvents(c)

	s.write(map[string]any{"jsonrpc": "2.0", "id": "p1", "method": "ping"})
	m, ok := s.waitFor(func(m wireMsg) bool { return string(m.ID) == `"p1"` && m.Method == "" })
	require.True(t, ok)
	require.JSONEq(t, `{}`, string(m.Result), "ping is answered with an empty result")

	s.write(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "roots/list"})
	m, ok = s.waitFor(func(m wireMsg) bool { return string(m.ID) == `77` && m.Method == "" })
	require.True(t, ok)
	require.Contains(t, string(m.Error), "-32601", "roots without a handler: method not found")

	s.write(map[string]any{"jsonrpc": "2.0", "id": 78, "method": "weird/thing"})
	m, ok = s.waitFor(func(m wireMsg) bool { return string(m.ID) == `78` && m.Method == "" })
	require.True(t, ok)
	require.Contains(t, string(m.Error), "-32601")

	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
	payload, ok := ev.wait("notification")
	require.True(t, ok)
	require.JSONEq(t, `{"method":"notifications/tools/list_changed"}`, string(payload))

	// Batches, junk and non-JSON-RPC texts never break the session.
	s.peer.Write([]byte(`[{"jsonrpc":"2.0","method":"notifications/resources/list_changed"},{"jsonrpc":"2.0","id":"b1","method":"ping"}]`))
	_, ok = s.waitFor(func(m wireMsg) bool { return string(m.ID) == `"b1"` })
	require.True(t, ok, "a ping inside a batch is answered")
	for _, junk := range []string{`{"not":"jsonrpc"}`, `{"jsonrpc":"1.0","id":1,"result":{}}`, `{broken`, `[1,2`, `hello`} {
		s.peer.Write([]byte(junk))
	}
	s.peer.Write([]byte(`{"jsonrpc":"2.0","id":999999,"result":{}}`)) // unknown id
	out, err := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"still here"}}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Contains(t, string(out), "still here")
	_, ok = ev.wait("log")
	require.True(t, ok, "junk becomes log events")
}

func TestCapabilityGating(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", map[string]any{"tools": map[string]any{}})
	c := readyClient(t, s, testOptions())
	cases := []struct {
		method string
		ok     bool
	}{
		{"tools/list", true},
		{"resources/list", false},
		{"resources/read", false},
		{"resources/subscribe", false},
		{"prompts/get", false},
		{"logging/setLevel", false},
		{"completion/complete", false},
		{"ping", true},
		{"vendor/extension", true},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			before := len(s.methods())
			_, err := c.CallSync(tc.method, nil, CallOptions{Timeout: 200 * time.Millisecond, TimeoutSet: true})
			if tc.ok {
				if err != nil {
					require.NotEqual(t, StatusUnsupported, err.Status)
				}
				return
			}
			require.NotNil(t, err)
			require.Equal(t, StatusUnsupported, err.Status)
			require.Equal(t, before, len(s.methods()), "no request is sent")
		})
	}
}

func TestAllPages(t *testing.T) {
	pages := func(cursors []string, repeatAt int) handlerFunc {
		return func(_ *fakeServer, m wireMsg) reply {
			var p struct {
				Cursor *string `json:"cursor"`
			}
			_ = json.Unmarshal(m.Params, &p)
			idx := 0
			if p.Cursor != nil {
				fmt.Sscanf(*p.Cursor, "c%d", &idx)
			}
			res := map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("tool%d", idx)}}}
			if idx < len(cursors) {
				res["nextCursor"] = cursors[idx]
			}
			if repeatAt >= 0 && idx >= repeatAt {
				res["nextCursor"] = "c1"
			}
			return reply{result: res}
		}
	}
	cases := []struct {
		name     string
		cursors  []string
		repeatAt int
		maxPages int
		want     int
		status   Status
	}{
		{"single page", nil, -1, 10, 1, StatusOK},
		{"three pages", []string{"c1", "c2"}, -1, 10, 3, StatusOK},
		{"repeated cursor stops", []string{"c1", "c2", "c3"}, 2, 10, 3, StatusOK},
		{"too many pages", []string{"c1", "c2", "c3", "c4"}, -1, 3, 0, StatusProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			s.handle("tools/list", pages(tc.cursors, tc.repeatAt))
			opts := testOptions()
			opts.MaxPages = tc.maxPages
			c := readyClient(t, s, opts)
			out, err := c.CallSync("tools/list", nil, CallOptions{AllPages: true})
			if tc.status != StatusOK {
				require.NotNil(t, err)
				require.Equal(t, tc.status, err.Status)
				return
			}
			require.Nil(t, errOrNil(err))
			var res struct {
				Tools []map[string]any `json:"tools"`
			}
			require.NoError(t, json.Unmarshal(out, &res))
			require.Len(t, res.Tools, tc.want)
		})
	}
	t.Run("not a list method", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		c := readyClient(t, s, testOptions())
		_, err := c.CallSync("tools/call", nil, CallOptions{AllPages: true})
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidArgument, err.Status)
	})
}

func TestTransportLossFailsPendingCalls(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("tools/call", func(*fakeServer, wireMsg) reply { return reply{none: true} })
	c := readyClient(t, s, testOptions())
	ev := recordEvents(c)
	var chans []chan completion
	for i := 0; i < 5; i++ {
		_, ch := asyncCall(t, c, "tools/call", `{"name":"slow"}`, CallOptions{})
		chans = append(chans, ch)
	}
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tools/call" })
	require.True(t, ok)
	s.peer.Hangup("server exited with status 3", 3)
	for _, ch := range chans {
		got := waitCompletion(t, ch)
		require.Equal(t, StatusClosed, got.status)
		require.Contains(t, string(got.data), "status 3")
	}
	payload, ok := ev.wait("closed")
	require.True(t, ok)
	require.Contains(t, string(payload), `"exit_code":3`)
	require.Equal(t, StateClosed, c.State())
	_, err := c.Call("tools/list", nil, CallOptions{}, func(uint64, Status, []byte) {})
	require.NotNil(t, err)
	require.Equal(t, StatusInvalidState, err.Status)
	require.Contains(t, err.Message, "status 3")
}

func TestCloseAndFree(t *testing.T) {
	t.Run("close fails pending calls with closed", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("tools/call", func(*fakeServer, wireMsg) reply { return reply{none: true} })
		c := readyClient(t, s, testOptions())
		_, ch := asyncCall(t, c, "tools/call", `{"name":"slow"}`, CallOptions{})
		require.Nil(t, errOrNil(c.Close(time.Second)))
		got := waitCompletion(t, ch)
		require.Equal(t, StatusClosed, got.status)
		require.Equal(t, StateClosed, c.State())
		require.Nil(t, errOrNil(c.Close(time.Second)), "close is idempotent")
	})
	t.Run("close is bounded when the transport's close is not", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		release := make(chan struct{})
		c := s.clientOver(testOptions(), func(m *memory.Transport) transport.Transport { return stuckClose{m, release} })
		require.Nil(t, errOrNil(c.Connect()))
		require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
		closed := make(chan *Error, 1)
		go func() { closed <- c.Close(100 * time.Millisecond) }()
		select {
		case err := <-closed:
			require.NotNil(t, err)
			require.Equal(t, StatusTimeout, err.Status)
			require.Contains(t, err.Message, "teardown goes on in the background")
		case <-time.After(30 * time.Second): // a hang, not a speed: the bound is 100 ms
			close(release)
			t.Fatal("Close waited for a transport close that ignored its deadline")
		}
		close(release) // the close in the background ends; Free (cleanup) then finds it done
	})
	t.Run("close before connect", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		c := s.client(testOptions())
		require.Nil(t, errOrNil(c.Close(time.Second)))
		require.Equal(t, StateClosed, c.State())
		err := c.Connect()
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidState, err.Status)
	})
	t.Run("free cancels and destroys exactly once", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		s.handle("tools/call", func(*fakeServer, wireMsg) reply { return reply{none: true} })
		c := readyClient(t, s, testOptions())
		var mu sync.Mutex
		destroyed := map[string]int{}
		c.SetEventHandler(func(string, []byte) {}, func() { mu.Lock(); destroyed["first"]++; mu.Unlock() })
		c.SetEventHandler(func(string, []byte) {}, func() { mu.Lock(); destroyed["second"]++; mu.Unlock() })
		_, ch := asyncCall(t, c, "tools/call", `{"name":"slow"}`, CallOptions{})
		c.Free()
		c.Free()
		got := waitCompletion(t, ch)
		require.Equal(t, StatusCancelled, got.status)
		require.Equal(t, 1, got.count)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, map[string]int{"first": 1, "second": 1}, destroyed)
	})
}

func TestAppRequests(t *testing.T) {
	setup := func(t *testing.T, hostTimeout time.Duration, answer func(c *Client, id uint64, payload []byte)) (*fakeServer, *Client) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		opts := testOptions()
		opts.Handlers = Handlers{Roots: true, RootsListChange: true}
		opts.Timeouts.AppRequest = hostTimeout
		tr, peer := s.pairForTest()
		c := New(opts, tr)
		s.peer = peer
		go s.serve()
		t.Cleanup(func() { c.Free(); close(s.stop); <-s.done })
		require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) {
			if kind != "roots" {
				t.Errorf("unexpected kind %q", kind)
			}
			answer(c, id, payload)
		}, nil)))
		require.Nil(t, errOrNil(c.Connect()))
		require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
		return s, c
	}
	t.Run("capability advertised and answered", func(t *testing.T) {
		s, _ := setup(t, time.Second, func(c *Client, id uint64, payload []byte) {
			if !strings.Contains(string(payload), `"method":"roots/list"`) {
				t.Errorf("payload: %s", payload)
			}
			if err := c.Respond(id, StatusOK, []byte(`{"roots":[{"uri":"file:///tmp","name":"tmp"}]}`)); err != nil {
				t.Errorf("respond: %v", err)
			}
		})
		init, _ := s.waitFor(func(m wireMsg) bool { return m.Method == "initialize" })
		require.Contains(t, string(init.Params), `"roots":{"listChanged":true}`)
		s.write(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "roots/list"})
		m, ok := s.waitFor(func(m wireMsg) bool { return string(m.ID) == "5" && m.Method == "" })
		require.True(t, ok)
		require.Contains(t, string(m.Result), "file:///tmp")
	})
	t.Run("unanswered request expires and late answers are refused", func(t *testing.T) {
		ids := make(chan uint64, 1)
		s, c := setup(t, 100*time.Millisecond, func(_ *Client, id uint64, _ []byte) { ids <- id })
		s.write(map[string]any{"jsonrpc": "2.0", "id": 6, "method": "roots/list"})
		m, ok := s.waitFor(func(m wireMsg) bool { return string(m.ID) == "6" && m.Method == "" })
		require.True(t, ok)
		require.Contains(t, string(m.Error), "did not answer")
		err := c.Respond(<-ids, StatusOK, []byte(`{"roots":[]}`))
		require.NotNil(t, err)
		require.Equal(t, StatusNotFound, err.Status)
	})
	t.Run("error answers and invalid answers", func(t *testing.T) {
		ids := make(chan uint64, 1)
		s, c := setup(t, time.Second, func(_ *Client, id uint64, _ []byte) { ids <- id })
		s.write(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "roots/list"})
		id := <-ids
		err := c.Respond(id, StatusOK, []byte(`not json`))
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidArgument, err.Status)
		require.Nil(t, errOrNil(c.Respond(id, StatusPolicyDenied, []byte(`{"message":"user said no"}`))))
		m, ok := s.waitFor(func(m wireMsg) bool { return string(m.ID) == "7" && m.Method == "" })
		require.True(t, ok)
		require.JSONEq(t, `{"code":-1,"message":"user said no"}`, string(m.Error))
		err = c.Respond(id, StatusOK, []byte(`{}`))
		require.NotNil(t, err)
		require.Equal(t, StatusNotFound, err.Status, "a duplicate answer is refused")
	})
	t.Run("server cancellation drops the request", func(t *testing.T) {
		ids := make(chan uint64, 1)
		s, c := setup(t, time.Second, func(_ *Client, id uint64, _ []byte) { ids <- id })
		s.write(map[string]any{"jsonrpc": "2.0", "id": "r8", "method": "roots/list"})
		id := <-ids
		s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "r8"}})
		require.Eventually(t, func() bool {
			err := c.Respond(id, StatusOK, []byte(`{"roots":[]}`))
			return err != nil && err.Status == StatusNotFound
		}, 2*time.Second, 10*time.Millisecond)
	})
	t.Run("handlers without a host handler cannot connect", func(t *testing.T) {
		s := newFakeServer(t, "2025-11-25", defaultCaps())
		opts := testOptions()
		opts.Handlers = Handlers{Sampling: true}
		c := s.client(opts)
		err := c.Connect()
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidArgument, err.Status)
	})
}

func TestParamsValidationAndMeta(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("tools/call", func(_ *fakeServer, m wireMsg) reply {
		return reply{result: map[string]any{"echo": json.RawMessage(m.Params)}}
	})
	c := readyClient(t, s, testOptions())
	cases := []struct {
		name   string
		params string
		opts   CallOptions
		status Status
		check  func(t *testing.T, out []byte)
	}{
		{"array params refused", `[1,2]`, CallOptions{}, StatusInvalidArgument, nil},
		{"invalid JSON refused", `{"a":`, CallOptions{}, StatusInvalidArgument, nil},
		{"invalid UTF-8 refused", "{\"a\":\"\xff\"}", CallOptions{}, StatusInvalidArgument, nil},
		{"pretty JSON is compacted", "{\n  \"name\": \"x\"\n}", CallOptions{}, StatusOK, func(t *testing.T, out []byte) {
			require.Contains(t, string(out), `"name":"x"`)
		}},
		{"meta merged", `{"name":"x","_meta":{"keep":1}}`, CallOptions{Meta: []byte(`{"trace":"t1"}`)}, StatusOK, func(t *testing.T, out []byte) {
			require.Contains(t, string(out), `"keep":1`)
			require.Contains(t, string(out), `"trace":"t1"`)
		}},
		{"progress token added", `{"name":"x"}`, CallOptions{Progress: true}, StatusOK, func(t *testing.T, out []byte) {
			require.Contains(t, string(out), `"progressToken":`)
		}},
		{"meta must be an object", `{"name":"x","_meta":3}`, CallOptions{Progress: true}, StatusInvalidArgument, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.CallSync("tools/call", []byte(tc.params), tc.opts)
			if tc.status != StatusOK {
				require.NotNil(t, err)
				require.Equal(t, tc.status, err.Status)
				return
			}
			require.Nil(t, errOrNil(err))
			tc.check(t, out)
		})
	}
	_, err := c.Call("", nil, CallOptions{}, func(uint64, Status, []byte) {})
	require.NotNil(t, err)
	require.Equal(t, StatusInvalidArgument, err.Status)
}

func TestSendFailureWithdrawsTheCall(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	c := readyClient(t, s, testOptions())
	s.peer.SendHook = func(m transport.Outbound) error {
		if m.Method == "tools/call" {
			return transport.Errorf(transport.CodeTransport, "write failed")
		}
		return nil
	}
	_, err := c.Call("tools/call", []byte(`{"name":"x"}`), CallOptions{}, func(uint64, Status, []byte) { t.Error("must not fire") })
	require.NotNil(t, err)
	require.Equal(t, StatusTransport, err.Status)
	require.EqualValues(t, 0, c.pendingCount())
}

// TestExactlyOnceUnderRaces races responses, timeouts, cancels and close.
func TestExactlyOnceUnderRaces(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		go func() {
			time.Sleep(time.Duration(len(m.ID)%3) * time.Millisecond)
			s.sendResult(m.ID, map[string]any{"content": []any{}})
		}()
		return reply{none: true}
	})
	c := readyClient(t, s, testOptions())
	const n = 300
	var mu sync.Mutex
	counts := map[uint64]int{}
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		opts := CallOptions{Timeout: time.Duration(i%4) * time.Millisecond, TimeoutSet: i%2 == 0}
		id, err := c.Call("tools/call", []byte(`{"name":"x"}`), opts, func(id uint64, _ Status, _ []byte) {
			mu.Lock()
			counts[id]++
			mu.Unlock()
			wg.Done()
		})
		require.Nil(t, errOrNil(err))
		if i%5 == 0 {
			_ = c.Cancel(id)
		}
	}
	go func() { time.Sleep(2 * time.Millisecond); _ = c.Close(time.Second) }()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("not every call completed")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, counts, n)
	for id, k := range counts {
		require.Equal(t, 1, k, "call %d completed %d times", id, k)
	}
}

func TestSessionExpiryReinitializesOnce(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	var mu sync.Mutex
	expireNext := 1 // how many tools/call requests to answer with "session expired"
	var peerRef = &s.peer
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		mu.Lock()
		expire := expireNext > 0
		if expire {
			expireNext--
		}
		mu.Unlock()
		if expire {
			var id int64
			_ = json.Unmarshal(m.ID, &id)
			go (*peerRef).FailRequest(id, transport.Errorf(transport.CodeSessionExpired, "HTTP 404 for session"))
			return reply{none: true}
		}
		return reply{result: map[string]any{"content": []any{}, "ok": true}}
	})
	c := readyClient(t, s, legacyOptions())
	out, err := c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Contains(t, string(out), `"ok":true`)
	require.Equal(t, []string{"initialize", "notifications/initialized", "tools/call", "initialize", "notifications/initialized", "tools/call"}, s.methods())

	// A second expiry of the same request is an error, not a loop.
	mu.Lock()
	expireNext = 2
	mu.Unlock()
	_, err = c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, StatusClosed, err.Status)
	require.Contains(t, err.Message, "no longer knows the session")
	require.Equal(t, StateReady, c.State(), "the client stays usable")
	mu.Lock()
	expireNext = 0
	mu.Unlock()
	_, err = c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{})
	require.Nil(t, errOrNil(err))
}

func TestRequestFailedFailsOnlyThatCall(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	peerRef := &s.peer
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Name == "bad" {
			var id int64
			_ = json.Unmarshal(m.ID, &id)
			go (*peerRef).FailRequest(id, transport.Errorf(transport.CodeTransport, "HTTP 500 Internal Server Error"))
			return reply{none: true}
		}
		return reply{result: map[string]any{"content": []any{}}}
	})
	c := readyClient(t, s, testOptions())
	_, err := c.CallSync("tools/call", []byte(`{"name":"bad"}`), CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, StatusTransport, err.Status)
	require.Contains(t, err.Message, "500")
	_, err = c.CallSync("tools/call", []byte(`{"name":"good"}`), CallOptions{})
	require.Nil(t, errOrNil(err), "a transient failure never poisons the client")
}

// TestCancelNoticeBeforeClose: a call cancelled right before Close is
// still cancelled on the server's side: Close lets the notice (sent from
// a goroutine of its own) go out before it closes the transport. With one
// P the notice's goroutine runs only once Close blocks, which it did after
// the transport was closed.
func TestCancelNoticeBeforeClose(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := 0; i < 20; i++ {
		s, c, id, ch := unansweredCall(t)
		require.Nil(t, errOrNil(c.Cancel(id)))
		require.Nil(t, errOrNil(c.Close(5*time.Second)))
		require.Equal(t, StatusCancelled, waitCompletion(t, ch).status)
		_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/cancelled" })
		require.True(t, ok, "round %d: the cancellation notice was lost to Close", i)
	}
}

// stuckClose is a transport whose Close ignores its deadline until
// released: a transport that breaks Close's contract.
type stuckClose struct {
	*memory.Transport
	release chan struct{}
}

func (t stuckClose) Close(ctx context.Context) error {
	<-t.release
	return t.Transport.Close(ctx)
}

// sendFails is a memory transport whose Send of one method fails as a
// stdio transport's does when the server has exited (its stdin closed).
type sendFails struct {
	*memory.Transport
	method string
}

func (s sendFails) Send(ctx context.Context, m transport.Outbound) error {
	if m.Method == s.method {
		return transport.Errorf(transport.CodeClosed, "server closed its stdin")
	}
	return s.Transport.Send(ctx, m)
}

// TestHandshakeClosedUnderItWhicheverNoticedFirst: a server gone before the
// handshake fails it with the same message whether its first request
// (initialize, or server/discover in the modern era) could not be sent or
// the transport reported the close (a server that exits at once does
// either, by a race).
func TestHandshakeClosedUnderItWhicheverNoticedFirst(t *testing.T) {
	modern := testOptions()
	modern.Mode, modern.Modern = ModeModern, []string{"2026-07-28"}
	cases := []struct {
		name string
		opts Options
		wrap func(*memory.Transport) transport.Transport
		lose func(s *fakeServer)
	}{
		{"initialize not sent", testOptions(), func(m *memory.Transport) transport.Transport { return sendFails{m, "initialize"} }, func(*fakeServer) {}},
		{"server/discover not sent", modern, func(m *memory.Transport) transport.Transport { return sendFails{m, "server/discover"} }, func(*fakeServer) {}},
		{"the transport closed", testOptions(), func(m *memory.Transport) transport.Transport { return m }, func(s *fakeServer) { s.peer.Hangup("server closed its stdin", 1) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-06-18", defaultCaps())
			s.handle("initialize", func(s *fakeServer, _ wireMsg) reply { return reply{none: true} })
			c := s.clientOver(tc.opts, tc.wrap)
			require.Nil(t, c.Connect())
			tc.lose(s)
			err := c.WaitReady(10 * time.Second)
			require.NotNil(t, err)
			require.Equal(t, StatusClosed, err.Status)
			require.Equal(t, "the connection closed before the handshake completed: server closed its stdin", err.Message)
		})
	}
}
