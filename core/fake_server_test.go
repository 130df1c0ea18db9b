package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonstyle"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/memory"
	"github.com/stretchr/testify/require"
)

// wireMsg is a decoded message as the fake server sees it.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// reply is what a fake handler answers: a result, an error, or nothing
// (the handler answers later itself, or never).
type reply struct {
	result any
	err    *rpcError
	none   bool
}

type handlerFunc func(s *fakeServer, m wireMsg) reply

// fakeServer is a scripted MCP server on the far side of a memory pair.
type fakeServer struct {
	t    *testing.T
	peer *memory.Peer

	mu       sync.Mutex
	handlers map[string]handlerFunc
	received []wireMsg
	notify   chan wireMsg // every message received, for tests that wait
	stop     chan struct{}
	done     chan struct{}
	// style, when set, re-serialises every message the server writes.
	style *jsonstyle.Style
}

func defaultCaps() map[string]any {
	return map[string]any{"tools": map[string]any{}, "resources": map[string]any{"subscribe": true}, "prompts": map[string]any{}}
}

// newFakeServer starts a server whose initialize answers with version and
// caps.
func newFakeServer(t *testing.T, version string, caps map[string]any) *fakeServer {
	s := &fakeServer{t: t, handlers: map[string]handlerFunc{}, notify: make(chan wireMsg, 4096), stop: make(chan struct{}), done: make(chan struct{})}
	s.handle("initialize", func(_ *fakeServer, _ wireMsg) reply {
		return reply{result: map[string]any{
			"protocolVersion": version,
			"capabilities":    caps,
			"serverInfo":      map[string]any{"name": "fake", "version": "1.0"},
			"instructions":    "be nice",
		}}
	})
	s.handle("tools/call", func(_ *fakeServer, m wireMsg) reply {
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return reply{result: map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(p.Arguments["text"])}}}}
	})
	return s
}

// client makes a client over a fresh pair with this server's peer.
func (s *fakeServer) client(opts Options) *Client {
	return s.clientOver(opts, func(m *memory.Transport) transport.Transport { return m })
}

// clientOver is client over the pair's transport as wrap wraps it.
func (s *fakeServer) clientOver(opts Options, wrap func(*memory.Transport) transport.Transport) *Client {
	tr, peer := memory.NewPair(1024)
	s.peer = peer
	c := New(opts, wrap(tr))
	go s.serve()
	s.t.Cleanup(func() {
		c.Free()
		close(s.stop)
		<-s.done
	})
	return c
}

func (s *fakeServer) handle(method string, h handlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[method] = h
}

func (s *fakeServer) serve() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case data := <-s.peer.Incoming():
			if strings.ContainsAny(string(data), "\n\r") {
				s.t.Errorf("the client sent a raw line break: %q", data)
			}
			var m wireMsg
			if err := json.Unmarshal(data, &m); err != nil {
				s.t.Errorf("the client sent invalid JSON: %q", data)
				continue
			}
			s.mu.Lock()
			s.received = append(s.received, m)
			h := s.handlers[m.Method]
			s.mu.Unlock()
			select {
			case s.notify <- m:
			default:
			}
			if m.Method == "" || len(m.ID) == 0 {
				if m.Method != "" && h != nil {
					h(s, m) // a notification a test watches
				}
				continue // a notification or a response to us
			}
			if h == nil {
				s.sendError(m.ID, -32601, "method not found")
				continue
			}
			r := h(s, m)
			switch {
			case r.none:
			case r.err != nil:
				s.sendError(m.ID, r.err.Code, r.err.Message)
			default:
				s.sendResult(m.ID, r.result)
			}
		}
	}
}

func (s *fakeServer) sendResult(id json.RawMessage, result any) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err != nil {
		s.t.Errorf("fake server cannot encode a result: %v", err)
		return
	}
	s.peer.Write(s.styled(b))
}

func (s *fakeServer) sendError(id json.RawMessage, code int64, message string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	s.peer.Write(s.styled(b))
}

func (s *fakeServer) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Errorf("fake server cannot encode a message: %v", err)
		return
	}
	s.peer.Write(s.styled(b))
}

// styled applies the server's JSON style, if any.
func (s *fakeServer) styled(b []byte) []byte {
	if s.style == nil {
		return b
	}
	return jsonstyle.Restyle(b, *s.style)
}

// waitFor waits for a received message matching pred.
func (s *fakeServer) waitFor(pred func(wireMsg) bool) (wireMsg, bool) {
	deadline := time.After(3 * time.Second)
	s.mu.Lock()
	for _, m := range s.received {
		if pred(m) {
			s.mu.Unlock()
			return m, true
		}
	}
	s.mu.Unlock()
	for {
		select {
		case m := <-s.notify:
			if pred(m) {
				return m, true
			}
		case <-deadline:
			return wireMsg{}, false
		}
	}
}

func (s *fakeServer) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.received))
	for _, m := range s.received {
		if m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

// events records a client's events.
type events struct {
	mu    sync.Mutex
	kinds []string
	data  [][]byte
	ch    chan string
}

func recordEvents(c *Client) *events {
	e := &events{ch: make(chan string, 4096)}
	c.SetEventHandler(func(kind string, payload []byte) {
		e.mu.Lock()
		e.kinds = append(e.kinds, kind)
		e.data = append(e.data, payload)
		e.mu.Unlock()
		select {
		case e.ch <- kind:
		default:
		}
	}, nil)
	return e
}

// wait waits for an event of kind and returns its payload.
func (e *events) wait(kind string) ([]byte, bool) {
	deadline := time.After(3 * time.Second)
	for {
		e.mu.Lock()
		for i, k := range e.kinds {
			if k == kind {
				d := e.data[i]
				e.mu.Unlock()
				return d, true
			}
		}
		e.mu.Unlock()
		select {
		case <-e.ch:
		case <-deadline:
			return nil, false
		}
	}
}

func (e *events) all(kind string) [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out [][]byte
	for i, k := range e.kinds {
		if k == kind {
			out = append(out, e.data[i])
		}
	}
	return out
}

// testOptions are quick-timeout defaults for tests.
func testOptions() Options {
	o := DefaultOptions("test")
	o.Timeouts.Ready = 2 * time.Second
	o.Timeouts.Call = 2 * time.Second
	o.Timeouts.CloseGrace = 50 * time.Millisecond
	return o
}

// legacyOptions are testOptions pinned to the legacy era, for tests that
// check the exact wire sequence of the initialize handshake (the default,
// ModeAuto, sends server/discover first).
func legacyOptions() Options {
	o := testOptions()
	o.Mode = ModeLegacy
	return o
}

// readyClient connects a client to s and waits for readiness.
func readyClient(t *testing.T, s *fakeServer, opts Options) *Client {
	c := s.client(opts)
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	return c
}

// errOrNil keeps require.Nil honest about typed nil *Error values.
func errOrNil(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}

// completion collects one async call's outcome.
type completion struct {
	status Status
	data   []byte
	count  int
}

func asyncCall(t *testing.T, c *Client, method string, params string, opts CallOptions) (uint64, chan completion) {
	ch := make(chan completion, 4)
	var mu sync.Mutex
	n := 0
	var p []byte
	if params != "" {
		p = []byte(params)
	}
	id, err := c.Call(method, p, opts, func(_ uint64, st Status, data []byte) {
		mu.Lock()
		n++
		count := n
		mu.Unlock()
		ch <- completion{st, data, count}
	})
	require.Nil(t, errOrNil(err))
	return id, ch
}

func waitCompletion(t *testing.T, ch chan completion) completion {
	select {
	case c := <-ch:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not complete")
		return completion{}
	}
}

func (s *fakeServer) pairForTest() (*memory.Transport, *memory.Peer) { return memory.NewPair(1024) }

// pendingCount reports how many calls a client still tracks.
func (c *Client) pendingCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls) + len(c.pending)
}
