package stdio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
)

// BenchmarkOversizedLineMemory measures what skipping an over-long line
// costs in memory, as multiples of the limit: "alloc/limit" is every byte
// allocated while one 4×-limit line is read and skipped (the garbage the
// host's GC must absorb), "heap/limit" the heap still in use at its end.
// Reported, never asserted.
func BenchmarkOversizedLineMemory(b *testing.B) {
	const limit = 4 << 20
	line := make([]byte, 4*limit+1)
	copy(line, `{"jsonrpc":"2.0","id":7,"result":{"text":"`)
	for i := 44; i < len(line)-1; i++ {
		line[i] = 'x'
	}
	line[len(line)-1] = '\n'
	var alloc, heap float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := newLineReader(&sliceReader{data: line, step: 64 << 10}, limit, readChunk, &nopLineSink{})
		if err := r.run(); err != io.EOF {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		alloc += float64(after.TotalAlloc - before.TotalAlloc)
		heap += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		runtime.KeepAlive(r)
	}
	b.ReportMetric(alloc/float64(b.N)/limit, "alloc/limit")
	b.ReportMetric(heap/float64(b.N)/limit, "heap/limit")
}

// sliceReader returns data in reads of at most step bytes, like a pipe.
type sliceReader struct {
	data []byte
	step int
}

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), s.step)], s.data)
	s.data = s.data[n:]
	return n, nil
}

// BenchmarkFullSendQueueMemory fills the stdin queue of a server that
// never reads (a pipe nobody drains) up to its byte limit, then reports
// the heap the queue holds after a collection as a multiple of the limit
// ("live/limit"), and everything allocated on the way ("alloc/limit").
// Reported, never asserted.
func BenchmarkFullSendQueueMemory(b *testing.B) {
	const limit = 16 << 20
	for _, size := range []int{200, 4096, 60 << 10} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			msg := bytes.Repeat([]byte("q"), size)
			var live, alloc float64
			for i := 0; i < b.N; i++ {
				pr, pw, err := os.Pipe()
				if err != nil {
					b.Fatal(err)
				}
				s := &sender{maxQueued: limit}
				s.attach(pw)
				var down atomic.Bool
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for s.send(context.Background(), msg, &down) == nil {
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				live += float64(after.HeapAlloc) - float64(before.HeapAlloc)
				alloc += float64(after.TotalAlloc - before.TotalAlloc)
				runtime.KeepAlive(s)
				down.Store(true)
				pr.Close()
				pw.Close()
			}
			b.ReportMetric(live/float64(b.N)/limit, "live/limit")
			b.ReportMetric(alloc/float64(b.N)/limit, "alloc/limit")
		})
	}
}
