package config

import (
	"testing"

	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
	"github.com/stretchr/testify/require"
)

const testTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestCallOptionTrace(t *testing.T) {
	cases := []struct {
		name, opts string
		want       tracecontext.Context
		msg        string
	}{
		{"all parts", `{"trace":{"traceparent":"` + testTraceParent + `","tracestate":"a=b","baggage":"k=v"}}`, tracecontext.Context{TraceParent: testTraceParent, TraceState: "a=b", Baggage: "k=v"}, ""},
		{"malformed is the core's to drop", `{"trace":{"traceparent":"junk"}}`, tracecontext.Context{TraceParent: "junk"}, ""},
		{"not an object", `{"trace":"x"}`, tracecontext.Context{}, "options.trace must be a JSON object"},
		{"unknown member", `{"trace":{"span":"x"}}`, tracecontext.Context{}, "options.trace.span is not a known field"},
		{"not a string", `{"trace":{"baggage":1}}`, tracecontext.Context{}, "options.trace.baggage must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCallOptions([]byte(tc.opts))
			if tc.msg != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.msg)
				return
			}
			require.Nil(t, err)
			require.Equal(t, tc.want, got.Trace)
		})
	}
}

func TestConfigTrace(t *testing.T) {
	base := `{"transport":{"type":"stdio","command":"true"},"trace":`
	cases := []struct {
		name, trace string
		want        tracecontext.Context
		msg         string
	}{
		{"default trace context", `{"traceparent":"` + testTraceParent + `","baggage":"k=v"}`, tracecontext.Context{TraceParent: testTraceParent, Baggage: "k=v"}, ""},
		{"malformed traceparent", `{"traceparent":"00-x"}`, tracecontext.Context{}, "config.trace: traceparent is malformed"},
		{"unknown field", `{"span":"x"}`, tracecontext.Context{}, "config.trace.span"},
		{"not a string", `{"tracestate":5}`, tracecontext.Context{}, "config.trace.tracestate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(base+tc.trace+`}`), "test")
			if tc.msg != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.msg)
				return
			}
			require.Nil(t, err)
			require.Equal(t, tc.want, p.Options.Trace)
		})
	}
}
