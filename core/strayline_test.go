package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/memory"
	"github.com/stretchr/testify/require"
)

// lineStreamed is the memory transport posing as one that reads the lines
// of a server's stream, as stdio reads stdout.
type lineStreamed struct{ *memory.Transport }

func (lineStreamed) InboundStream() string { return "stdout" }

// A text that is not JSON-RPC is skipped and reported; the log line names
// the server's stream when the transport reads one, else the transport.
func TestStrayLineSource(t *testing.T) {
	cases := []struct {
		name   string
		wrap   func(*memory.Transport) transport.Transport
		source string
	}{
		{"message transport", func(m *memory.Transport) transport.Transport { return m }, "transport"},
		{"line stream", func(m *memory.Transport) transport.Transport { return lineStreamed{m} }, "stdout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mt, peer := memory.NewPair(16)
			c := New(testOptions(), tc.wrap(mt))
			t.Cleanup(c.Free)
			logs := make(chan []byte, 16)
			c.SetEventHandler(func(kind string, payload []byte) {
				if kind == "log" {
					logs <- append([]byte(nil), payload...)
				}
			}, nil)
			require.Nil(t, errOrNil(c.Connect()))
			peer.Write([]byte(`hello, not json`))
			deadline := time.After(5 * time.Second)
			for {
				select {
				case raw := <-logs:
					var line struct{ Level, Source, Message string }
					require.NoError(t, json.Unmarshal(raw, &line))
					if strings.HasPrefix(line.Message, "skipped a 15-byte message that is not JSON-RPC 2.0") {
						require.NotContains(t, line.Message, "hello", "the stray text itself is never quoted")
						require.Equal(t, "warning", line.Level)
						require.Equal(t, tc.source, line.Source)
						return
					}
				case <-deadline:
					t.Fatal("no log line for the stray text")
				}
			}
		})
	}
}
