package sseparse

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// readAll drains a reader into the form the model produces.
func readAll(t testing.TB, r *Reader) (outcome, error) {
	var out outcome
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("the reader does not make progress")
		}
		ev, err := r.Next()
		var tl *TooLargeError
		switch {
		case err == nil:
			out.Items = append(out.Items, item{Type: ev.Type, Data: string(ev.Data), ID: ev.ID})
		case errors.As(err, &tl):
			out.Items = append(out.Items, item{TooLarge: tl.Field, Head: string(tl.Head)})
		default:
			out.LastID = r.LastEventID()
			out.Retry, out.HasRetry = r.Retry()
			return out, err
		}
	}
}

// chunkReader hands out its data in pseudo-random pieces, sometimes empty.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(c.rng.Intn(c.max+1), len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestReader(t *testing.T) {
	ev := func(typ, data, id string) item { return item{Type: typ, Data: data, ID: id} }
	tests := []struct {
		name  string
		in    string
		limit int
		want  []item
		id    string
		retry time.Duration // 0: none
	}{
		{name: "one message", in: "data: {\"a\":1}\n\n", want: []item{ev("message", `{"a":1}`, "")}},
		{name: "multi-line data joined", in: "data: a\ndata: b\ndata:\ndata:c\n\n", want: []item{ev("message", "a\nb\n\nc", "")}},
		{name: "only one space stripped", in: "data:  two\n\n", want: []item{ev("message", " two", "")}},
		{name: "event type", in: "event: endpoint\ndata: /messages?s=1\n\n", want: []item{ev("endpoint", "/messages?s=1", "")}},
		{name: "type resets after dispatch", in: "event: x\ndata: 1\n\ndata: 2\n\n", want: []item{ev("x", "1", ""), ev("message", "2", "")}},
		{name: "CRLF", in: "data: a\r\ndata: b\r\n\r\n", want: []item{ev("message", "a\nb", "")}},
		{name: "CR only", in: "data: a\rdata: b\r\r", want: []item{ev("message", "a\nb", "")}},
		{name: "mixed line ends", in: "data: a\r\ndata: b\rdata: c\n\r\n", want: []item{ev("message", "a\nb\nc", "")}},
		{name: "BOM skipped", in: "\xEF\xBB\xBFdata: x\n\n", want: []item{ev("message", "x", "")}},
		{name: "second BOM kept", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n", want: nil},
		{name: "comments ignored", in: ": keepalive\n:\ndata: x\n: more\n\n", want: []item{ev("message", "x", "")}},
		{name: "unknown fields ignored", in: "foo: bar\ndatax: y\nverylongfieldnamethatisunknown: z\ndata: x\n\n", want: []item{ev("message", "x", "")}},
		{name: "id persists", in: "id: 7\ndata: a\n\ndata: b\n\n", want: []item{ev("message", "a", "7"), ev("message", "b", "7")}, id: "7"},
		{name: "empty id resets", in: "id: 7\ndata: a\n\nid\ndata: b\n\n", want: []item{ev("message", "a", "7"), ev("message", "b", "")}},
		{name: "id with NUL ignored", in: "id: 7\ndata: a\n\nid: x\x00y\ndata: b\n\n", want: []item{ev("message", "a", "7"), ev("message", "b", "7")}, id: "7"},
		{name: "priming event", in: "id: p1\nretry: 500\ndata: \n\n", want: []item{ev("message", "", "p1")}, id: "p1", retry: 500 * time.Millisecond},
		{name: "id without data updates last id", in: "id: 9\n\n", want: nil, id: "9"},
		{name: "retry without event", in: "retry: 1500\n", want: nil, retry: 1500 * time.Millisecond},
		{name: "bad retry ignored", in: "retry: 10\nretry: 1.5\nretry: -3\nretry:\n", retry: 10 * time.Millisecond},
		{name: "retry overflow ignored", in: "retry: 99999999999999999999\n"},
		{name: "incomplete event discarded", in: "data: a\n\ndata: b\n", want: []item{ev("message", "a", "")}},
		{name: "unterminated line discarded", in: "data: a\n\ndata: b", want: []item{ev("message", "a", "")}},
		{name: "no data field, no event", in: "event: x\n\n"},
		{
			name: "data over the limit", limit: 8,
			in:   "data: 123456789\n\ndata: ok\n\n",
			want: []item{{TooLarge: "data", Head: "123456789"}, ev("message", "ok", "")},
		},
		{
			name: "joined data over the limit", limit: 8,
			in:   "data: 1234\ndata: 5678\n\ndata: ok\n\n",
			want: []item{{TooLarge: "data", Head: "1234\n5678"}, ev("message", "ok", "")},
		},
		{
			name: "exactly the limit", limit: 8,
			in:   "data: 12345678\n\n",
			want: []item{ev("message", "12345678", "")},
		},
		{
			name: "skipped event's id and retry ignored", limit: 4,
			in:   "id: 1\ndata: a\n\ndata: 12345\nid: 2\nretry: 5\n\ndata: b\n\n",
			want: []item{ev("message", "a", "1"), {TooLarge: "data", Head: "12345"}, ev("message", "b", "1")},
			id:   "1",
		},
		{
			name: "long id field", in: "id: " + strings.Repeat("i", MaxFieldBytes+1) + "\ndata: x\n\ndata: y\n\n",
			want: []item{{TooLarge: "id"}, ev("message", "y", "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = 1 << 20
			}
			for _, src := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"byte by byte", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got, err := readAll(t, NewReader(src.r, limit))
				require.ErrorIs(t, err, io.EOF, src.name)
				require.Equal(t, tt.want, got.Items, src.name)
				require.Equal(t, tt.id, got.LastID, src.name)
				require.Equal(t, tt.retry, got.Retry, src.name)
				require.Equal(t, tt.retry != 0, got.HasRetry, src.name)
				require.Equal(t, model([]byte(tt.in), limit), got, "model, "+src.name)
			}
		})
	}
}

func TestReadErrorIsReturned(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(io.MultiReader(strings.NewReader("id: 3\ndata: a\n\ndata: part"), iotest.ErrReader(boom)), 1024)
	ev, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, "a", string(ev.Data))
	_, err = r.Next()
	require.ErrorIs(t, err, boom)
	require.Equal(t, "3", r.LastEventID(), "the last id survives a broken stream, for resuming")
	_, err = r.Next()
	require.ErrorIs(t, err, boom, "the error sticks")
}

func TestTooLargeErrorMessages(t *testing.T) {
	require.Equal(t, "an SSE event is larger than the limit of 1024 bytes", (&TooLargeError{Field: "data", Limit: 1024}).Error())
	require.Equal(t, `an SSE "id" field is longer than the limit of 4096 bytes`, (&TooLargeError{Field: "id", Limit: 4096}).Error())
}

// A huge event is skipped in bounded memory: the reader never holds more
// than the limit plus its read buffer, however much the server sends.
func TestHugeEventBoundedMemory(t *testing.T) {
	const limit = 64 << 10
	huge := io.MultiReader(
		strings.NewReader(`data: {"jsonrpc":"2.0","id":42,"result":{"text":"`),
		io.LimitReader(repeatReader('x'), 64<<20),
		strings.NewReader("\"}}\n\ndata: after\n\n"),
	)
	r := NewReader(huge, limit)
	_, err := r.Next()
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, limit, tl.Limit)
	require.Len(t, tl.Head, HeadBytes)
	require.True(t, bytes.HasPrefix(tl.Head, []byte(`{"jsonrpc":"2.0","id":42,`)))
	ev, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, "after", string(ev.Data))
	require.LessOrEqual(t, cap(r.data), 2*limit)
	require.Equal(t, readBufBytes, cap(r.buf))
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// A large event's buffer is not kept for the rest of the stream.
func TestLargeBufferReleased(t *testing.T) {
	in := "data: " + strings.Repeat("x", 2*retainBytes) + "\n\ndata: small\n\n"
	r := NewReader(strings.NewReader(in), 4*retainBytes)
	ev, err := r.Next()
	require.NoError(t, err)
	require.Len(t, ev.Data, 2*retainBytes)
	ev, err = r.Next()
	require.NoError(t, err)
	require.Equal(t, "small", string(ev.Data))
	require.LessOrEqual(t, cap(r.data), retainBytes)
}

func TestEmptyReadsDoNotSpin(t *testing.T) {
	_, err := NewReader(zeroReader{}, 16).Next()
	require.ErrorIs(t, err, io.ErrNoProgress)
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// FuzzParser checks the reader against the model on arbitrary input, read
// in arbitrary pieces, with a small limit so the limit paths get exercised.
func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "event: endpoint\r\ndata: /m\r\n\r\n", "id: 1\rretry: 20\rdata:\r\r",
		"\xEF\xBB\xBFdata: x\n\n", ": c\ndata: 1\ndata: 2\n\n", "data: 0123456789abcdef\n\ndata: y\n\n",
		"id: a\x00b\ndata\n\n", "data: x\r", "retry: 123456789012345678901\n",
	} {
		f.Add([]byte(s), uint8(8), int64(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint8, seed int64) {
		lim := int(limit%32) + 1
		want := model(in, lim)
		src := &chunkReader{data: in, rng: rand.New(rand.NewSource(seed)), max: 7}
		got, err := readAll(t, NewReader(src, lim))
		if !errors.Is(err, io.EOF) {
			t.Fatalf("unexpected error %v", err)
		}
		if len(got.Items) != len(want.Items) {
			t.Fatalf("items:\n got %q\nwant %q", got.Items, want.Items)
		}
		for i := range got.Items {
			if got.Items[i] != want.Items[i] {
				t.Fatalf("item %d:\n got %q\nwant %q", i, got.Items[i], want.Items[i])
			}
		}
		if got.LastID != want.LastID || got.Retry != want.Retry || got.HasRetry != want.HasRetry {
			t.Fatalf("state: got %+v want %+v", got, want)
		}
	})
}

// Release makes the reader unusable and recycles its buffer.
func TestRelease(t *testing.T) {
	r := NewReader(strings.NewReader("data: a\n\n"), 16)
	r.Release()
	r.Release()
	_, err := r.Next()
	require.ErrorIs(t, err, io.ErrClosedPipe)
}
