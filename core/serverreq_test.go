package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/hostvalidate"
	"github.com/stretchr/testify/require"
)

// hostCall is one app request as the host saw it.
type hostCall struct {
	id      uint64
	kind    string
	payload []byte
}

// hostRig is a ready client whose app requests go to a channel, so a test
// answers them (or not) as it likes.
type hostRig struct {
	s     *fakeServer
	c     *Client
	calls chan hostCall
	ev    *events
}

func newHostRig(t *testing.T, tweak func(*Options)) *hostRig {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	opts := testOptions()
	tweak(&opts)
	tr, peer := s.pairForTest()
	c := New(opts, tr)
	s.peer = peer
	go s.serve()
	t.Cleanup(func() { c.Free(); close(s.stop); <-s.done })
	r := &hostRig{s: s, c: c, calls: make(chan hostCall, 64)}
	r.ev = recordEvents(c)
	require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) {
		r.calls <- hostCall{id, kind, payload}
	}, nil)))
	require.Nil(t, errOrNil(c.Connect()))
	require.Nil(t, errOrNil(c.WaitReady(3*time.Second)))
	return r
}

var nextServerID = struct {
	sync.Mutex
	n int
}{}

// request sends a server request and returns its id.
func (r *hostRig) request(method string, params any) string {
	nextServerID.Lock()
	nextServerID.n++
	id := fmt.Sprintf(`"s%d"`, nextServerID.n)
	nextServerID.Unlock()
	r.s.write(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	return id
}

// answer waits for the client's response to server request id.
func (r *hostRig) answer(t *testing.T, id string) wireMsg {
	m, ok := r.s.waitFor(func(m wireMsg) bool { return string(m.ID) == id && m.Method == "" })
	require.True(t, ok, "no response to %s", id)
	return m
}

func (r *hostRig) nextHost(t *testing.T) hostCall {
	select {
	case h := <-r.calls:
		return h
	case <-time.After(3 * time.Second):
		t.Fatal("the host was not asked")
		return hostCall{}
	}
}

func (r *hostRig) noHost(t *testing.T) {
	select {
	case h := <-r.calls:
		t.Fatalf("the host was asked unexpectedly: %s %s", h.kind, h.payload)
	case <-time.After(30 * time.Millisecond):
	}
}

const secretPrompt = "the launch codes are 0000"

func sampleParams(maxTokens int, models ...string) map[string]any {
	hints := []any{}
	for _, m := range models {
		hints = append(hints, map[string]any{"name": m})
	}
	return map[string]any{
		"messages":         []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": secretPrompt}}},
		"maxTokens":        maxTokens,
		"modelPreferences": map[string]any{"hints": hints},
		"systemPrompt":     "be brief",
	}
}

const goodSample = `{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m1","stopReason":"endTurn"}`

func errorData(t *testing.T, m wireMsg) (code int64, data map[string]any) {
	var e struct {
		Code int64          `json:"code"`
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(m.Error, &e), string(m.Error))
	return e.Code, e.Data
}

func TestSamplingWithoutPolicyDelegates(t *testing.T) {
	r := newHostRig(t, func(o *Options) { o.Handlers.Sampling = true })
	init, _ := r.s.waitFor(func(m wireMsg) bool { return m.Method == "initialize" })
	require.Contains(t, string(init.Params), `"sampling":{}`)

	id := r.request("sampling/createMessage", sampleParams(16))
	h := r.nextHost(t)
	require.Equal(t, "sampling", h.kind)
	require.Contains(t, string(h.payload), secretPrompt, "the delegate sees the raw request")
	require.Contains(t, string(h.payload), `"summary":`)
	require.Nil(t, errOrNil(r.c.Respond(h.id, StatusOK, []byte(goodSample))))
	m := r.answer(t, id)
	require.JSONEq(t, goodSample, string(m.Result))
	err := r.c.Respond(h.id, StatusOK, []byte(goodSample))
	require.NotNil(t, err)
	require.Equal(t, StatusNotFound, err.Status, "a delegate answering twice is refused")
}

func TestSamplingInvalidDelegateResult(t *testing.T) {
	cases := []struct{ name, answer string }{
		{"no model", `{"role":"assistant","content":{"type":"text","text":"x"}}`},
		{"no content", `{"role":"assistant","model":"m"}`},
		{"bad role", `{"role":"system","content":{"type":"text","text":"x"},"model":"m"}`},
		{"untyped block", `{"role":"assistant","content":{"text":"x"},"model":"m"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) { o.Handlers.Sampling = true })
			id := r.request("sampling/createMessage", sampleParams(16))
			h := r.nextHost(t)
			err := r.c.Respond(h.id, StatusOK, []byte(tc.answer))
			require.NotNil(t, err)
			require.Equal(t, StatusInvalidArgument, err.Status)
			code, _ := errorData(t, r.answer(t, id))
			require.EqualValues(t, -32603, code)
			_, ok := r.ev.wait("log")
			require.True(t, ok, "the host hears about its invalid answer")
		})
	}
}

func TestSamplingMalformedParams(t *testing.T) {
	text := map[string]any{"type": "text", "text": "hi"}
	user := func(content any) map[string]any { return map[string]any{"role": "user", "content": content} }
	cases := []struct {
		name   string
		params any
		want   string
	}{
		{"not an object", []int{1}, "must be a JSON object"},
		{"no messages", map[string]any{"maxTokens": 5}, "messages array"},
		{"message not an object", map[string]any{"messages": []any{"hi"}, "maxTokens": 5}, "must be an object"},
		{"bad role", map[string]any{"messages": []any{map[string]any{"role": "system", "content": text}}, "maxTokens": 5}, "role"},
		{"no maxTokens", map[string]any{"messages": []any{user(text)}}, "maxTokens"},
		{"negative maxTokens", map[string]any{"messages": []any{user(text)}, "maxTokens": -1}, "maxTokens"},
		{"hints not an array", map[string]any{"messages": []any{user(text)}, "maxTokens": 5, "modelPreferences": map[string]any{"hints": "x"}}, "hints"},
		{"hint not an object", map[string]any{"messages": []any{user(text)}, "maxTokens": 5, "modelPreferences": map[string]any{"hints": []any{1}}}, "hints"},
		{"priority out of range", map[string]any{"messages": []any{user(text)}, "maxTokens": 5, "modelPreferences": map[string]any{"costPriority": 2}}, "costPriority"},
		{"bad includeContext", map[string]any{"messages": []any{user(text)}, "maxTokens": 5, "includeContext": "everything"}, "includeContext"},
		{"text without text", map[string]any{"messages": []any{user(map[string]any{"type": "text"})}, "maxTokens": 5}, "text block"},
		{"tools undeclared", map[string]any{"messages": []any{user(text)}, "maxTokens": 5, "tools": []any{}}, "sampling.tools"},
		{"tool_use undeclared", map[string]any{"messages": []any{user(map[string]any{"type": "tool_use", "id": "1", "name": "x", "input": map[string]any{}})}, "maxTokens": 5}, "sampling.tools"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) { o.Handlers.Sampling = true })
			id := r.request("sampling/createMessage", tc.params)
			m := r.answer(t, id)
			var e rpcError
			require.NoError(t, json.Unmarshal(m.Error, &e))
			require.EqualValues(t, -32602, e.Code)
			require.Contains(t, e.Message, tc.want)
			r.noHost(t)
		})
	}
}

func TestSamplingWithTools(t *testing.T) {
	use := map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "get", "input": map[string]any{}}}}
	result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "toolUseId": "t1", "content": []any{map[string]any{"type": "text", "text": "42"}}}}}
	mixed := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "toolUseId": "t1"}, map[string]any{"type": "text", "text": "x"}}}
	wrong := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "toolUseId": "t9"}}}
	tools := []any{map[string]any{"name": "get", "inputSchema": map[string]any{"type": "object"}}}
	cases := []struct {
		name string
		msgs []any
		ok   bool
		want string
	}{
		{"paired", []any{use, result}, true, ""},
		{"unanswered tool_use", []any{use}, false, "without a following tool_result"},
		{"mixed tool_result", []any{use, mixed}, false, "mixes tool_result"},
		{"wrong id", []any{use, wrong}, false, "no matching tool_result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) { o.Handlers.Sampling, o.Handlers.SamplingTools = true, true })
			id := r.request("sampling/createMessage", map[string]any{"messages": tc.msgs, "maxTokens": 10, "tools": tools, "toolChoice": map[string]any{"mode": "auto"}})
			if !tc.ok {
				var e rpcError
				require.NoError(t, json.Unmarshal(r.answer(t, id).Error, &e))
				require.EqualValues(t, -32602, e.Code)
				require.Contains(t, e.Message, tc.want)
				return
			}
			h := r.nextHost(t)
			require.Contains(t, string(h.payload), `"has_tools":true`)
			require.Nil(t, errOrNil(r.c.Respond(h.id, StatusOK, []byte(`{"role":"assistant","content":[{"type":"text","text":"the answer is 42"}],"model":"m","stopReason":"endTurn"}`))))
			require.Empty(t, r.answer(t, id).Error)
		})
	}
	r := newHostRig(t, func(o *Options) { o.Handlers.Sampling, o.Handlers.SamplingTools = true, true })
	init, _ := r.s.waitFor(func(m wireMsg) bool { return m.Method == "initialize" })
	require.Contains(t, string(init.Params), `"sampling":{"tools":{}}`)
}

func TestSamplingPolicy(t *testing.T) {
	policy := func(mode string) func(*Options) {
		return func(o *Options) {
			o.SamplingPolicy = &SamplingPolicy{Mode: mode, MaxTokens: 64, AllowedModels: []string{"m1", "m2"}, MaxMessages: 1, MaxTextChars: 40}
		}
	}
	bounds := []struct {
		name   string
		params map[string]any
		reason string
	}{
		{"max tokens", sampleParams(65), denyMaxTokensExceeded},
		{"model not allowed", sampleParams(16, "m1", "evil"), denyModelNotAllowed},
		{"too many messages", func() map[string]any {
			p := sampleParams(16)
			p["messages"] = append(p["messages"].([]any), p["messages"].([]any)[0])
			return p
		}(), denyTooManyMessages},
		{"text too long", func() map[string]any {
			p := sampleParams(16)
			p["systemPrompt"] = strings.Repeat("x", 40)
			return p
		}(), denyTextTooLong},
	}
	for _, tc := range bounds {
		t.Run("bound "+tc.name, func(t *testing.T) {
			r := newHostRig(t, policy(PolicyReviewedModel))
			id := r.request("sampling/createMessage", tc.params)
			m := r.answer(t, id)
			code, data := errorData(t, m)
			require.EqualValues(t, -1, code)
			require.Equal(t, tc.reason, data["reason"])
			require.NotContains(t, string(m.Error), secretPrompt)
			r.noHost(t) // a request that fails a bound never reaches the reviewer
			ev, ok := r.ev.wait("sampling_denied")
			require.True(t, ok)
			require.Contains(t, string(ev), tc.reason)
		})
	}
	t.Run("deny mode advertises and refuses", func(t *testing.T) {
		r := newHostRig(t, policy(PolicyDeny))
		init, _ := r.s.waitFor(func(m wireMsg) bool { return m.Method == "initialize" })
		require.Contains(t, string(init.Params), `"sampling":{}`)
		id := r.request("sampling/createMessage", sampleParams(16, "m1"))
		_, data := errorData(t, r.answer(t, id))
		require.Equal(t, denySamplingDisabled, data["reason"])
		r.noHost(t)
	})
	t.Run("model mode skips review", func(t *testing.T) {
		r := newHostRig(t, policy(PolicyModel))
		id := r.request("sampling/createMessage", sampleParams(16, "m1"))
		h := r.nextHost(t)
		require.Equal(t, "sampling", h.kind)
		require.Nil(t, errOrNil(r.c.Respond(h.id, StatusOK, []byte(goodSample))))
		require.Empty(t, r.answer(t, id).Error)
	})
	t.Run("reviewer sees the summary only, then the delegate the raw request", func(t *testing.T) {
		r := newHostRig(t, policy(PolicyReviewedModel))
		id := r.request("sampling/createMessage", sampleParams(16, "m1"))
		review := r.nextHost(t)
		require.Equal(t, "review", review.kind)
		require.NotContains(t, string(review.payload), secretPrompt)
		require.NotContains(t, string(review.payload), "be brief")
		var rv struct {
			Summary hostvalidate.SamplingSummary `json:"summary"`
			Server  map[string]any               `json:"server"`
		}
		require.NoError(t, json.Unmarshal(review.payload, &rv))
		require.Equal(t, 1, rv.Summary.MessageCount)
		require.EqualValues(t, 16, rv.Summary.MaxTokens)
		require.Equal(t, "fake", rv.Server["name"], "approval metadata names the server")
		r.noHost(t) // the delegate waits for the review
		require.Nil(t, errOrNil(r.c.Respond(review.id, StatusOK, []byte(`{"approved":true}`))))
		delegate := r.nextHost(t)
		require.Equal(t, "sampling", delegate.kind)
		require.Contains(t, string(delegate.payload), secretPrompt)
		var dv struct {
			Summary hostvalidate.SamplingSummary `json:"summary"`
		}
		require.NoError(t, json.Unmarshal(delegate.payload, &dv))
		require.Equal(t, rv.Summary, dv.Summary, "reviewer and delegate see the same summary")
		require.Nil(t, errOrNil(r.c.Respond(delegate.id, StatusOK, []byte(goodSample))))
		require.JSONEq(t, goodSample, string(r.answer(t, id).Result))
	})
	t.Run("rejection hashes the reason and never calls the delegate", func(t *testing.T) {
		r := newHostRig(t, policy(PolicyReviewedModel))
		id := r.request("sampling/createMessage", sampleParams(16))
		review := r.nextHost(t)
		require.Nil(t, errOrNil(r.c.Respond(review.id, StatusOK, []byte(`{"approved":false,"reason":"operator said the prompt looks like exfiltration"}`))))
		m := r.answer(t, id)
		_, data := errorData(t, m)
		require.Equal(t, denyReviewRejected, data["reason"])
		require.Len(t, data["detail_hash"], 16)
		require.NotContains(t, string(m.Error), "exfiltration")
		ev, _ := r.ev.wait("sampling_denied")
		require.NotContains(t, string(ev), "exfiltration")
		require.NotContains(t, string(ev), secretPrompt)
		r.noHost(t)
	})
	t.Run("a reviewer that never answers", func(t *testing.T) {
		r := newHostRig(t, func(o *Options) {
			policy(PolicyReviewedModel)(o)
			o.Timeouts.AppRequest = 80 * time.Millisecond
		})
		id := r.request("sampling/createMessage", sampleParams(16))
		review := r.nextHost(t)
		_, data := errorData(t, r.answer(t, id))
		require.Equal(t, denyReviewTimeout, data["reason"])
		err := r.c.Respond(review.id, StatusOK, []byte(`{"approved":true}`))
		require.NotNil(t, err)
		require.Equal(t, StatusNotFound, err.Status)
		r.noHost(t)
	})
	t.Run("an invalid review answer", func(t *testing.T) {
		r := newHostRig(t, policy(PolicyReviewedModel))
		id := r.request("sampling/createMessage", sampleParams(16))
		review := r.nextHost(t)
		err := r.c.Respond(review.id, StatusOK, []byte(`{"ok":"sure"}`))
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidArgument, err.Status)
		_, data := errorData(t, r.answer(t, id))
		require.Equal(t, denyInvalidReviewReply, data["reason"])
	})
	t.Run("concurrent requests", func(t *testing.T) {
		r := newHostRig(t, policy(PolicyModel))
		const n = 20
		ids := make([]string, n)
		for i := range ids {
			ids[i] = r.request("sampling/createMessage", sampleParams(16))
		}
		for i := 0; i < n; i++ {
			h := r.nextHost(t)
			go func(h hostCall) { _ = r.c.Respond(h.id, StatusOK, []byte(goodSample)) }(h)
		}
		for _, id := range ids {
			require.Empty(t, r.answer(t, id).Error)
		}
	})
	t.Run("nothing anywhere carries the prompt text", func(t *testing.T) {
		r := newHostRig(t, policy(PolicyReviewedModel))
		for _, p := range []map[string]any{sampleParams(100), sampleParams(16, "evil"), sampleParams(16)} {
			r.request("sampling/createMessage", p)
		}
		review := r.nextHost(t)
		_ = r.c.Respond(review.id, StatusOK, []byte(`{"approved":false,"reason":"`+secretPrompt+`"}`))
		time.Sleep(50 * time.Millisecond)
		r.ev.mu.Lock()
		defer r.ev.mu.Unlock()
		for i, d := range r.ev.data {
			require.NotContains(t, string(d), secretPrompt, "event %s", r.ev.kinds[i])
		}
		r.s.mu.Lock()
		defer r.s.mu.Unlock()
		for _, m := range r.s.received {
			require.NotContains(t, string(m.Error), secretPrompt)
		}
	})
}

func TestElicitation(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":   map[string]any{"type": "string", "default": "anon", "maxLength": 10},
			"age":    map[string]any{"type": "integer", "minimum": 0},
			"color":  map[string]any{"type": "string", "enum": []any{"red", "blue"}, "enumNames": []any{"Red", "Blue"}},
			"size":   map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "s", "title": "Small"}, map[string]any{"const": "l", "title": "Large"}}, "default": "s"},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"enum": []any{"a", "b", "c"}}, "maxItems": 2},
			"flavor": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"const": "x", "title": "X"}}}},
			"ok":     map[string]any{"type": "boolean", "default": true},
			"email":  map[string]any{"type": "string", "format": "email", "pattern": "^.*$"},
		},
		"required": []any{"name", "age"},
	}
	form := func(content string) []byte { return []byte(`{"action":"accept","content":` + content + `}`) }
	cases := []struct {
		name    string
		answer  []byte
		wantErr string
		want    map[string]any
	}{
		{"defaults fill what the host left out", form(`{"age":30}`), "", map[string]any{"name": "anon", "age": float64(30), "size": "s", "ok": true}},
		{"enum forms", form(`{"age":1,"color":"red","size":"l","tags":["a","c"],"flavor":["x"],"email":"a@b.example"}`), "", map[string]any{"name": "anon", "age": float64(1), "color": "red", "size": "l", "tags": []any{"a", "c"}, "flavor": []any{"x"}, "ok": true, "email": "a@b.example"}},
		{"value outside the enum", form(`{"age":1,"color":"green"}`), "color", nil},
		{"too many items", form(`{"age":1,"tags":["a","b","c"]}`), "tags", nil},
		{"wrong type", form(`{"age":"old"}`), "age", nil},
		{"fraction for an integer", form(`{"age":1.5}`), "age", nil},
		{"below minimum", form(`{"age":-1}`), "age", nil},
		{"too long", form(`{"age":1,"name":"abcdefghijk"}`), "name", nil},
		{"missing required", form(`{}`), "age", nil},
		{"unknown field", form(`{"age":1,"zip":"x"}`), "zip", nil},
		{"bad email", form(`{"age":1,"email":"nope"}`), "email", nil},
		{"bad action", []byte(`{"action":"maybe"}`), "action", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) { o.Handlers.Elicitation, o.Handlers.ElicitForm = true, true })
			id := r.request("elicitation/create", map[string]any{"message": "who are you?", "requestedSchema": schema})
			h := r.nextHost(t)
			require.Equal(t, "elicitation", h.kind)
			require.Contains(t, string(h.payload), `"mode":"form"`)
			err := r.c.Respond(h.id, StatusOK, tc.answer)
			m := r.answer(t, id)
			if tc.wantErr != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.wantErr)
				require.Contains(t, string(m.Error), "-32603")
				return
			}
			require.Nil(t, errOrNil(err))
			var res struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			require.NoError(t, json.Unmarshal(m.Result, &res))
			require.Equal(t, "accept", res.Action)
			require.Equal(t, tc.want, res.Content)
		})
	}
	t.Run("decline drops content", func(t *testing.T) {
		r := newHostRig(t, func(o *Options) { o.Handlers.Elicitation, o.Handlers.ElicitForm = true, true })
		id := r.request("elicitation/create", map[string]any{"message": "?", "requestedSchema": schema})
		h := r.nextHost(t)
		require.Nil(t, errOrNil(r.c.Respond(h.id, StatusOK, []byte(`{"action":"decline","content":{"x":1}}`))))
		require.JSONEq(t, `{"action":"decline"}`, string(r.answer(t, id).Result))
	})
	requests := []struct {
		name   string
		form   bool
		url    bool
		params map[string]any
		want   string
	}{
		{"undeclared url mode", true, false, map[string]any{"mode": "url", "message": "m", "url": "https://x.example/a", "elicitationId": "e1"}, `mode \"url\"`},
		{"undeclared form mode", false, true, map[string]any{"message": "m", "requestedSchema": schema}, `mode \"form\"`},
		{"nested object", true, false, map[string]any{"message": "m", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "object"}}}}, "nested objects"},
		{"no message", true, false, map[string]any{"requestedSchema": schema}, "message"},
		{"url not absolute", false, true, map[string]any{"mode": "url", "message": "m", "url": "/relative", "elicitationId": "e1"}, "absolute url"},
		{"bad default", true, false, map[string]any{"message": "m", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer", "default": "x"}}}}, "default"},
	}
	for _, tc := range requests {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) {
				o.Handlers.Elicitation, o.Handlers.ElicitForm, o.Handlers.ElicitURL = true, tc.form, tc.url
			})
			id := r.request("elicitation/create", tc.params)
			m := r.answer(t, id)
			require.Contains(t, string(m.Error), "-32602")
			require.Contains(t, string(m.Error), tc.want)
			r.noHost(t)
		})
	}
	t.Run("url mode carries the url for consent", func(t *testing.T) {
		r := newHostRig(t, func(o *Options) { o.Handlers.Elicitation, o.Handlers.ElicitURL = true, true })
		init, _ := r.s.waitFor(func(m wireMsg) bool { return m.Method == "initialize" })
		require.Contains(t, string(init.Params), `"elicitation":{"url":{}}`)
		id := r.request("elicitation/create", map[string]any{"mode": "url", "message": "sign in", "url": "https://auth.example/start", "elicitationId": "e1"})
		h := r.nextHost(t)
		require.Contains(t, string(h.payload), "https://auth.example/start")
		require.Nil(t, errOrNil(r.c.Respond(h.id, StatusOK, []byte(`{"action":"accept","content":{"ignored":true}}`))))
		require.JSONEq(t, `{"action":"accept"}`, string(r.answer(t, id).Result))
	})
}

func TestRoots(t *testing.T) {
	cases := []struct {
		name   string
		answer string
		ok     bool
	}{
		{"file roots", `{"roots":[{"uri":"file:///tmp","name":"tmp"}]}`, true},
		{"empty", `{"roots":[]}`, true},
		{"not file", `{"roots":[{"uri":"https://x.example"}]}`, false},
		{"missing", `{}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newHostRig(t, func(o *Options) { o.Handlers.Roots = true })
			id := r.request("roots/list", nil)
			h := r.nextHost(t)
			err := r.c.Respond(h.id, StatusOK, []byte(tc.answer))
			m := r.answer(t, id)
			if tc.ok {
				require.Nil(t, errOrNil(err))
				require.JSONEq(t, tc.answer, string(m.Result))
				return
			}
			require.NotNil(t, err)
			require.Contains(t, string(m.Error), "-32603")
		})
	}
	t.Run("list_changed only when declared", func(t *testing.T) {
		r := newHostRig(t, func(o *Options) { o.Handlers.Roots = true })
		err := r.c.Notify("notifications/roots/list_changed", nil)
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidState, err.Status)

		r = newHostRig(t, func(o *Options) { o.Handlers.Roots, o.Handlers.RootsListChange = true, true })
		require.Nil(t, errOrNil(r.c.Notify("notifications/roots/list_changed", nil)))
		_, ok := r.s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/roots/list_changed" })
		require.True(t, ok)
	})
}
