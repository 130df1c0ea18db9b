package core

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/transport/memory"
)

// FuzzDecodeEnvelope checks the codec on arbitrary input: it never panics,
// and whatever it accepts agrees with the standard library's reading.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
		`{"jsonrpc":"2.0","id":9223372036854775807,"result":null}`,
		`{"id":1}`, `[]`, `{`, `"x"`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var env envelope
		if err := decodeEnvelope(data, &env); err != nil {
			return
		}
		if !json.Valid(data) {
			return // lenient acceptance of invalid JSON is checked below
		}
		var std map[string]json.RawMessage
		if err := json.Unmarshal(data, &std); err != nil {
			t.Fatalf("accepted %q which is not a JSON object", data)
		}
		if env.hasResult && !json.Valid(env.result) {
			t.Fatalf("result %q of %q is not valid JSON", env.result, data)
		}
		if env.hasID && !json.Valid(env.idRaw) {
			t.Fatalf("id %q of %q is not valid JSON", env.idRaw, data)
		}
	})
}

// FuzzReceive feeds arbitrary texts to a ready client: it must never panic
// or wedge, and it keeps answering calls.
func FuzzReceive(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"zz"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		"\x00\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, peer := memory.NewPair(64)
		opts := DefaultOptions("fuzz")
		opts.Mode = ModeLegacy // the peer below answers initialize only
		opts.Timeouts.Call = time.Second
		c := New(opts, tr)
		defer c.Free()
		c.SetEventHandler(func(string, []byte) {}, nil)
		if err := c.Connect(); err != nil {
			t.Fatal(err)
		}
		init := <-peer.Incoming()
		var m wireMsg
		if err := json.Unmarshal(init, &m); err != nil {
			t.Fatal(err)
		}
		peer.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}}`))
		if err := c.WaitReady(time.Second); err != nil {
			t.Fatal(err)
		}
		peer.Write(data)
		go func() {
			for msg := range peer.Incoming() {
				var req wireMsg
				if json.Unmarshal(msg, &req) == nil && req.Method == "tools/list" {
					peer.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"tools":[]}}`))
					return
				}
			}
		}()
		if _, err := c.CallSync("tools/list", nil, CallOptions{}); err != nil {
			t.Fatalf("after %q the client no longer works: %v", data, err)
		}
	})
}
