package transport

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type logSink struct{ lines []LogLine }

func (s *logSink) Receive([]byte)              {}
func (s *logSink) Log(l LogLine)               { s.lines = append(s.lines, l) }
func (s *logSink) RequestFailed(int64, *Error) {}
func (s *logSink) Closed(*ClosedError)         {}

func TestRecover(t *testing.T) {
	tests := []struct {
		name    string
		panicOf any
		sink    bool
		want    string
	}{
		{name: "error value", panicOf: "boom", sink: true, want: "internal error in the reader: boom (a bug: please report it)"},
		{name: "long value is cut", panicOf: strings.Repeat("x", 500), sink: true, want: strings.Repeat("x", 200) + "..."},
		{name: "no sink", panicOf: 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &logSink{}
			var sink Sink
			if tt.sink {
				sink = s
			}
			ran := false
			func() {
				defer Recover(sink, "the reader", func() { ran = true })
				panic(tt.panicOf)
			}()
			require.True(t, ran, "then did not run")
			if tt.sink {
				require.Len(t, s.lines, 2)
				require.Equal(t, "error", s.lines[0].Level)
				require.Contains(t, s.lines[0].Text, tt.want)
				require.Equal(t, "debug", s.lines[1].Level, "the stack goes to debug")
			}
		})
	}
	t.Run("no panic: nothing happens", func(t *testing.T) {
		s := &logSink{}
		ran := false
		func() { defer Recover(s, "x", func() { ran = true }) }()
		require.False(t, ran)
		require.Empty(t, s.lines)
	})
}

// panicSink also takes recovered panics itself, as the core does.
type panicSink struct {
	logSink
	where string
	value any
}

func (s *panicSink) Panicked(where string, value any) { s.where, s.value = where, value }

func TestRecoverHandsPanicsToAPanicSink(t *testing.T) {
	s := &panicSink{}
	ran := false
	func() {
		defer Recover(s, "the reader", func() { ran = true })
		panic("boom")
	}()
	require.True(t, ran, "then still runs")
	require.Equal(t, "the reader", s.where)
	require.Equal(t, "boom", s.value)
	require.Empty(t, s.lines, "the panic sink reports it, not Recover")
}
