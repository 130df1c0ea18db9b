package config

import (
	"strings"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/stretchr/testify/require"
)

func TestParseValid(t *testing.T) {
	p, err := Parse([]byte(`{
		"transport": {"type":"stdio","command":"srv","args":["-x"],"env":{"K":"V"},"env_inherit":"all","cwd":"/tmp","stderr":"merge"},
		"client_info": {"name":"host","version":"2.0","title":"Host"},
		"protocol": {"mode":"legacy","versions":["2024-11-05","2025-06-18"]},
		"timeouts": {"ready_ms":500,"call_ms":0,"max_total_ms":9000,"reset_timeout_on_progress":true,"app_request_ms":1000,"close_grace_ms":100},
		"limits": {"max_message_bytes":65536,"max_pages":7},
		"handlers": {"roots":{"list_changed":true},"sampling":{},"elicitation":{"url":true}},
		"result_format": "json"
	}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	o := p.Options
	require.Equal(t, core.ClientInfo{Name: "host", Version: "2.0", Title: "Host"}, o.ClientInfo)
	require.Equal(t, []string{"2025-06-18", "2024-11-05"}, o.Versions, "newest first")
	require.Equal(t, 500*time.Millisecond, o.Timeouts.Ready)
	require.Zero(t, o.Timeouts.Call)
	require.True(t, o.Timeouts.ResetOnProgress)
	require.Equal(t, 65536, o.MaxMessageBytes)
	require.Equal(t, 7, o.MaxPages)
	require.Equal(t, core.Handlers{Roots: true, RootsListChange: true, Sampling: true, Elicitation: true, ElicitForm: true, ElicitURL: true}, o.Handlers)
	require.Equal(t, "stdio", p.Transport.Name())
}

func TestParseDefaults(t *testing.T) {
	p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"srv"}}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.Equal(t, core.DefaultOptions("1.2.3"), p.Options)
}

func TestParseErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		status core.Status
		want   string
	}{
		{"empty", ``, core.StatusInvalidArgument, "config: is empty"},
		{"not JSON", `{`, core.StatusInvalidArgument, "not valid JSON"},
		{"not an object", `[]`, core.StatusInvalidArgument, "config: must be a JSON object"},
		{"no transport", `{}`, core.StatusInvalidArgument, "config.transport: is required"},
		{"unknown top field", `{"transport":{"type":"stdio","command":"x"},"timeout":1}`, core.StatusInvalidArgument, "config.timeout: is not a known field"},
		{"typo in transport", `{"transport":{"type":"stdio","comand":"x"}}`, core.StatusInvalidArgument, "config.transport.comand: is not a known field"},
		{"missing command", `{"transport":{"type":"stdio"}}`, core.StatusInvalidArgument, "config.transport.command: is required"},
		{"unknown transport field", `{"transport":{"type":"stdio","command":"x","comand":"y"}}`, core.StatusInvalidArgument, "config.transport.comand: is not a known field"},
		{"empty command", `{"transport":{"type":"stdio","command":"  "}}`, core.StatusInvalidArgument, "config.transport.command"},
		{"bad type", `{"transport":{"type":"carrier-pigeon"}}`, core.StatusInvalidArgument, "config.transport.type: must be one of"},
		{"args not strings", `{"transport":{"type":"stdio","command":"x","args":[1]}}`, core.StatusInvalidArgument, "config.transport.args[0]: must be a string"},
		{"env not strings", `{"transport":{"type":"stdio","command":"x","env":{"A":1}}}`, core.StatusInvalidArgument, "config.transport.env.A: must be a string"},
		{"bad stderr", `{"transport":{"type":"stdio","command":"x","stderr":"tee"}}`, core.StatusInvalidArgument, "config.transport.stderr: must be one of"},
		{"negative timeout", `{"transport":{"type":"stdio","command":"x"},"timeouts":{"call_ms":-1}}`, core.StatusInvalidArgument, "config.timeouts.call_ms: must be between"},
		{"fractional timeout", `{"transport":{"type":"stdio","command":"x"},"timeouts":{"call_ms":1.5}}`, core.StatusInvalidArgument, "config.timeouts.call_ms: must be a whole number"},
		{"unknown version", `{"transport":{"type":"stdio","command":"x"},"protocol":{"versions":["2030-01-01"]}}`, core.StatusInvalidArgument, "config.protocol.versions[0]"},
		{"modern mode without a modern version", `{"transport":{"type":"stdio","command":"x"},"protocol":{"mode":"modern","versions":["2025-11-25"]}}`, core.StatusInvalidArgument, "config.protocol.versions"},
		{"legacy mode without a legacy version", `{"transport":{"type":"stdio","command":"x"},"protocol":{"mode":"legacy","versions":["2026-07-28"]}}`, core.StatusInvalidArgument, "config.protocol.versions"},
		{"unknown mode", `{"transport":{"type":"stdio","command":"x"},"protocol":{"mode":"newest"}}`, core.StatusInvalidArgument, "config.protocol.mode"},
		{"unknown result format", `{"transport":{"type":"stdio","command":"x"},"result_format":"xml"}`, core.StatusInvalidArgument, "config.result_format: must be one of \"json\""},
		{"removed result format", `{"transport":{"type":"stdio","command":"x"},"result_format":"etf"}`, core.StatusInvalidArgument, "config.result_format: must be \"json\" (the \"etf\" format was removed"},
		{"elicitation with no mode", `{"transport":{"type":"stdio","command":"x"},"handlers":{"elicitation":{"form":false}}}`, core.StatusInvalidArgument, "config.handlers.elicitation"},
		{"unknown handler", `{"transport":{"type":"stdio","command":"x"},"handlers":{"tasks":{}}}`, core.StatusInvalidArgument, "config.handlers.tasks: is not a known field"},
		{"tiny message limit", `{"transport":{"type":"stdio","command":"x"},"limits":{"max_message_bytes":10}}`, core.StatusInvalidArgument, "config.limits.max_message_bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), "1")
			require.NotNil(t, err)
			require.Equal(t, tc.status, err.Status, err.Message)
			require.Contains(t, err.Message, tc.want)
		})
	}
}

func TestErrorsNeverEchoValues(t *testing.T) {
	secret := "sk-live-do-not-print"
	for _, in := range []string{
		`{"transport":{"type":"stdio","command":"x","env":{"TOKEN":7}},"x":"` + secret + `"}`,
		`{"transport":{"type":"stdio","command":"x","stderr":"` + secret + `"}}`,
		`{"transport":{"type":"` + secret + `"}}`,
	} {
		_, err := Parse([]byte(in), "1")
		require.NotNil(t, err)
		require.False(t, strings.Contains(err.Message, secret), err.Message)
	}
}

func errOrNil(e *core.Error) error {
	if e == nil {
		return nil
	}
	return e
}

func TestParseSamplingPolicyAndCapabilities(t *testing.T) {
	p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"x"},
		"sampling_policy":{"mode":"reviewed_model","max_tokens":64,"allowed_models":["m1"],"max_messages":3,"max_text_chars":100},
		"handlers":{"sampling":{"tools":true}},
		"capabilities":{"experimental":{"vendor.x":{"on":true}}}}`), "1")
	require.Nil(t, errOrNil(err))
	require.Equal(t, &core.SamplingPolicy{Mode: "reviewed_model", MaxTokens: 64, AllowedModels: []string{"m1"}, MaxMessages: 3, MaxTextChars: 100}, p.Options.SamplingPolicy)
	require.True(t, p.Options.Handlers.SamplingTools)
	require.JSONEq(t, `{"vendor.x":{"on":true}}`, string(p.Options.Experimental))

	p, err = Parse([]byte(`{"transport":{"type":"stdio","command":"x"},"sampling_policy":{}}`), "1")
	require.Nil(t, errOrNil(err))
	require.Equal(t, &core.SamplingPolicy{Mode: "deny", MaxTokens: 1024}, p.Options.SamplingPolicy, "deny by default")

	for _, tc := range []struct{ in, want string }{
		{`"sampling_policy":{"mode":"yolo"}`, "config.sampling_policy.mode"},
		{`"sampling_policy":{"max_tokens":0}`, "config.sampling_policy.max_tokens"},
		{`"sampling_policy":{"reviewer":"x"}`, "config.sampling_policy.reviewer: is not a known field"},
		{`"capabilities":{"sampling":{}}`, "config.capabilities.sampling: cannot be declared statically"},
		{`"capabilities":{"roots":{}}`, "config.capabilities.roots: cannot be declared statically"},
		{`"capabilities":{"tasks":{}}`, "config.capabilities.tasks: is not a known field"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := Parse([]byte(`{"transport":{"type":"stdio","command":"x"},`+tc.in+`}`), "1")
			require.NotNil(t, err)
			require.Contains(t, err.Message, tc.want)
		})
	}
}

// client_info.send false leaves clientInfo out of 2026-07-28 requests; it
// must be a boolean.
func TestParseClientInfoSend(t *testing.T) {
	p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"srv"},"client_info":{"send":false}}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.True(t, p.Options.OmitClientInfo)
	require.Equal(t, "lemonmcp", p.Options.ClientInfo.Name, "the defaults stay for initialize")
	_, err = Parse([]byte(`{"transport":{"type":"stdio","command":"srv"},"client_info":{"send":"no"}}`), "1.2.3")
	require.NotNil(t, err)
	require.Contains(t, err.Message, "config.client_info.send")
}
