package hostvalidate

import (
	"testing"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/stretchr/testify/require"
)

func TestSamplingSummaryRedacts(t *testing.T) {
	raw := []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"ping"}}],"maxTokens":16,"modelPreferences":{"hints":[{"name":"claude"}]}}`)
	params, ok := decodeObject(raw)
	require.True(t, ok)
	s, err := summarize(raw, params)
	require.NoError(t, err)
	require.Equal(t, 1, s.MessageCount)
	require.EqualValues(t, 16, s.MaxTokens)
	require.Equal(t, 4, s.TextCharCount)
	require.Equal(t, []string{"user"}, s.Roles)
	require.Equal(t, map[string]int{"text": 1}, s.ContentKinds)
	require.Equal(t, []string{"claude"}, s.RequestedModels)
	require.Len(t, s.RequestHash, 64)
	require.Equal(t, s.RequestHash[:16], s.RequestHashShort)
	require.NotContains(t, string(jsonx.MustMarshal(s)), "ping")

	// The hash is over canonical JSON: key order and spacing do not matter.
	reordered := []byte(`{ "maxTokens": 16, "modelPreferences": {"hints":[{"name":"claude"}]}, "messages": [{"content": {"text":"ping","type":"text"}, "role":"user"}] }`)
	p2, _ := decodeObject(reordered)
	s2, err := summarize(reordered, p2)
	require.NoError(t, err)
	require.Equal(t, s.RequestHash, s2.RequestHash)
}

func TestSamplingRequest(t *testing.T) {
	const user = `{"role":"user","content":{"type":"text","text":"hi"}}`
	use := `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"get","input":{}}]}`
	result := `{"role":"user","content":[{"type":"tool_result","toolUseId":"t1"}]}`
	cases := []struct {
		name   string
		params string
		tools  bool
		want   string // "" for a valid request
	}{
		{"minimal", `{"messages":[` + user + `],"maxTokens":5}`, false, ""},
		{"empty params", ``, false, "messages array"},
		{"not an object", `[1]`, false, "must be a JSON object"},
		{"no maxTokens", `{"messages":[` + user + `]}`, false, "maxTokens"},
		{"bad role", `{"messages":[{"role":"system","content":{"type":"text","text":"x"}}],"maxTokens":5}`, false, "role"},
		{"stop sequences not strings", `{"messages":[` + user + `],"maxTokens":5,"stopSequences":[1]}`, false, "stopSequences"},
		{"tools undeclared", `{"messages":[` + user + `],"maxTokens":5,"tools":[]}`, false, "sampling.tools"},
		{"tool without schema", `{"messages":[` + user + `],"maxTokens":5,"tools":[{"name":"get"}]}`, true, "tools[0]"},
		{"bad tool choice", `{"messages":[` + user + `],"maxTokens":5,"toolChoice":{"mode":"always"}}`, true, "toolChoice.mode"},
		{"paired tool use", `{"messages":[` + use + `,` + result + `],"maxTokens":5}`, true, ""},
		{"unanswered tool use", `{"messages":[` + use + `],"maxTokens":5}`, true, "without a following tool_result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, msg := SamplingRequest([]byte(tc.params), tc.tools)
			if tc.want == "" {
				require.Empty(t, msg)
				require.NotNil(t, s)
				return
			}
			require.Nil(t, s)
			require.Contains(t, msg, tc.want)
		})
	}
}

func TestSamplingAnswer(t *testing.T) {
	cases := []struct{ name, answer, want string }{
		{"valid", `{"role":"assistant","content":{"type":"text","text":"x"},"model":"m","stopReason":"endTurn"}`, ""},
		{"not an object", `"x"`, "JSON object"},
		{"text block without text", `{"role":"assistant","content":{"type":"text"},"model":"m"}`, "text string"},
		{"no role", `{"content":{"type":"text","text":"x"},"model":"m"}`, "role"},
		{"no content", `{"role":"assistant","model":"m"}`, "needs content"},
		{"untyped block", `{"role":"assistant","content":[{"text":"x"}],"model":"m"}`, "need a type"},
		{"no model", `{"role":"assistant","content":{"type":"text","text":"x"}}`, "model"},
		{"bad stop reason", `{"role":"assistant","content":{"type":"text","text":"x"},"model":"m","stopReason":1}`, "stopReason"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := SamplingAnswer([]byte(tc.answer))
			if tc.want == "" {
				require.Empty(t, msg)
				return
			}
			require.Contains(t, msg, tc.want)
		})
	}
}

func TestElicitationRequest(t *testing.T) {
	schema := `{"type":"object","properties":{"age":{"type":"integer","minimum":0},"name":{"type":"string","default":"anon"}},"required":["age"]}`
	cases := []struct {
		name      string
		params    string
		form, url bool
		mode      string // the mode of a valid request
		want      string // the message of a refused one
	}{
		{"form", `{"message":"m","requestedSchema":` + schema + `}`, true, false, "form", ""},
		{"url", `{"mode":"url","message":"m","url":"https://x.example/a","elicitationId":"e1"}`, false, true, "url", ""},
		{"not an object", `[]`, true, true, "", "must be a JSON object"},
		{"unknown mode", `{"mode":"voice","message":"m"}`, true, true, "", "must be \"form\" or \"url\""},
		{"undeclared form", `{"message":"m","requestedSchema":` + schema + `}`, false, true, "", `mode "form"`},
		{"no message", `{"requestedSchema":` + schema + `}`, true, false, "", "message"},
		{"schema not an object type", `{"message":"m","requestedSchema":{"type":"array"}}`, true, false, "", `type must be "object"`},
		{"required names nothing", `{"message":"m","requestedSchema":{"type":"object","properties":{},"required":["x"]}}`, true, false, "", "required names"},
		{"no elicitationId", `{"mode":"url","message":"m","url":"https://x.example/a"}`, false, true, "", "elicitationId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, msg := ElicitationRequest([]byte(tc.params), tc.form, tc.url)
			if tc.want == "" {
				require.Empty(t, msg)
				require.Equal(t, tc.mode, e.Mode)
				return
			}
			require.Nil(t, e)
			require.Contains(t, msg, tc.want)
		})
	}
}

func TestElicitationAnswer(t *testing.T) {
	schema := `{"type":"object","properties":{"age":{"type":"integer","minimum":0},"name":{"type":"string","default":"anon"},"when":{"type":"string","format":"date"}},"required":["age"]}`
	form, msg := ElicitationRequest([]byte(`{"message":"m","requestedSchema":`+schema+`}`), true, false)
	require.Empty(t, msg)
	url, msg := ElicitationRequest([]byte(`{"mode":"url","message":"m","url":"https://x.example/a","elicitationId":"e1"}`), false, true)
	require.Empty(t, msg)
	cases := []struct {
		name   string
		e      *Elicitation
		answer string
		want   string // the result the server gets
		bad    string // or the message of a refused answer
	}{
		{"default filled in", form, `{"action":"accept","content":{"age":3}}`, `{"action":"accept","content":{"age":3,"name":"anon"}}`, ""},
		{"decline drops content", form, `{"action":"decline","content":{"age":3}}`, `{"action":"decline"}`, ""},
		{"url accept has no content", url, `{"action":"accept","content":{"x":1}}`, `{"action":"accept"}`, ""},
		{"meta kept", form, `{"action":"cancel","_meta":{"k":1}}`, `{"action":"cancel","_meta":{"k":1}}`, ""},
		{"missing required", form, `{"action":"accept","content":{}}`, "", "content.age is required"},
		{"not in schema", form, `{"action":"accept","content":{"age":1,"zip":"x"}}`, "", "content.zip is not in the requested schema"},
		{"bad date", form, `{"action":"accept","content":{"age":1,"when":"May"}}`, "", "content.when is not a date"},
		{"bad action", form, `{"action":"maybe"}`, "", "action must be"},
		{"content not an object", form, `{"action":"accept","content":[]}`, "", "content must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, msg := tc.e.Answer([]byte(tc.answer))
			if tc.bad != "" {
				require.Nil(t, out)
				require.Contains(t, msg, tc.bad)
				return
			}
			require.Empty(t, msg)
			require.JSONEq(t, tc.want, string(out))
		})
	}
}

func TestRootsAnswer(t *testing.T) {
	cases := []struct{ name, answer, want string }{
		{"file roots", `{"roots":[{"uri":"file:///tmp","name":"tmp"}]}`, ""},
		{"empty", `{"roots":[]}`, ""},
		{"not file", `{"roots":[{"uri":"https://x.example"}]}`, "roots[0].uri must be a file:// URI"},
		{"name not a string", `{"roots":[{"uri":"file:///a","name":1}]}`, "roots[0].name must be a string"},
		{"missing", `{}`, "a roots answer must be"},
		{"null", `null`, "a roots answer must be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := RootsAnswer([]byte(tc.answer))
			if tc.want == "" {
				require.Empty(t, msg)
				return
			}
			require.Contains(t, msg, tc.want)
		})
	}
}
