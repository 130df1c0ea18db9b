package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
	"github.com/stretchr/testify/require"
)

const (
	testTraceParent  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	otherTraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

// traceOf is the trace context a request carried in params._meta.
func traceOf(t *testing.T, m wireMsg) tracecontext.Context {
	t.Helper()
	var tc tracecontext.Context
	if raw, ok := meta(t, m)["traceparent"]; ok {
		require.NoError(t, json.Unmarshal(raw, &tc.TraceParent))
	}
	if raw, ok := meta(t, m)["tracestate"]; ok {
		require.NoError(t, json.Unmarshal(raw, &tc.TraceState))
	}
	if raw, ok := meta(t, m)["baggage"]; ok {
		require.NoError(t, json.Unmarshal(raw, &tc.Baggage))
	}
	return tc
}

// A call's trace context, or else the client's default, reaches
// params._meta in both eras, beside the host's own _meta; a malformed
// traceparent is dropped with a warning and never sent.
func TestTraceContextOut(t *testing.T) {
	full := tracecontext.Context{TraceParent: testTraceParent, TraceState: "congo=t61rcWkgMzE", Baggage: "user=ada"}
	cases := []struct {
		name     string
		mode     string
		dflt     tracecontext.Context
		opt      tracecontext.Context
		meta     string
		want     tracecontext.Context
		warning  string
		hostMeta bool
	}{
		{name: "legacy, call option", mode: ModeLegacy, opt: full, want: full},
		{name: "legacy, client default", mode: ModeLegacy, dflt: tracecontext.Context{TraceParent: otherTraceParent}, want: tracecontext.Context{TraceParent: otherTraceParent}},
		{name: "call option wins over the default", mode: ModeLegacy, dflt: tracecontext.Context{TraceParent: otherTraceParent}, opt: tracecontext.Context{TraceParent: testTraceParent}, want: tracecontext.Context{TraceParent: testTraceParent}},
		{name: "kept beside the host's _meta", mode: ModeLegacy, opt: full, meta: `{"app":"x"}`, want: full, hostMeta: true},
		{name: "malformed traceparent dropped", mode: ModeLegacy, opt: tracecontext.Context{TraceParent: "00-nope", TraceState: "a=b"}, warning: "traceparent was dropped"},
		{name: "modern, call option", mode: ModeModern, opt: full, want: full},
		{name: "modern, beside the host's _meta", mode: ModeModern, opt: full, meta: `{"app":"x"}`, want: full, hostMeta: true},
		{name: "modern, malformed dropped", mode: ModeModern, opt: tracecontext.Context{TraceParent: strings.ToUpper(testTraceParent)}, warning: "traceparent was dropped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s *fakeServer
			opts := modernOptions(tc.mode)
			if tc.mode == ModeLegacy {
				s = newFakeServer(t, "2025-11-25", defaultCaps())
				opts = legacyOptions()
			} else {
				s = newModernServer(t)
			}
			opts.Trace = tc.dflt
			c, err := connectWith(t, s, opts, nil)
			require.Nil(t, errOrNil(err))
			ev := recordEvents(c)
			_, cerr := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"hi"}}`), CallOptions{Trace: tc.opt, Meta: []byte(tc.meta)})
			require.Nil(t, errOrNil(cerr))
			sent := s.requests("tools/call")
			require.Len(t, sent, 1)
			require.Equal(t, tc.want, traceOf(t, sent[0]))
			if tc.hostMeta {
				require.JSONEq(t, `"x"`, string(meta(t, sent[0])["app"]))
			}
			if tc.mode == ModeModern {
				require.Contains(t, meta(t, sent[0]), "io.modelcontextprotocol/protocolVersion")
			}
			if tc.warning != "" {
				require.Eventually(t, func() bool {
					for _, l := range ev.all("log") {
						if strings.Contains(string(l), tc.warning) && !strings.Contains(string(l), "00-nope") {
							return true
						}
					}
					return false
				}, 3*time.Second, 10*time.Millisecond, "a warning names the dropped part")
			}
		})
	}
}

// Every request of one call carries its trace context: the MRTR retry and
// a task's polls and updates.
func TestTraceContextEveryRequestOfTheCall(t *testing.T) {
	tc := tracecontext.Context{TraceParent: testTraceParent, Baggage: "k=v"}
	t.Run("MRTR retry", func(t *testing.T) {
		s := newModernServer(t)
		s.handle("tools/call", inputTool(nil, "s1"))
		c, err := connectWith(t, s, modernOptions(ModeModern), nil)
		require.Nil(t, errOrNil(err))
		_, cerr := c.CallSync("tools/call", []byte(`{"name":"ask","arguments":{}}`), CallOptions{Trace: tc})
		require.Nil(t, errOrNil(cerr))
		sent := s.requests("tools/call")
		require.Len(t, sent, 2, "the first request and its retry")
		for _, m := range sent {
			require.Equal(t, tc, traceOf(t, m))
		}
	})
	t.Run("task polls and updates", func(t *testing.T) {
		done := map[string]any{"status": "completed", "result": map[string]any{"content": []any{}}}
		s := taskServer(t, []map[string]any{{"status": "working"}, askName, {"status": "working"}, done})
		c, err := connectWith(t, s, tasksOptions(), func(c *Client, id uint64, _ string, _ []byte) {
			c.Respond(id, StatusOK, []byte(`{"action":"accept","content":{"name":"Ada"}}`))
		})
		require.Nil(t, errOrNil(err))
		_, cerr := c.CallSync("tools/call", []byte(`{"name":"greet","arguments":{}}`), CallOptions{Trace: tc})
		require.Nil(t, errOrNil(cerr))
		polls := append(s.requests("tasks/get"), s.requests("tasks/update")...)
		require.NotEmpty(t, s.requests("tasks/update"))
		for _, m := range append(polls, s.requests("tools/call")...) {
			require.Equal(t, tc, traceOf(t, m), "%s", m.Method)
			require.Contains(t, meta(t, m), "io.modelcontextprotocol/protocolVersion")
		}
	})
}

// A server request that carries trace context hands it to the host's
// handler as "trace"; a malformed one is not handed on.
func TestTraceContextOfServerRequests(t *testing.T) {
	cases := []struct {
		name string
		meta map[string]any
		want string
	}{
		{"valid", map[string]any{"traceparent": testTraceParent, "tracestate": "a=b"}, `{"traceparent":"` + testTraceParent + `","tracestate":"a=b"}`},
		{"malformed", map[string]any{"traceparent": "garbage"}, ""},
		{"none", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) { o.Handlers.Roots = true })
			var p map[string]any
			if tc.meta != nil {
				p = map[string]any{"_meta": tc.meta}
			}
			id := r.request("roots/list", p)
			h := r.nextHost(t)
			var payload map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(h.payload, &payload))
			if tc.want == "" {
				require.NotContains(t, payload, "trace")
			} else {
				require.JSONEq(t, tc.want, string(payload["trace"]))
			}
			require.Nil(t, errOrNil(r.c.Respond(h.id, StatusOK, []byte(`{"roots":[]}`))))
			r.answer(t, id)
		})
	}
}

func TestMergeTraceMembers(t *testing.T) {
	tc := tracecontext.Context{TraceParent: testTraceParent}
	cases := []struct{ name, in, want string }{
		{"none", "", `{"traceparent":"` + testTraceParent + `"}`},
		{"empty object", " { } ", `{"traceparent":"` + testTraceParent + `"}`},
		{"members kept, trace wins", `{"a":1,"traceparent":"old"}`, `{"a":1,"traceparent":"old","traceparent":"` + testTraceParent + `"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, string(mergeTraceMembers([]byte(c.in), tc)))
		})
	}
}
