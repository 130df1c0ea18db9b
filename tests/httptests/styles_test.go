package httptests

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonstyle"
)

// restyled rewrites every JSON body and every SSE event's JSON data that
// next writes in style: a small proxy that turns the Go SDK into a server
// written in another language. Pretty-printed SSE data becomes several
// data: lines, as a server printing JSON.stringify(x, null, 2) would send.
func restyled(next http.Handler, style jsonstyle.Style) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &styleWriter{ResponseWriter: w, style: style}
		next.ServeHTTP(sw, r)
		sw.finish()
	})
}

type styleWriter struct {
	http.ResponseWriter
	style  jsonstyle.Style
	kind   string // "", "json", "sse" or "raw"
	status int
	buf    []byte
}

func (s *styleWriter) WriteHeader(code int) {
	if s.kind != "" {
		return
	}
	s.status = code
	switch ct := s.Header().Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		s.kind = "json" // written whole by finish, with its new length
		s.Header().Del("Content-Length")
		return
	case strings.HasPrefix(ct, "text/event-stream"):
		s.kind = "sse"
	default:
		s.kind = "raw"
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *styleWriter) Write(p []byte) (int, error) {
	if s.kind == "" {
		s.WriteHeader(http.StatusOK)
	}
	switch s.kind {
	case "json":
		s.buf = append(s.buf, p...)
	case "sse":
		s.buf = append(s.buf, p...)
		for {
			i := bytes.Index(s.buf, []byte("\n\n"))
			if i < 0 {
				break
			}
			if _, err := s.ResponseWriter.Write(s.event(s.buf[:i])); err != nil {
				return 0, err
			}
			s.buf = s.buf[i+2:]
		}
	default:
		return s.ResponseWriter.Write(p)
	}
	return len(p), nil
}

// event restyles one SSE event (without its blank line).
func (s *styleWriter) event(block []byte) []byte {
	eol := "\n"
	if s.style.CRLF {
		eol = "\r\n"
	}
	var out, data []string
	for _, line := range strings.Split(string(block), "\n") {
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
			continue
		}
		out = append(out, line)
	}
	joined := strings.Join(data, "\n")
	if data != nil && json.Valid([]byte(joined)) {
		styled := strings.ReplaceAll(string(jsonstyle.Restyle([]byte(joined), s.style)), "\r\n", "\n")
		data = strings.Split(styled, "\n")
	}
	for _, d := range data {
		out = append(out, "data: "+d)
	}
	return []byte(strings.Join(out, eol) + eol + eol)
}

func (s *styleWriter) Flush() {
	if s.kind == "sse" || s.kind == "raw" {
		if f, ok := s.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func (s *styleWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *styleWriter) finish() {
	if s.kind != "json" {
		return
	}
	body := s.buf
	if json.Valid(body) {
		body = jsonstyle.Restyle(body, s.style)
	}
	s.Header().Set("Content-Length", strconv.Itoa(len(body)))
	s.ResponseWriter.WriteHeader(s.status)
	s.ResponseWriter.Write(body)
}

// The interoperability corpus over HTTP: the handshake, a tool call, a
// notification (progress) and a server request (roots) pass with a server
// writing every JSON style, over Streamable HTTP (SSE and JSON bodies) and
// legacy SSE.
func TestServerJSONStylesOverHTTP(t *testing.T) {
	styles := []string{"python", "pretty", "pretty,crlf", "reverse", "escape", "numbers", "all"}
	for _, m := range []mode{modes[0], modes[1], modes[4]} {
		for _, name := range styles {
			t.Run(m.name+"/"+name, func(t *testing.T) {
				style, err := jsonstyle.Parse(name)
				require.NoError(t, err)
				srv := serve(t, restyled(m.handler(), style))
				c := connect(t, m.transport, srv.URL+m.path, "")
				require.Equal(t, "grüße ✓ 𝄞", c.toolText(t, "echo", map[string]any{"text": "grüße ✓ 𝄞"}))
				// The first progress goes out 100 ms before the reply: with a
				// JSON reply the notifications travel on the GET stream, and a
				// progress that arrives after its call finished is dropped.
				res := c.call(t, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 2, "ms": 100}}, core.CallOptions{Progress: true})
				require.NotNil(t, res)
				c.waitEvent(t, "progress", `"progress"`)
				require.Contains(t, c.toolText(t, "roots", map[string]any{}), "file:///work")
			})
		}
	}
}
