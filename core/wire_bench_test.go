package core

import "testing"

// BenchmarkDecodeEnvelope is the codec's per-message cost on the common
// shapes: a compact response, a response written with spaces (Python's
// json.dumps default), and a notification.
func BenchmarkDecodeEnvelope(b *testing.B) {
	for _, bc := range []struct{ name, msg string }{
		{"compact", `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello world"}],"isError":false}}`},
		{"spaced", `{"jsonrpc": "2.0", "id": 42, "result": {"content": [{"type": "text", "text": "hello world"}], "isError": false}}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":0.5}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := []byte(bc.msg)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				var env envelope
				if err := decodeEnvelope(data, &env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
