package sseparse

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// BenchmarkOversizedEventMemory measures what skipping an event four times
// over the limit costs, as multiples of the limit: "alloc/limit" is every
// byte allocated while it is read and skipped, "heap/limit" what the heap
// grew by. Reported, never asserted.
func BenchmarkOversizedEventMemory(b *testing.B) {
	const limit = 4 << 20
	var stream bytes.Buffer
	stream.WriteString(`data: {"jsonrpc":"2.0","id":7,"result":{"text":"`)
	stream.Write(bytes.Repeat([]byte("x"), 4*limit))
	stream.WriteString("\"}}\n\ndata: {}\n\n")
	var alloc, heap float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := NewReader(&stepReader{data: stream.Bytes(), step: 32 << 10}, limit)
		_, err := r.Next()
		var tl *TooLargeError
		if !errors.As(err, &tl) {
			b.Fatalf("want TooLargeError, got %v", err)
		}
		if ev, err := r.Next(); err != nil || string(ev.Data) != "{}" {
			b.Fatalf("next event: %q %v", ev.Data, err)
		}
		runtime.ReadMemStats(&after)
		alloc += float64(after.TotalAlloc - before.TotalAlloc)
		heap += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		r.Release()
	}
	b.ReportMetric(alloc/float64(b.N)/limit, "alloc/limit")
	b.ReportMetric(heap/float64(b.N)/limit, "heap/limit")
}

// stepReader returns data in reads of at most step bytes.
type stepReader struct {
	data []byte
	step int
}

func (s *stepReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), s.step)], s.data)
	s.data = s.data[n:]
	return n, nil
}

// Events larger than a segment come back whole, across data lines, and
// the reader goes on with small ones.
func TestLargeEventsAcrossSegments(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 30000)
	var stream bytes.Buffer
	stream.WriteString("data: ")
	stream.Write(big)
	stream.WriteString("\ndata: ")
	stream.Write(big[:segBytes])
	stream.WriteString("\n\ndata: small\n\n")
	stream.WriteString("data: ")
	stream.Write(big)
	stream.WriteString("\n\n")
	r := NewReader(&stepReader{data: stream.Bytes(), step: 7000}, 1<<20)
	defer r.Release()
	want := [][]byte{append(append(append([]byte(nil), big...), '\n'), big[:segBytes]...), []byte("small"), big}
	for i, w := range want {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if !bytes.Equal(ev.Data, w) {
			t.Fatalf("event %d: %d bytes, want %d", i, len(ev.Data), len(w))
		}
	}
}
