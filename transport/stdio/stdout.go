package stdio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/internal/redact"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/rpcpeek"
)

// maxStdoutLogBytes bounds the text of a non-JSON stdout line passed on as
// a log line: banners are short, and a long one is most likely a payload
// that was never meant to be printed whole.
const maxStdoutLogBytes = 1 << 10

// utf8BOM is skipped at the start of a line: some runtimes write one before
// their first output, and it would otherwise turn the first message into a
// "not JSON" warning.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// stdoutLines sorts stdout lines into messages for the core and log lines.
// It is the hot path: a message line costs no allocation.
type stdoutLines struct {
	sink    transport.Sink
	limit   int
	secrets redact.Set // configured env values, cut out of log lines
}

func (s *stdoutLines) line(b []byte) {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	i := 0
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	if i == len(b) {
		return
	}
	if c := b[i]; c == '{' || c == '[' {
		s.sink.Receive(b)
		return
	}
	s.sink.Log(transport.LogLine{Level: "warning", Source: "stdout", Text: logText(scrubbed(b, s.secrets), maxStdoutLogBytes)})
}

// tail takes the unterminated last line at EOF. A complete JSON text is a
// message whose server exited without its newline; anything else that
// starts as one is a message the server died writing (a crash or SIGKILL
// mid-line): it is dropped with a warning, and the call it answers fails
// with the connection's loss, as every call still pending does, rather
// than as a protocol error its caller would not retry. The content is
// never reported: it may carry anything.
func (s *stdoutLines) tail(b []byte) {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(b, utf8BOM), " \t\r\v\f")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && !json.Valid(trimmed) {
		s.sink.Log(transport.LogLine{
			Level:  "warning",
			Source: "transport",
			Text:   fmt.Sprintf("the server's stdout ended inside a message (%d bytes without their newline): dropped", len(b)),
		})
		return
	}
	s.line(b)
}

// longHead fails the request an over-long response answers, when its
// head names it: the call learns at once why no answer will come, instead
// of waiting for its timeout. The content itself is never reported: it
// may carry anything.
func (s *stdoutLines) longHead(head []byte) {
	if id, ok := rpcpeek.ResponseID(head); ok {
		s.sink.RequestFailed(id, transport.Errorf(transport.CodeProtocol,
			"the server's response is larger than the limit of %d bytes (limits.max_message_bytes)", s.limit))
	}
}

func (s *stdoutLines) longEnd(total int64) {
	s.sink.Log(transport.LogLine{
		Level:  "warning",
		Source: "transport",
		Text:   fmt.Sprintf("skipped a stdout line of %d bytes, over the limit of %d bytes", total, s.limit),
	})
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// envSecrets are the values of the configured environment variables: a
// server that prints its environment (or the API key it was given) must not
// get them into a log line. Inherited variables are the host's own and
// are not listed.
func envSecrets(env map[string]string) redact.Set {
	values := make([]string, 0, len(env))
	for _, v := range env {
		values = append(values, v)
	}
	return redact.NewSet(values...)
}

// scrubbed is b with the secrets cut out, before any cut to length (which
// could leave part of a secret behind).
func scrubbed(b []byte, secrets redact.Set) []byte {
	if len(secrets) == 0 {
		return b
	}
	return []byte(secrets.Scrub(string(b)))
}

// logText makes a log line's text from raw bytes: at most max bytes, cut
// on a rune boundary, and valid UTF-8, because the core hands log lines to
// hosts as JSON strings.
func logText(b []byte, max int) string {
	if len(b) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
