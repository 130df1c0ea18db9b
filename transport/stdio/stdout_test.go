package stdio

import (
	"io"
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

// The unterminated last line at EOF: a complete message whose server
// exited without its newline is delivered, one cut short by the server's
// death is dropped with a warning that never quotes it (the call it
// answers fails with the connection's loss), and text stays a log line.
func TestUnterminatedLastLine(t *testing.T) {
	cases := []struct {
		name    string
		tail    string
		deliver bool
		log     string
	}{
		{"complete message", `{"jsonrpc":"2.0","id":1,"result":{}}`, true, ""},
		{"complete message, CRLF", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r", true, ""},
		{"message cut short", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"secret`, false, "ended inside a message"},
		{"batch cut short", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc"`, false, "ended inside a message"},
		{"long message cut short", `{"jsonrpc":"2.0","id":2,"result":{"text":"secret` + strings.Repeat("x", 700), false, "ended inside a message"},
		{"text", "bye", false, "bye"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := newTestSink()
			lines := &stdoutLines{sink: sink, limit: 4096}
			r := newLineReader(strings.NewReader("{\"a\":1}\n"+tc.tail), 4096, 256, lines)
			require.ErrorIs(t, r.run(), io.EOF)
			require.Equal(t, `{"a":1}`, string(<-sink.recv))
			if tc.deliver {
				require.Equal(t, strings.TrimSuffix(tc.tail, "\r"), string(<-sink.recv))
				require.Empty(t, sink.logs)
				return
			}
			require.Empty(t, sink.recv)
			require.Len(t, sink.logs, 1)
			require.Contains(t, sink.logs[0].Text, tc.log)
			require.NotContains(t, sink.logs[0].Text, "secret")
			require.Empty(t, sink.failed)
		})
	}
}
