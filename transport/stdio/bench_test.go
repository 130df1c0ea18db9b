package stdio

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// benchSink signals each message without copying it, so the allocations
// the benchmark reports are the transport's own.
type benchSink struct{ got chan struct{} }

func (s *benchSink) Receive([]byte)                        { s.got <- struct{}{} }
func (s *benchSink) Log(transport.LogLine)                 {}
func (s *benchSink) Closed(*transport.ClosedError)         {}
func (s *benchSink) RequestFailed(int64, *transport.Error) {}

// BenchmarkRoundTrip is one request through the echo helper and back:
// Send, the server's read and write, framing, Receive.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{name: "background", ctx: func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{name: "deadline", ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Hour)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tr, err := New(helperConfig(b, "echo"))
			require.NoError(b, err)
			sink := &benchSink{got: make(chan struct{}, 1)}
			require.NoError(b, tr.Start(context.Background(), sink))
			defer tr.Close(context.Background())

			ctx, cancel := bc.ctx()
			defer cancel()
			msg := transport.Outbound{
				Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`),
				Kind: transport.KindRequest,
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(msg.Data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := tr.Send(ctx, msg); err != nil {
					b.Fatal(err)
				}
				<-sink.got
			}
		})
	}
}
