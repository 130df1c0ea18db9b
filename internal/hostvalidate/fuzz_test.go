package hostvalidate

import "testing"

// The checks read what a server (requests) and a host (answers) sent:
// whatever the text, they accept or refuse it with a message, and never
// panic.
func FuzzChecks(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`,
		`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"get","input":{}}]},{"role":"user","content":[{"type":"tool_result","toolUseId":"t1"}]}],"maxTokens":5,"tools":[{"name":"get","inputSchema":{}}],"toolChoice":{"mode":"auto"}}`,
		`{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x"}]},"default":["x"]}},"required":["a"]}}`,
		`{"mode":"url","message":"m","url":"https://x.example/a","elicitationId":"e1"}`,
		`{"action":"accept","content":{"a":["x"]}}`,
		`{"roots":[{"uri":"file:///tmp","name":"tmp"}]}`,
		`null`, ``, `[`,
	} {
		f.Add([]byte(s))
	}
	form, _ := ElicitationRequest([]byte(`{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0},"s":{"type":"string","format":"date","default":"2026-01-01"},"e":{"type":"string","enum":["a","b"]}},"required":["n"]}}`), true, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tools := range []bool{false, true} {
			if s, msg := SamplingRequest(data, tools); (s == nil) == (msg == "") {
				t.Fatalf("SamplingRequest(%q) gave neither or both a summary and a message", data)
			}
		}
		if e, msg := ElicitationRequest(data, true, true); e != nil {
			_, _ = e.Answer(data)
		} else if msg == "" {
			t.Fatalf("ElicitationRequest(%q) refused without a message", data)
		}
		if out, msg := form.Answer(data); (out == nil) == (msg == "") {
			t.Fatalf("Answer(%q) gave neither or both a result and a message", data)
		}
		_ = SamplingAnswer(data)
		_ = RootsAnswer(data)
	})
}
