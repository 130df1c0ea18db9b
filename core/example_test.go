package core_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/transport/memory"
)

// tinyServer plays an MCP server on the peer side of an in-memory pair: it
// answers initialize and a "greet" tool, and refuses every other request.
// It returns when the client's side is gone (done is closed).
func tinyServer(peer *memory.Peer, done <-chan struct{}) {
	for {
		var msg []byte
		select {
		case msg = <-peer.Incoming():
		case <-done:
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Who string `json:"who"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(msg, &req) != nil || req.ID == nil {
			continue // a notification (notifications/initialized): nothing to answer
		}
		answer := `"error":{"code":-32601,"message":"method not found"}`
		switch req.Method {
		case "initialize":
			answer = `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1.0"}}`
		case "tools/call":
			greeting, _ := json.Marshal("hello, " + req.Params.Arguments.Who)
			answer = `"result":{"content":[{"type":"text","text":` + string(greeting) + `}]}`
		}
		peer.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + answer + `}`))
	}
}

// A client connects over a transport, waits for the handshake, and calls a
// tool. Here the transport is the in-memory pair and the server a goroutine;
// a host would pass a stdio or HTTP transport built by package config.
func Example() {
	tr, peer := memory.NewPair(16)
	done := make(chan struct{})
	defer close(done)
	go tinyServer(peer, done)

	c := core.New(core.DefaultOptions("example"), tr)
	defer c.Free()
	if err := c.Connect(); err != nil {
		fmt.Println("connect:", err.Message)
		return
	}
	if err := c.WaitReady(5 * time.Second); err != nil {
		fmt.Println("not ready:", err.Message)
		return
	}
	info, _ := c.ServerInfo()
	fmt.Println("server:", string(info))

	opts := core.CallOptions{Timeout: 5 * time.Second, TimeoutSet: true}
	result, err := c.CallSync("tools/call", []byte(`{"name":"greet","arguments":{"who":"world"}}`), opts)
	if err != nil {
		fmt.Println("call:", err.Message)
		return
	}
	fmt.Println("result:", string(result))

	// A method the server did not declare is refused before anything is sent.
	_, err = c.CallSync("prompts/list", nil, opts)
	fmt.Println("prompts/list:", err.Status, err.Message)
	// Output:
	// server: {"capabilities":{"tools":{}},"era":"legacy","protocolVersion":"2025-11-25","serverInfo":{"name":"tiny","version":"1.0"},"transport":"memory"}
	// result: {"content":[{"type":"text","text":"hello, world"}]}
	// prompts/list: unsupported the server did not declare the "prompts" capability, which prompts/list needs
}
