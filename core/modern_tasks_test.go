package core

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// taskServer is a modern fake whose tools/call becomes task "t1" when the
// request declares the tasks extension (and -32021 otherwise). script is
// the tasks/get answers in order; the last repeats.
func taskServer(t *testing.T, script []map[string]any) *fakeServer {
	s := newModernServer(t)
	var mu sync.Mutex
	polls := 0
	s.handle("tools/call", func(s *fakeServer, m wireMsg) reply {
		var caps struct {
			Extensions map[string]any `json:"extensions"`
		}
		_ = json.Unmarshal(meta(t, m)["io.modelcontextprotocol/clientCapabilities"], &caps)
		if _, ok := caps.Extensions["io.modelcontextprotocol/tasks"]; !ok {
			s.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32021, "message": "Missing required client capability",
				"data": map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}}})
			return reply{none: true}
		}
		return reply{result: map[string]any{"resultType": "task", "taskId": "t1", "status": "working", "createdAt": time.Now().UTC().Format(time.RFC3339Nano), "ttlMs": 60000, "pollIntervalMs": 10}}
	})
	s.handle("tasks/get", func(*fakeServer, wireMsg) reply {
		mu.Lock()
		defer mu.Unlock()
		st := script[min(polls, len(script)-1)]
		polls++
		res := map[string]any{"resultType": "complete", "taskId": "t1", "createdAt": time.Now().UTC().Format(time.RFC3339Nano), "ttlMs": 60000, "pollIntervalMs": 10}
		for k, v := range st {
			res[k] = v
		}
		return reply{result: res}
	})
	s.handle("tasks/update", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{"resultType": "complete"}} })
	s.handle("tasks/cancel", func(*fakeServer, wireMsg) reply { return reply{result: map[string]any{"resultType": "complete"}} })
	return s
}

func tasksOptions() Options {
	o := modernOptions(ModeModern)
	o.Tasks = true
	o.Handlers = Handlers{Elicitation: true, ElicitForm: true}
	return o
}

var askName = map[string]any{"status": "input_required", "inputRequests": map[string]any{
	"name": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}}}

// A task-augmented call is one call: polls, an input request answered
// through the host's elicitation with tasks/update (once, though it is
// seen on two polls), progress from status messages, and one completion
// with the task's result. Every tasks/* request names the task.
func TestTaskLifecycle(t *testing.T) {
	done := map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello Ada"}}}}
	s := taskServer(t, []map[string]any{{"status": "working", "statusMessage": "starting"}, askName, askName, {"status": "working", "statusMessage": "greeting"}, done})
	var mu sync.Mutex
	asked := 0
	c, err := connectWith(t, s, tasksOptions(), func(c *Client, id uint64, kind string, _ []byte) {
		mu.Lock()
		asked++
		mu.Unlock()
		c.Respond(id, StatusOK, []byte(`{"action":"accept","content":{"name":"Ada"}}`))
	})
	require.Nil(t, errOrNil(err))
	ev := recordEvents(c)
	_, ch := asyncCall(t, c, "tools/call", `{"name":"greet","arguments":{}}`, CallOptions{Progress: true})
	got := waitCompletion(t, ch)
	require.Equal(t, StatusOK, got.status, "%s", got.data)
	require.Contains(t, string(got.data), "hello Ada")
	mu.Lock()
	require.Equal(t, 1, asked, "an input request is answered once")
	mu.Unlock()
	ups := s.requests("tasks/update")
	require.Len(t, ups, 1)
	require.JSONEq(t, `{"name":{"action":"accept","content":{"name":"Ada"}}}`, string(params(t, ups[0])["inputResponses"]))
	for _, m := range append(s.requests("tasks/get"), ups...) {
		require.Equal(t, `"t1"`, string(params(t, m)["taskId"]))
		require.Contains(t, meta(t, m), "io.modelcontextprotocol/protocolVersion")
	}
	call := s.requests("tools/call")[0]
	require.JSONEq(t, `{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, string(meta(t, call)["io.modelcontextprotocol/clientCapabilities"]))
	_, ok := ev.wait("progress")
	require.True(t, ok, "status messages arrive as progress")
	require.Empty(t, s.requests("tasks/cancel"))
	require.Zero(t, c.pendingCount())
}

// Terminal statuses: failed carries the JSON-RPC error, cancelled by the
// server is a cancelled call, an unknown status a protocol error; a task
// past its ttlMs is given up.
func TestTaskOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		script []map[string]any
		status Status
		msg    string
	}{
		{"failed", []map[string]any{{"status": "failed", "error": map[string]any{"code": -32603, "message": "boom"}}}, StatusProtocol, "boom"},
		{"cancelled by the server", []map[string]any{{"status": "cancelled", "statusMessage": "operator"}}, StatusCancelled, "operator"},
		{"unknown status", []map[string]any{{"status": "sleeping"}}, StatusProtocol, "sleeping"},
		{"completed without result", []map[string]any{{"status": "completed"}}, StatusProtocol, "without a result"},
		{"expired", []map[string]any{{"status": "working", "ttlMs": 1, "createdAt": "2020-01-01T00:00:00Z"}}, StatusTimeout, "ttlMs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := taskServer(t, tc.script)
			c, err := connectWith(t, s, tasksOptions(), func(*Client, uint64, string, []byte) {})
			require.Nil(t, errOrNil(err))
			_, cerr := c.CallSync("tools/call", []byte(`{"name":"x","arguments":{}}`), CallOptions{})
			require.NotNil(t, cerr)
			require.Equal(t, tc.status, cerr.Status, cerr.Message)
			require.Contains(t, cerr.Message, tc.msg)
		})
	}
}

// Cancelling the call, or its timeout, sends tasks/cancel for the task and
// never notifications/cancelled.
func TestTaskCancel(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			s := taskServer(t, []map[string]any{{"status": "working"}})
			c, err := connectWith(t, s, tasksOptions(), func(*Client, uint64, string, []byte) {})
			require.Nil(t, errOrNil(err))
			opts := CallOptions{}
			if how == "timeout" {
				opts.Timeout, opts.TimeoutSet = 150*time.Millisecond, true
			}
			id, ch := asyncCall(t, c, "tools/call", `{"name":"x","arguments":{}}`, opts)
			_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tasks/get" })
			require.True(t, ok)
			if how == "cancel" {
				require.Nil(t, errOrNil(c.Cancel(id)))
			}
			got := waitCompletion(t, ch)
			want := map[string]Status{"cancel": StatusCancelled, "timeout": StatusTimeout}[how]
			require.Equal(t, want, got.status)
			m, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tasks/cancel" })
			require.True(t, ok, "tasks/cancel is sent")
			require.Equal(t, `"t1"`, string(params(t, m)["taskId"]))
			time.Sleep(50 * time.Millisecond)
			require.NotContains(t, s.methods(), "notifications/cancelled")
		})
	}
}

// Without protocol.tasks the extension is not declared: a task result is a
// protocol error, and the server's -32021 names the config field.
func TestTaskNotOptedIn(t *testing.T) {
	s := taskServer(t, []map[string]any{{"status": "working"}})
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	_, cerr := c.CallSync("tools/call", []byte(`{"name":"x","arguments":{}}`), CallOptions{})
	require.NotNil(t, cerr)
	require.Equal(t, StatusUnsupported, cerr.Status)
	require.Contains(t, cerr.Message, "protocol.tasks")
	require.EqualValues(t, -32021, *cerr.Code)
}

// A notifications/tasks over the listen stream makes the client poll at
// once instead of waiting out a long pollIntervalMs.
func TestTaskNotificationPollsNow(t *testing.T) {
	s := taskServer(t, []map[string]any{{"status": "completed", "result": map[string]any{"content": []any{}}}})
	s.handle("tools/call", func(*fakeServer, wireMsg) reply {
		return reply{result: map[string]any{"resultType": "task", "taskId": "t1", "status": "working", "ttlMs": 600000, "pollIntervalMs": 60000}}
	})
	s.handle("subscriptions/listen", func(s *fakeServer, m wireMsg) reply {
		id := m.ID
		s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{
			"_meta": map[string]any{metaSubscriptionID: id}, "notifications": map[string]any{"taskIds": []string{"t1"}}}})
		s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks", "params": map[string]any{
			"_meta": map[string]any{metaSubscriptionID: id}, "taskId": "t1", "status": "completed"}})
		return reply{none: true}
	})
	c, err := connectWith(t, s, tasksOptions(), func(*Client, uint64, string, []byte) {})
	require.Nil(t, errOrNil(err))
	_, ch := asyncCall(t, c, "tools/call", `{"name":"x","arguments":{}}`, CallOptions{})
	got := waitCompletion(t, ch)
	require.Equal(t, StatusOK, got.status, "%s", got.data)
	m, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "subscriptions/listen" })
	require.True(t, ok)
	require.JSONEq(t, `{"taskIds":["t1"]}`, string(params(t, m)["notifications"]))
}
