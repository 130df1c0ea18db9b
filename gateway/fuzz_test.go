package gateway

import (
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// FuzzFrontMessage: whatever a front sends, the gateway never panics,
// answers a request (or an invalid message) exactly once, with one JSON
// object or array, and answers nothing else (a host without servers:
// every call fails fast).
func FuzzFrontMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"requestState":"zz","inputResponses":{}}}`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}]`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`, `{"id":[],"method":7}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	h, err := host.Parse([]byte(`{"mcpServers":{}}`), "fuzz")
	if err != nil {
		f.Fatal(err.Message)
	}
	defer h.Free()
	s, err := New(h, nil)
	if err != nil {
		f.Fatal(err.Message)
	}
	sess, err := s.newSession(nil, false)
	if err != nil {
		f.Fatal(err.Message)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		answers := make(chan []byte, 4)
		kind := s.handle(sess, data, &reply{done: func(msg []byte) { answers <- msg }})
		if kind == kindRequest || kind == kindInvalid {
			select {
			case msg := <-answers:
				if msg != nil && core.FirstByte(msg) != '{' && core.FirstByte(msg) != '[' {
					t.Fatalf("answer is not a JSON-RPC message: %q", msg)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no answer to %q", data)
			}
		}
		select {
		case extra := <-answers:
			t.Fatalf("a second answer: %q", extra)
		default:
		}
	})
}
