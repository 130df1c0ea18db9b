package streamablehttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lemonmcp/lemonmcp/transport"
)

// benchSink signals each message without copying it, so that allocations
// are the transport's own (and net/http's).
type benchSink struct{ got chan struct{} }

func (s *benchSink) Receive([]byte)                        { s.got <- struct{}{} }
func (s *benchSink) Log(transport.LogLine)                 {}
func (s *benchSink) RequestFailed(int64, *transport.Error) { s.got <- struct{}{} }
func (s *benchSink) Closed(*transport.ClosedError)         {}

// BenchmarkRoundTrip is one request over loopback HTTP and its reply, as a
// JSON body and as an SSE stream: Send, the POST, the reply's parsing and
// Receive.
func BenchmarkRoundTrip(b *testing.B) {
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	for _, bc := range []struct {
		name  string
		write func(w http.ResponseWriter)
	}{
		{"json", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(reply)
		}},
		{"sse", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
			w.Write(reply)
			io.WriteString(w, "\n\n")
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				bc.write(w)
			}))
			defer srv.Close()
			tr, err := New(Config{URL: srv.URL})
			if err != nil {
				b.Fatal(err)
			}
			sink := &benchSink{got: make(chan struct{}, 1)}
			if err := tr.Start(context.Background(), sink); err != nil {
				b.Fatal(err)
			}
			defer tr.Close(context.Background())
			msg := transport.Outbound{
				Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`),
				Kind: transport.KindRequest, Method: "tools/call", ID: 1,
			}
			ctx := context.Background()
			b.ReportAllocs()
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
