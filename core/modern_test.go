package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every modern request carries protocolVersion, clientCapabilities (what
// the configured handlers can answer) and clientInfo in params._meta;
// host _meta and progress tokens merge in; nothing of a session is sent.
func TestModernMetaOnEveryRequest(t *testing.T) {
	s := newModernServer(t)
	s.handle("tools/list", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{"tools": []any{}}} })
	opts := modernOptions(ModeModern)
	opts.Handlers = Handlers{Roots: true, RootsListChange: true, Elicitation: true, ElicitForm: true, Sampling: true, SamplingTools: true}
	c, err := connectWith(t, s, opts, func(*Client, uint64, string, []byte) {})
	require.Nil(t, errOrNil(err))

	calls := []struct {
		name   string
		method string
		params string
		opts   CallOptions
		extra  map[string]string // _meta members beyond the era's
		keep   map[string]string // params members that must survive
	}{
		{name: "no params", method: "tools/list"},
		{name: "params", method: "tools/call", params: `{"name":"echo","arguments":{"text":"hi"}}`, keep: map[string]string{"name": `"echo"`}},
		{name: "host _meta merges", method: "tools/call", params: `{"name":"echo","arguments":{}}`, opts: CallOptions{Meta: []byte(`{"com.example/trace":"t1","io.modelcontextprotocol/logLevel":"debug"}`)}, extra: map[string]string{"com.example/trace": `"t1"`, "io.modelcontextprotocol/logLevel": `"debug"`}},
		{name: "progress token", method: "tools/call", params: `{"name":"echo","arguments":{}}`, opts: CallOptions{Progress: true}, extra: map[string]string{"progressToken": "*"}},
		{name: "host cannot override the version", method: "tools/list", opts: CallOptions{Meta: []byte(`{"io.modelcontextprotocol/protocolVersion":"1999-01-01"}`)}},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.requests(tc.method))
			var p []byte
			if tc.params != "" {
				p = []byte(tc.params)
			}
			_, cerr := c.CallSync(tc.method, p, tc.opts)
			require.Nil(t, errOrNil(cerr))
			sent := s.requests(tc.method)[before]
			m := meta(t, sent)
			require.Equal(t, `"`+modernVersion+`"`, string(m["io.modelcontextprotocol/protocolVersion"]))
			require.JSONEq(t, `{"roots":{},"elicitation":{"form":{}},"sampling":{"tools":{}}}`, string(m["io.modelcontextprotocol/clientCapabilities"]))
			require.JSONEq(t, `{"name":"lemonmcp","version":"test"}`, string(m["io.modelcontextprotocol/clientInfo"]))
			for k, v := range tc.extra {
				require.Contains(t, m, k)
				if v != "*" {
					require.Equal(t, v, string(m[k]))
				}
			}
			for k, v := range tc.keep {
				require.Equal(t, v, string(params(t, sent)[k]))
			}
		})
	}
	require.NotContains(t, s.methods(), "initialize")
	require.NotContains(t, s.methods(), "notifications/initialized")
}

// What the modern era removed is refused locally, naming the era, and
// never sent.
func TestModernRemovedMethodsRefused(t *testing.T) {
	s := newModernServer(t)
	opts := modernOptions(ModeAuto)
	opts.Handlers = Handlers{Roots: true, RootsListChange: true}
	c, err := connectWith(t, s, opts, func(*Client, uint64, string, []byte) {})
	require.Nil(t, errOrNil(err))
	for _, method := range []string{"ping", "logging/setLevel", "initialize", "subscriptions/listen"} {
		t.Run(method, func(t *testing.T) {
			_, cerr := c.Call(method, nil, CallOptions{}, func(uint64, Status, []byte) { t.Error("completion of a refused call") })
			require.NotNil(t, cerr)
			require.Equal(t, StatusUnsupported, cerr.Status)
			require.NotContains(t, s.methods()[1:], method)
		})
	}
	t.Run("notifications/roots/list_changed", func(t *testing.T) {
		nerr := c.Notify("notifications/roots/list_changed", nil)
		require.NotNil(t, nerr)
		require.Equal(t, StatusUnsupported, nerr.Status)
		require.Contains(t, nerr.Message, "2026-07-28")
	})
}

// A missing resultType is complete; input_required outside the three
// methods and unknown values are protocol errors.
func TestModernResultType(t *testing.T) {
	cases := []struct {
		name   string
		method string
		result map[string]any
		status Status
	}{
		{"missing", "tools/call", map[string]any{"content": []any{}}, StatusOK},
		{"complete", "tools/call", map[string]any{"resultType": "complete", "content": []any{}}, StatusOK},
		{"unknown", "tools/call", map[string]any{"resultType": "task", "taskId": "t"}, StatusProtocol},
		{"input_required on a list", "tools/list", map[string]any{"resultType": "input_required", "requestState": "s"}, StatusProtocol},
		{"input_required without anything", "tools/call", map[string]any{"resultType": "input_required"}, StatusProtocol},
		{"requestState not a string", "tools/call", map[string]any{"resultType": "input_required", "requestState": 7}, StatusProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newModernServer(t)
			result := tc.result
			s.handle(tc.method, func(*fakeServer, wireMsg) reply { return reply{result: result} })
			c, err := connectWith(t, s, modernOptions(ModeModern), nil)
			require.Nil(t, errOrNil(err))
			_, cerr := c.CallSync(tc.method, []byte(`{"name":"x"}`), CallOptions{})
			if tc.status == StatusOK {
				require.Nil(t, errOrNil(cerr))
				return
			}
			require.NotNil(t, cerr)
			require.Equal(t, tc.status, cerr.Status, cerr.Message)
			require.Len(t, s.requests(tc.method), 1, "no retry")
		})
	}
}

// A legacy server request reaching a modern client gets no response: the
// modern era has none.
func TestModernIgnoresServerRequests(t *testing.T) {
	s := newModernServer(t)
	opts := modernOptions(ModeModern)
	opts.Handlers = Handlers{Roots: true}
	var asked sync.WaitGroup
	c, err := connectWith(t, s, opts, func(*Client, uint64, string, []byte) { asked.Done() })
	require.Nil(t, errOrNil(err))
	ev := recordEvents(c)
	s.write(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "roots/list"})
	_, ok := ev.wait("log")
	require.True(t, ok)
	_, responded := s.waitFor(func(m wireMsg) bool { return m.Method == "" && string(m.ID) == "99" })
	require.False(t, responded)
}

// inputTool is a tools/call handler that asks for input once: the first
// request gets input_required with inputRequests (when given) and state
// (when not empty), the retry the inputs it got back.
func inputTool(inputs map[string]any, state string) handlerFunc {
	return func(s *fakeServer, m wireMsg) reply {
		p := params(s.t, m)
		if _, retried := p["inputResponses"]; retried || (inputs == nil && p["requestState"] != nil) {
			return reply{result: map[string]any{"content": []any{map[string]any{"type": "text", "text": string(p["inputResponses"])}}, "echoedState": json.RawMessage(orNull(p["requestState"]))}}
		}
		res := map[string]any{"resultType": "input_required"}
		if inputs != nil {
			res["inputRequests"] = inputs
		}
		if state != "" {
			res["requestState"] = state
		}
		return reply{result: res}
	}
}

func orNull(raw json.RawMessage) []byte {
	if raw == nil {
		return []byte("null")
	}
	return raw
}

var elicitInput = map[string]any{"method": "elicitation/create", "params": map[string]any{
	"message": "who?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "default": "anon"}}},
}}

var samplingInput = map[string]any{"method": "sampling/createMessage", "params": map[string]any{
	"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "capital of France?"}}}, "maxTokens": 50,
}}

// MRTR (spec 2026-07-28, SEP-2322): inputs go through the legacy host
// requests, the retry has a new id, the original params plus
// inputResponses, and the requestState exactly as sent (only when sent).
func TestMRTRRounds(t *testing.T) {
	cases := []struct {
		name      string
		inputs    map[string]any
		state     string
		handlers  Handlers
		policy    *SamplingPolicy
		answer    map[string]string // host kind -> answer ("" = error status)
		status    Status
		kinds     []string // app requests seen
		responses string   // inputResponses of the retry (JSON)
	}{
		{name: "elicitation with state", inputs: map[string]any{"who": elicitInput}, state: "opaque \"state\" <é>", handlers: Handlers{Elicitation: true, ElicitForm: true},
			answer: map[string]string{"elicitation": `{"action":"accept","content":{}}`}, kinds: []string{"elicitation"}, responses: `{"who":{"action":"accept","content":{"name":"anon"}}}`},
		{name: "no state given, none sent", inputs: map[string]any{"who": elicitInput}, handlers: Handlers{Elicitation: true, ElicitForm: true},
			answer: map[string]string{"elicitation": `{"action":"decline"}`}, kinds: []string{"elicitation"}, responses: `{"who":{"action":"decline"}}`},
		{name: "state only retries at once", state: "s1", kinds: nil},
		{name: "two inputs", inputs: map[string]any{"a": elicitInput, "b": map[string]any{"method": "roots/list"}}, handlers: Handlers{Elicitation: true, ElicitForm: true, Roots: true},
			answer: map[string]string{"elicitation": `{"action":"cancel"}`, "roots": `{"roots":[{"uri":"file:///w"}]}`}, kinds: []string{"elicitation", "roots"}, responses: `{"a":{"action":"cancel"},"b":{"roots":[{"uri":"file:///w"}]}}`},
		{name: "sampling through review and delegate", inputs: map[string]any{"q": samplingInput}, policy: &SamplingPolicy{Mode: PolicyReviewedModel, MaxTokens: 100},
			answer: map[string]string{"review": `{"approved":true}`, "sampling": `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`}, kinds: []string{"review", "sampling"},
			responses: `{"q":{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}}`},
		{name: "sampling denied by policy declines the round", inputs: map[string]any{"q": samplingInput}, policy: &SamplingPolicy{Mode: PolicyModel, MaxTokens: 10}, status: StatusPolicyDenied},
		{name: "host error ends the call with its status", inputs: map[string]any{"who": elicitInput}, handlers: Handlers{Elicitation: true, ElicitForm: true}, answer: map[string]string{"elicitation": ""}, kinds: []string{"elicitation"}, status: StatusCancelled},
		{name: "invalid host answer", inputs: map[string]any{"b": map[string]any{"method": "roots/list"}}, handlers: Handlers{Roots: true}, answer: map[string]string{"roots": `{"roots":[{"uri":"http://x"}]}`}, kinds: []string{"roots"}, status: StatusInvalidArgument},
		{name: "undeclared input", inputs: map[string]any{"b": map[string]any{"method": "roots/list"}}, status: StatusProtocol},
		{name: "invalid input request", inputs: map[string]any{"who": map[string]any{"method": "elicitation/create", "params": map[string]any{}}}, handlers: Handlers{Elicitation: true, ElicitForm: true}, status: StatusProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newModernServer(t)
			s.handle("tools/call", inputTool(tc.inputs, tc.state))
			opts := modernOptions(ModeModern)
			opts.Handlers = tc.handlers
			opts.SamplingPolicy = tc.policy
			var mu sync.Mutex
			var kinds []string
			var payloads []string
			host := func(c *Client, id uint64, kind string, payload []byte) {
				mu.Lock()
				kinds = append(kinds, kind)
				payloads = append(payloads, string(payload))
				mu.Unlock()
				if a := tc.answer[kind]; a != "" {
					c.Respond(id, StatusOK, []byte(a))
				} else {
					c.Respond(id, StatusCancelled, nil)
				}
			}
			if !opts.needsHostHandler() {
				host = nil
			}
			c, err := connectWith(t, s, opts, host)
			require.Nil(t, errOrNil(err))
			res, cerr := c.CallSync("tools/call", []byte(`{"name":"ask","arguments":{"x":1}}`), CallOptions{})
			mu.Lock()
			gotKinds := append([]string(nil), kinds...)
			gotPayloads := append([]string(nil), payloads...)
			mu.Unlock()
			sent := s.requests("tools/call")
			if tc.status != StatusOK {
				require.NotNil(t, cerr)
				require.Equal(t, tc.status, cerr.Status, cerr.Message)
				require.Len(t, sent, 1, "no retry after a declined round")
				return
			}
			require.Nil(t, errOrNil(cerr))
			require.ElementsMatch(t, tc.kinds, gotKinds)
			for i, p := range gotPayloads {
				require.Contains(t, p, `"call_id":`)
				require.Contains(t, p, `"input_key":`)
				if gotKinds[i] == "review" {
					require.NotContains(t, p, "capital of France", "a review never sees the text")
				}
			}
			require.Len(t, sent, 2)
			require.NotEqual(t, string(sent[0].ID), string(sent[1].ID), "the retry has a new id")
			first, retry := params(t, sent[0]), params(t, sent[1])
			require.Equal(t, string(first["name"]), string(retry["name"]))
			require.JSONEq(t, string(first["arguments"]), string(retry["arguments"]))
			require.Contains(t, retry, "_meta")
			if tc.state == "" {
				require.NotContains(t, retry, "requestState")
			} else {
				var got string
				require.NoError(t, json.Unmarshal(retry["requestState"], &got))
				require.Equal(t, tc.state, got)
			}
			if tc.responses == "" {
				require.NotContains(t, retry, "inputResponses")
			} else {
				require.JSONEq(t, tc.responses, string(retry["inputResponses"]))
			}
			require.NotContains(t, string(res), `"resultType":"input_required"`)
		})
	}
}

// Parallel calls each keep their own inputs and state.
func TestMRTRIsolatesParallelCalls(t *testing.T) {
	s := newModernServer(t)
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		p := params(s.t, m)
		var args struct {
			N int `json:"n"`
		}
		_ = json.Unmarshal(p["arguments"], &args)
		if st, ok := p["requestState"]; ok {
			return reply{result: map[string]any{"content": []any{}, "state": json.RawMessage(st), "n": args.N}}
		}
		return reply{result: map[string]any{"resultType": "input_required", "requestState": fmt.Sprintf("state-%d", args.N)}}
	})
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	const n = 16
	var wg sync.WaitGroup
	results := make([]string, n)
	errs := make([]*Error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, cerr := c.CallSync("tools/call", []byte(fmt.Sprintf(`{"name":"t","arguments":{"n":%d}}`, i)), CallOptions{})
			results[i], errs[i] = string(res), cerr
		}(i)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		require.Nil(t, errOrNil(errs[i]))
		require.Contains(t, results[i], fmt.Sprintf(`"state":"state-%d"`, i))
	}
	ids := map[string]bool{}
	for _, m := range s.requests("tools/call") {
		require.False(t, ids[string(m.ID)], "ids are never reused")
		ids[string(m.ID)] = true
	}
	require.Len(t, ids, 2*n)
}

// A server that keeps asking gets a protocol error after the bound; the
// call's timeout covers every round.
func TestMRTRBounds(t *testing.T) {
	t.Run("rounds", func(t *testing.T) {
		s := newModernServer(t)
		s.handle("tools/call", func(*fakeServer, wireMsg) reply {
			return reply{result: map[string]any{"resultType": "input_required", "requestState": "again"}}
		})
		c, err := connectWith(t, s, modernOptions(ModeModern), nil)
		require.Nil(t, errOrNil(err))
		_, cerr := c.CallSync("tools/call", []byte(`{"name":"t"}`), CallOptions{})
		require.NotNil(t, cerr)
		require.Equal(t, StatusProtocol, cerr.Status)
		require.Len(t, s.requests("tools/call"), maxInputRounds+1)
	})
	t.Run("timeout covers the host's answer", func(t *testing.T) {
		s := newModernServer(t)
		s.handle("tools/call", inputTool(map[string]any{"who": elicitInput}, ""))
		opts := modernOptions(ModeModern)
		opts.Handlers = Handlers{Elicitation: true, ElicitForm: true}
		opts.Timeouts.Call = 0 // no default: only the call's own timeout can end it
		asked := make(chan uint64, 1)
		c, err := connectWith(t, s, opts, func(_ *Client, id uint64, _ string, _ []byte) { asked <- id })
		require.Nil(t, errOrNil(err))
		done := make(chan *Error, 1)
		go func() {
			_, cerr := c.CallSync("tools/call", []byte(`{"name":"t"}`), CallOptions{Timeout: 300 * time.Millisecond, TimeoutSet: true})
			done <- cerr
		}()
		var id uint64
		select {
		case id = <-asked:
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the host was not asked")
		}
		// The host answers only once the call has ended: a call whose
		// timeout stopped while the host was asked would never end, so the
		// wait below is not a time limit.
		var cerr *Error
		select {
		case cerr = <-done:
		case <-time.After(10 * time.Second):
			c.Respond(id, StatusOK, []byte(`{"action":"decline"}`))
			require.FailNow(t, "the call waited for the host's answer")
		}
		require.NotNil(t, cerr)
		require.Equal(t, StatusTimeout, cerr.Status)
		require.Equal(t, "no response to tools/call within 300 ms", cerr.Message)
		rerr := c.Respond(id, StatusOK, []byte(`{"action":"decline"}`))
		require.NotNil(t, rerr, "the app request went with its call")
		require.Equal(t, StatusNotFound, rerr.Status)
		require.Len(t, s.requests("tools/call"), 1)
		_, cancelled := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/cancelled" })
		require.False(t, cancelled, "no request was outstanding while the host was asked")
	})
}

// stdio-like transports cancel a modern request with notifications/cancelled.
func TestModernCancelOverStream(t *testing.T) {
	s := newModernServer(t)
	s.handle("tools/call", func(*fakeServer, wireMsg) reply { return reply{none: true} })
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	id, ch := asyncCall(t, c, "tools/call", `{"name":"slow"}`, CallOptions{})
	call, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tools/call" })
	require.True(t, ok)
	require.Nil(t, errOrNil(c.Cancel(id)))
	require.Equal(t, StatusCancelled, waitCompletion(t, ch).status)
	n, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/cancelled" })
	require.True(t, ok)
	require.True(t, strings.Contains(string(n.Params), `"requestId":`+string(call.ID)))
}
