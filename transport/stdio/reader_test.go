package stdio

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// event is one lineSink call, recorded for comparison.
type event struct {
	kind  string // "line", "head", "end"
	text  string
	total int64
}

type recordSink struct{ events []event }

func (r *recordSink) line(b []byte) {
	r.events = append(r.events, event{kind: "line", text: string(b)})
}
func (r *recordSink) longHead(b []byte) {
	r.events = append(r.events, event{kind: "head", text: string(b)})
}
func (r *recordSink) longEnd(n int64) { r.events = append(r.events, event{kind: "end", total: n}) }

// expectedEvents is the model the reader must match: split on '\n', an
// unterminated tail counts as a line when it is not empty.
func expectedEvents(data []byte, limit, chunk int) []event {
	var out []event
	parts := bytes.Split(data, []byte("\n"))
	last := parts[len(parts)-1]
	parts = parts[:len(parts)-1]
	if len(last) > 0 {
		parts = append(parts, last)
	}
	for _, p := range parts {
		if len(p) <= limit {
			out = append(out, event{kind: "line", text: string(p)})
			continue
		}
		out = append(out,
			event{kind: "head", text: string(p[:min(limit, chunk)])},
			event{kind: "end", total: int64(len(p))})
	}
	return out
}

// chunkReader returns its data in pseudo-random pieces, sometimes empty.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := c.rng.Intn(c.max + 1)
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		name  string
		input string
		limit int
		chunk int
		wrap  func(io.Reader) io.Reader
	}{
		{name: "simple lines", input: "a\nbb\nccc\n", limit: 10, chunk: 4},
		{name: "unterminated tail", input: "a\nbb", limit: 10, chunk: 4},
		{name: "empty lines kept", input: "\n\na\n\n", limit: 10, chunk: 4},
		{name: "exactly the limit", input: "abcde\nabcdef\n", limit: 5, chunk: 2},
		{name: "long line in one buffer", input: "x\n" + strings.Repeat("y", 50) + "\nz\n", limit: 8, chunk: 64},
		{name: "long line across reads", input: strings.Repeat("y", 500) + "\nz\n", limit: 8, chunk: 4},
		{name: "long unterminated tail", input: "a\n" + strings.Repeat("y", 30), limit: 8, chunk: 4},
		{name: "one byte reads", input: "ab\n" + strings.Repeat("q", 20) + "\ncd\n", limit: 5, chunk: 8, wrap: iotest.OneByteReader},
		{name: "half reads", input: "hello\nworld\n" + strings.Repeat("r", 40) + "\n", limit: 16, chunk: 8, wrap: iotest.HalfReader},
		{name: "data with EOF", input: "ab\ncd", limit: 5, chunk: 8, wrap: iotest.DataErrReader},
		{name: "empty input", input: "", limit: 5, chunk: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var src io.Reader = strings.NewReader(tt.input)
			if tt.wrap != nil {
				src = tt.wrap(src)
			}
			rec := &recordSink{}
			r := newLineReader(src, tt.limit, tt.chunk, rec)
			require.ErrorIs(t, r.run(), io.EOF)
			require.Equal(t, expectedEvents([]byte(tt.input), tt.limit, tt.chunk), rec.events)
			require.LessOrEqual(t, r.peak.Load(), int64(tt.limit+tt.chunk))
		})
	}
}

// A read error other than EOF drops the unterminated tail, which is most
// likely cut short.
func TestLineReaderErrorDropsPartial(t *testing.T) {
	rec := &recordSink{}
	boom := fmt.Errorf("boom")
	src := io.MultiReader(strings.NewReader("ok\npart"), iotest.ErrReader(boom))
	r := newLineReader(src, 10, 4, rec)
	require.ErrorIs(t, r.run(), boom)
	require.Equal(t, []event{{kind: "line", text: "ok"}}, rec.events)
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\n"), uint8(4), uint8(3), int64(1))
	f.Add([]byte("{\"x\":1}\n\n\r\n"+strings.Repeat("z", 100)+"\nend"), uint8(16), uint8(7), int64(2))
	f.Add([]byte(strings.Repeat("\n", 20)), uint8(1), uint8(1), int64(3))
	f.Add([]byte(strings.Repeat("w", 300)), uint8(10), uint8(50), int64(4))
	f.Fuzz(func(t *testing.T, data []byte, limit, chunk uint8, seed int64) {
		lim := int(limit)%64 + 1
		ch := int(chunk)%32 + 1
		src := &chunkReader{data: data, rng: rand.New(rand.NewSource(seed)), max: ch + 3}
		rec := &recordSink{}
		r := newLineReader(src, lim, ch, rec)
		if err := r.run(); err != io.EOF {
			t.Fatalf("run returned %v", err)
		}
		want := expectedEvents(data, lim, ch)
		if len(want) != len(rec.events) {
			t.Fatalf("got %d events, want %d\ngot  %+v\nwant %+v", len(rec.events), len(want), rec.events, want)
		}
		for i := range want {
			if want[i] != rec.events[i] {
				t.Fatalf("event %d: got %+v, want %+v", i, rec.events[i], want[i])
			}
			if rec.events[i].kind == "line" && len(rec.events[i].text) > lim {
				t.Fatalf("line %d over the limit", i)
			}
		}
		if p := r.peak.Load(); p > int64(lim+ch) {
			t.Fatalf("buffer grew to %d, bound %d", p, lim+ch)
		}
	})
}

type nopLineSink struct{ n int }

func (s *nopLineSink) line([]byte)     { s.n++ }
func (s *nopLineSink) longHead([]byte) {}
func (s *nopLineSink) longEnd(int64)   {}

// BenchmarkLineReader measures framing alone: one op is one 200-byte line.
func BenchmarkLineReader(b *testing.B) {
	line := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 120) + `"}]}}` + "\n"
	const perBatch = 1000
	data := []byte(strings.Repeat(line, perBatch))
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	sink := &nopLineSink{}
	src := &repeatReader{data: data, left: b.N / perBatch}
	r := newLineReader(src, DefaultMaxMessageBytes, readChunk, sink)
	r.run()
}

// repeatReader serves data left times.
type repeatReader struct {
	data []byte
	off  int
	left int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	if r.off == len(r.data) {
		r.off = 0
		r.left--
	}
	return n, nil
}
