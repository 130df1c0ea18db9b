package stdio

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

// An over-long response whose first bytes name its request fails that
// request at once (CodeProtocol); one that names none is only logged.
func TestOverlongResponseFailsItsRequest(t *testing.T) {
	cases := []struct {
		name string
		line string
		id   int64
		fail bool
	}{
		{"compact", `{"jsonrpc":"2.0","id":7,"result":{"text":"`, 7, true},
		{"spaced", `{"jsonrpc": "2.0", "id": 8, "result": {"text": "`, 8, true},
		{"id 9.0e0", `{"jsonrpc":"2.0","id":9.0e0,"error":{"message":"`, 9, true},
		{"id after the result", `{"jsonrpc":"2.0","result":{"text":"`, 0, false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := newTestSink()
			lines := &stdoutLines{sink: sink, limit: 1000}
			r := newLineReader(strings.NewReader(tc.line+strings.Repeat("x", 5000)+"\"}}\n"), 1000, 256, lines)
			r.run()
			if !tc.fail {
				require.Empty(t, sink.failed)
				return
			}
			require.Len(t, sink.failed, 1)
			f := <-sink.failed
			require.Equal(t, tc.id, f.id)
			require.Equal(t, transport.CodeProtocol, f.err.Code)
			require.Contains(t, f.err.Message, "larger than the limit of 1000 bytes")
			require.NotContains(t, f.err.Message, "xxx")
		})
	}
}

// CRLF line endings are accepted: the '\r' is not part of the message.
func TestCRLFLines(t *testing.T) {
	sink := newTestSink()
	lines := &stdoutLines{sink: sink, limit: 1000}
	r := newLineReader(strings.NewReader("{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\r\n{\"a\":1}\r\n"), 1000, 16, lines)
	r.run()
	require.Equal(t, `{"jsonrpc": "2.0", "id": 1, "result": {}}`, string(<-sink.recv))
	require.Equal(t, `{"a":1}`, string(<-sink.recv))
}

// A server that prints the environment values it was configured with
// (an API key) gets them into no log line, on stdout or stderr.
func TestEchoedEnvValuesScrubbed(t *testing.T) {
	secrets := envSecrets(map[string]string{"API_KEY": "sk-env-0123456789", "MODE": "on"})
	sink := newTestSink()
	out := &stdoutLines{sink: sink, limit: 1000, secrets: secrets}
	errs := newStderrLines(sink, 4)
	errs.secrets = secrets
	out.line([]byte("starting with API_KEY=sk-env-0123456789 MODE=on"))
	errs.line([]byte("debug: key sk-env-0123456789"))
	logs := sink.logLines()
	require.Len(t, logs, 2)
	for _, l := range logs {
		require.NotContains(t, l.Text, "sk-env")
		require.Contains(t, l.Text, "[redacted]")
	}
	require.Contains(t, logs[0].Text, "MODE=on", "values too short to be secrets are left alone")
	require.NotContains(t, errs.tail()[0], "sk-env")
}
