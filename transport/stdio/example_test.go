package stdio_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// printSink is what core is to a transport: it takes inbound messages, log
// lines and the one closed report.
type printSink struct {
	received chan string
	closed   chan *transport.ClosedError
}

func (s printSink) Receive(data []byte)                   { s.received <- string(data) }
func (s printSink) Log(transport.LogLine)                 {}
func (s printSink) RequestFailed(int64, *transport.Error) {}
func (s printSink) Closed(err *transport.ClosedError)     { s.closed <- err }

// The transport spawns the server and exchanges newline-framed JSON-RPC
// messages over its stdin and stdout. cat stands in for a server here: it
// sends every message straight back.
func Example() {
	tr, err := stdio.New(stdio.Config{Command: "cat"})
	if err != nil {
		fmt.Println(err)
		return
	}
	sink := printSink{received: make(chan string, 1), closed: make(chan *transport.ClosedError, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Start(ctx, sink); err != nil {
		fmt.Println(err)
		return
	}
	msg := transport.Outbound{Data: []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`), Kind: transport.KindRequest, Method: "ping", ID: 1}
	if err := tr.Send(ctx, msg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("read back:", <-sink.received)

	// Close ends the process group and reaps the child; the sink hears of it
	// exactly once, before Close returns.
	if err := tr.Close(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("closed on request:", (<-sink.closed).Requested)
	// Output:
	// read back: {"jsonrpc":"2.0","method":"ping","id":1}
	// closed on request: true
}
