package respawn

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/stretchr/testify/require"
)

// fake is one generation: it records what reaches it and lets the test
// play the server's side through the sink it was started with.
type fake struct {
	name     string
	startErr error

	mu     sync.Mutex
	sink   transport.Sink
	sent   []string
	closed int
}

func (f *fake) Start(_ context.Context, sink transport.Sink) error {
	if f.startErr != nil {
		return f.startErr
	}
	f.mu.Lock()
	f.sink = sink
	f.mu.Unlock()
	return nil
}

func (f *fake) Send(_ context.Context, msg transport.Outbound) error {
	f.mu.Lock()
	f.sent = append(f.sent, string(msg.Data))
	f.mu.Unlock()
	return nil
}

// Close reports Closed through the generation's sink, as a real transport
// does.
func (f *fake) Close(context.Context) error {
	f.mu.Lock()
	f.closed++
	sink := f.sink
	f.mu.Unlock()
	sink.Closed(&transport.ClosedError{Message: "closed", ExitCode: 0, Requested: true})
	return nil
}

func (f *fake) Name() string { return f.name }

func (f *fake) InboundStream() string { return "stdout-of-" + f.name }

// recorder is the client's side.
type recorder struct {
	mu       sync.Mutex
	received []string
	closed   []string
	panics   []string
}

func (r *recorder) Receive(data []byte) {
	r.mu.Lock()
	r.received = append(r.received, string(data))
	r.mu.Unlock()
}
func (r *recorder) Log(transport.LogLine)                 {}
func (r *recorder) RequestFailed(int64, *transport.Error) {}
func (r *recorder) Closed(err *transport.ClosedError) {
	r.mu.Lock()
	r.closed = append(r.closed, err.Message)
	r.mu.Unlock()
}
func (r *recorder) Panicked(where string, _ any) {
	r.mu.Lock()
	r.panics = append(r.panics, where)
	r.mu.Unlock()
}

// factoryOf hands out gens in turn.
func factoryOf(gens ...*fake) Factory {
	var mu sync.Mutex
	return func() (transport.Transport, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(gens) == 0 {
			return nil, errors.New("no more generations")
		}
		g := gens[0]
		gens = gens[1:]
		return g, nil
	}
}

func send(t *testing.T, l *Transport, text string) {
	require.NoError(t, l.Send(context.Background(), transport.Outbound{Data: []byte(text)}))
}

func TestGenerations(t *testing.T) {
	first, second, unused := &fake{name: "stdio"}, &fake{name: "stdio"}, &fake{name: "stdio"}
	l := New(first, factoryOf(second, unused))
	client := &recorder{}
	require.NoError(t, l.Start(context.Background(), client))
	send(t, l, "a")

	// The first generation is lost; its Closed reaches the client, which
	// calls Next.
	first.sink.Closed(&transport.ClosedError{Message: "exited"})
	require.NoError(t, l.Next())
	send(t, l, "b")
	second.sink.Receive([]byte("from second"))

	// A late Closed of the retired generation is not the client's business.
	first.sink.Closed(&transport.ClosedError{Message: "late"})
	// A panic of any generation is.
	first.sink.(transport.PanicSink).Panicked("a retired reader", "boom")

	require.Equal(t, []string{"a"}, first.sent)
	require.Equal(t, []string{"b"}, second.sent)
	client.mu.Lock()
	require.Equal(t, []string{"exited"}, client.closed)
	require.Equal(t, []string{"from second"}, client.received)
	require.Equal(t, []string{"a retired reader"}, client.panics)
	client.mu.Unlock()

	require.NoError(t, l.Close(context.Background()))
	require.Equal(t, 1, second.closed, "Close closes the current generation")
	require.NoError(t, l.Close(context.Background()), "Close is idempotent")
	require.Equal(t, 1, second.closed)
	var cerr *transport.ClosedError
	require.ErrorAs(t, l.Next(), &cerr, "no generation after Close")
	require.Nil(t, unused.sink, "the generation built after Close was never started")
}

func TestCloseBetweenGenerations(t *testing.T) {
	first := &fake{name: "stdio"}
	l := New(first, factoryOf())
	client := &recorder{}
	require.NoError(t, l.Start(context.Background(), client))
	first.sink.Closed(&transport.ClosedError{Message: "exited"})
	require.Error(t, l.Next(), "the factory's error is returned")

	require.NoError(t, l.Close(context.Background()))
	first.sink.Closed(&transport.ClosedError{Message: "late"})
	client.mu.Lock()
	defer client.mu.Unlock()
	require.Equal(t, []string{"exited", "the client was closed"}, client.closed,
		"between generations Close reports Closed itself, once")
	require.Zero(t, first.closed, "a generation that reported Closed is not closed again")
}

func TestCloseCurrentKeepsTheWrapper(t *testing.T) {
	first, second := &fake{name: "stdio"}, &fake{name: "stdio"}
	l := New(first, factoryOf(second))
	client := &recorder{}
	require.NoError(t, l.Start(context.Background(), client))
	l.CloseCurrent(context.Background())
	require.Equal(t, 1, first.closed)
	require.NoError(t, l.Next())
	send(t, l, "after")
	require.Equal(t, []string{"after"}, second.sent)
}

func TestStartErrorOfNextGeneration(t *testing.T) {
	startErr := &transport.Error{Code: transport.CodeTransport, Message: "spawn failed"}
	first, broken := &fake{name: "stdio"}, &fake{name: "stdio", startErr: startErr}
	l := New(first, factoryOf(broken))
	require.NoError(t, l.Start(context.Background(), &recorder{}))
	first.sink.Closed(&transport.ClosedError{Message: "exited"})
	require.Equal(t, startErr, l.Next())
}

// The wrapper is what the client sees; the optional transport interfaces
// the client relies on must still reach the real transport.
func TestForwardsOptionalInterfaces(t *testing.T) {
	l := New(&fake{name: "stdio"}, factoryOf())
	var tr transport.Transport = l
	tests := []struct {
		name string
		ok   bool
	}{
		{"LineStreamer", func() bool { _, ok := tr.(transport.LineStreamer); return ok }()},
		{"HeaderCarrier", func() bool { _, ok := tr.(transport.HeaderCarrier); return ok }()},
		{"Aborter", func() bool { _, ok := tr.(transport.Aborter); return ok }()},
		{"Negotiator", func() bool { _, ok := tr.(transport.Negotiator); return ok }()},
		{"generation sink is a PanicSink", func() bool { _, ok := transport.Sink(generationSink{l: l}).(transport.PanicSink); return ok }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.True(t, tt.ok) })
	}
	require.Equal(t, "stdout-of-stdio", l.InboundStream(), "the current generation names its stream")
	require.Equal(t, "stdio", l.Name())
	require.False(t, l.CarriesHeaders(), "a generation that carries no headers says so through the wrapper")
	require.Empty(t, l.SessionID(), "a generation without a session id has none through the wrapper")
}
