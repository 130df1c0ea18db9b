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

// legacyTaskServer is a 2025-11-25 fake that declares task-augmented tool
// calls. Its tools: "slow" (taskSupport required: working for two polls,
// then completed, with a statusMessage per poll), "maybe" (optional:
// answered plainly without params.task), "plain" (no execution), "ask"
// (required: input_required until tasks/result delivers an elicitation),
// "forever" (required: working until tasks/cancel). A required tool called
// without params.task is refused with -32601, as the spec says.
type legacyTaskServer struct {
	*fakeServer
	mu    sync.Mutex
	tasks map[string]*fakeLegacyTask
	next  int
}

type fakeLegacyTask struct {
	id, tool, status string
	polls            int
	name             string
}

func newLegacyTaskServer(t *testing.T, caps map[string]any) *legacyTaskServer {
	if caps == nil {
		caps = map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}
	}
	s := &legacyTaskServer{fakeServer: newFakeServer(t, "2025-11-25", caps), tasks: map[string]*fakeLegacyTask{}}
	tool := func(name, support string) map[string]any {
		t := map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
		if support != "" {
			t["execution"] = map[string]any{"taskSupport": support}
		}
		return t
	}
	s.handle("tools/list", func(*fakeServer, wireMsg) reply {
		return reply{result: map[string]any{"tools": []any{tool("slow", "required"), tool("maybe", "optional"), tool("plain", ""), tool("ask", "required"), tool("forever", "required")}}}
	})
	s.handle("tools/call", func(_ *fakeServer, m wireMsg) reply {
		var p struct {
			Name string          `json:"name"`
			Task json.RawMessage `json:"task"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Task == nil {
			if p.Name == "maybe" || p.Name == "plain" {
				return reply{result: map[string]any{"content": []any{map[string]any{"type": "text", "text": "plain " + p.Name}}}}
			}
			return reply{err: &rpcError{Code: -32601, Message: "tool " + p.Name + " requires a task"}}
		}
		s.mu.Lock()
		s.next++
		task := &fakeLegacyTask{id: fmt.Sprintf("t%d", s.next), tool: p.Name, status: "working"}
		s.tasks[task.id] = task
		s.mu.Unlock()
		return reply{result: map[string]any{"task": task.json(0)}}
	})
	s.handle("tasks/get", func(_ *fakeServer, m wireMsg) reply {
		task := s.task(m)
		if task == nil {
			return reply{err: &rpcError{Code: -32602, Message: "no such task"}}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		task.polls++
		switch task.tool {
		case "slow", "maybe":
			if task.polls > 2 {
				task.status = "completed"
			}
		case "ask":
			if task.name == "" {
				task.status = "input_required"
			}
		}
		return reply{result: task.json(task.polls)}
	})
	s.handle("tasks/result", func(fs *fakeServer, m wireMsg) reply {
		task := s.task(m)
		if task == nil {
			return reply{err: &rpcError{Code: -32602, Message: "no such task"}}
		}
		go s.result(fs, m.ID, task)
		return reply{none: true}
	})
	s.handle("tasks/cancel", func(_ *fakeServer, m wireMsg) reply {
		task := s.task(m)
		if task == nil {
			return reply{err: &rpcError{Code: -32602, Message: "no such task"}}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if task.status == "completed" || task.status == "cancelled" {
			return reply{err: &rpcError{Code: -32602, Message: "task already terminal"}}
		}
		task.status = "cancelled"
		return reply{result: task.json(task.polls)}
	})
	return s
}

func (s *legacyTaskServer) task(m wireMsg) *fakeLegacyTask {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasks[p.TaskID]
}

// result answers tasks/result: for "ask" it first sends the elicitation the
// task waits on (related-task in _meta) and takes the client's answer.
func (s *legacyTaskServer) result(fs *fakeServer, id json.RawMessage, task *fakeLegacyTask) {
	related := map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": task.id}}
	if task.tool == "ask" {
		fs.write(map[string]any{"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create", "params": map[string]any{
			"_meta": related, "message": "name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
		m, ok := fs.waitFor(func(m wireMsg) bool { return string(m.ID) == `"elicit-1"` && m.Method == "" })
		if !ok {
			return
		}
		var r struct {
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		_ = json.Unmarshal(m.Result, &r)
		s.mu.Lock()
		task.name, task.status = r.Content.Name, "completed"
		s.mu.Unlock()
		fs.sendResult(id, map[string]any{"_meta": related, "content": []any{map[string]any{"type": "text", "text": "hello " + r.Content.Name}}})
		return
	}
	fs.sendResult(id, map[string]any{"_meta": related, "content": []any{map[string]any{"type": "text", "text": "done " + task.tool}}})
}

func (t *fakeLegacyTask) json(polls int) map[string]any {
	out := map[string]any{"taskId": t.id, "status": t.status, "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000, "pollInterval": 20}
	if t.status == "working" {
		out["statusMessage"] = fmt.Sprintf("step %d", polls)
	}
	return out
}

// A tool that requires a task is called as one and, to the host, completes
// once with tasks/result's answer after polling tasks/get; statusMessage
// changes are progress events. An optional one is called plainly unless
// the host asks, and options.task on a tool that takes no tasks fails
// naming it.
func TestLegacyTaskToolCall(t *testing.T) {
	cases := []struct {
		name, tool    string
		task          bool
		status        Status
		want          string
		augmented     bool
		wantsProgress bool
	}{
		{name: "required", tool: "slow", status: StatusOK, want: "done slow", augmented: true, wantsProgress: true},
		{name: "optional, plain", tool: "maybe", status: StatusOK, want: "plain maybe"},
		{name: "optional, asked", tool: "maybe", task: true, status: StatusOK, want: "done maybe", augmented: true},
		{name: "no execution, asked", tool: "plain", task: true, status: StatusUnsupported, want: "does not take tasks"},
		{name: "no execution", tool: "plain", status: StatusOK, want: "plain plain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newLegacyTaskServer(t, nil)
			c := readyClient(t, s.fakeServer, legacyOptions())
			ev := recordEvents(c)
			_, ch := asyncCall(t, c, "tools/call", `{"name":"`+tc.tool+`","arguments":{}}`, CallOptions{Task: tc.task, Progress: tc.wantsProgress})
			got := waitCompletion(t, ch)
			require.Equal(t, tc.status, got.status, string(got.data))
			require.Contains(t, string(got.data), tc.want)
			var augmented bool
			for _, m := range s.requests("tools/call") {
				if _, ok := params(t, m)["task"]; ok {
					augmented = true
				}
			}
			require.Equal(t, tc.augmented, augmented)
			if tc.augmented {
				require.NotEmpty(t, s.requests("tasks/get"))
				require.Len(t, s.requests("tasks/result"), 1)
				require.Empty(t, s.requests("notifications/cancelled"))
			}
			if tc.wantsProgress {
				p, ok := ev.wait("progress")
				require.True(t, ok)
				require.Contains(t, string(p), `"task_id":"t1"`)
			}
			require.Len(t, s.requests("tools/list"), 1, "the tool list is learnt once")
			require.Eventually(t, func() bool { return c.pendingCount() == 0 }, 3*time.Second, 10*time.Millisecond)
		})
	}
}

// input_required: tasks/result is sent at once, and the elicitation the
// server sends while it is open reaches the host like any other.
func TestLegacyTaskInputRequired(t *testing.T) {
	s := newLegacyTaskServer(t, nil)
	opts := legacyOptions()
	opts.Handlers.Elicitation, opts.Handlers.ElicitForm = true, true
	c, err := connectWith(t, s.fakeServer, opts, func(c *Client, id uint64, kind string, payload []byte) {
		require.Equal(t, "elicitation", kind)
		require.Nil(t, errOrNil(c.Respond(id, StatusOK, []byte(`{"action":"accept","content":{"name":"ada"}}`))))
	})
	require.Nil(t, errOrNil(err))
	out, cerr := c.CallSync("tools/call", []byte(`{"name":"ask","arguments":{}}`), CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Contains(t, string(out), "hello ada")
}

// A cancel or a timeout sends tasks/cancel for the task (never
// notifications/cancelled), whose answer is awaited; a server without
// tasks.cancel is not sent one.
func TestLegacyTaskCancel(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		s := newLegacyTaskServer(t, nil)
		c := readyClient(t, s.fakeServer, legacyOptions())
		id, ch := asyncCall(t, c, "tools/call", `{"name":"forever","arguments":{}}`, CallOptions{})
		_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tasks/get" })
		require.True(t, ok)
		require.Nil(t, errOrNil(c.Cancel(id)))
		require.Equal(t, StatusCancelled, waitCompletion(t, ch).status)
		m, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tasks/cancel" })
		require.True(t, ok)
		require.JSONEq(t, `"t1"`, string(params(t, m)["taskId"]))
		require.Eventually(t, func() bool { return c.pendingCount() == 0 }, 3*time.Second, 10*time.Millisecond, "the tasks/cancel answer is taken")
		require.Empty(t, s.requests("notifications/cancelled"))
	})
	t.Run("timeout", func(t *testing.T) {
		s := newLegacyTaskServer(t, nil)
		c := readyClient(t, s.fakeServer, legacyOptions())
		_, ch := asyncCall(t, c, "tools/call", `{"name":"forever","arguments":{}}`, CallOptions{Timeout: 300 * time.Millisecond, TimeoutSet: true})
		require.Equal(t, StatusTimeout, waitCompletion(t, ch).status)
		_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tasks/cancel" })
		require.True(t, ok)
	})
	t.Run("no tasks.cancel", func(t *testing.T) {
		s := newLegacyTaskServer(t, map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}})
		c := readyClient(t, s.fakeServer, legacyOptions())
		ev := recordEvents(c)
		id, ch := asyncCall(t, c, "tools/call", `{"name":"forever","arguments":{}}`, CallOptions{})
		_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tasks/get" })
		require.True(t, ok)
		require.Nil(t, errOrNil(c.Cancel(id)))
		require.Equal(t, StatusCancelled, waitCompletion(t, ch).status)
		require.Eventually(t, func() bool {
			for _, l := range ev.all("log") {
				if strings.Contains(string(l), "capabilities.tasks.cancel") {
					return true
				}
			}
			return false
		}, 3*time.Second, 10*time.Millisecond)
		require.Empty(t, s.requests("tasks/cancel"))
		_, cerr := c.CallSync("tasks/cancel", []byte(`{"taskId":"t1"}`), CallOptions{})
		require.NotNil(t, cerr)
		require.Equal(t, StatusUnsupported, cerr.Status)
	})
}

// A status notification for an awaited task acts at once; tasks/list is a
// list method (all_pages works) gated on tasks.list.
func TestLegacyTaskStatusNotificationAndList(t *testing.T) {
	s := newLegacyTaskServer(t, nil)
	// The task stays working on tasks/get; only the notification says it
	// completed.
	s.handle("tasks/get", func(_ *fakeServer, m wireMsg) reply {
		return reply{result: s.task(m).json(0)}
	})
	c := readyClient(t, s.fakeServer, legacyOptions())
	_, ch := asyncCall(t, c, "tools/call", `{"name":"forever","arguments":{}}`, CallOptions{})
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "tasks/get" })
	require.True(t, ok)
	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": map[string]any{
		"taskId": "t1", "status": "completed", "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": nil}})
	got := waitCompletion(t, ch)
	require.Equal(t, StatusOK, got.status, string(got.data))
	require.Contains(t, string(got.data), "done forever")

	s.handle("tasks/list", func(_ *fakeServer, m wireMsg) reply {
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Cursor == "" {
			return reply{result: map[string]any{"tasks": []any{map[string]any{"taskId": "t1"}}, "nextCursor": "2"}}
		}
		return reply{result: map[string]any{"tasks": []any{map[string]any{"taskId": "t2"}}}}
	})
	out, cerr := c.CallSync("tasks/list", nil, CallOptions{AllPages: true})
	require.Nil(t, errOrNil(cerr))
	require.JSONEq(t, `{"tasks":[{"taskId":"t1"},{"taskId":"t2"}]}`, string(out))
}

// The client as receiver (Options.Tasks): it declares the tasks
// capability for the handlers it has, answers a task-augmented elicitation
// with a CreateTaskResult at once, serves tasks/get, tasks/result (held
// until the host answered, then the result with related-task) and
// tasks/list, and announces the end; tasks/cancel drops the host's
// question.
func TestLegacyTaskReceiver(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	opts := legacyOptions()
	opts.Tasks = true
	opts.Handlers.Elicitation, opts.Handlers.ElicitForm = true, true
	questions := make(chan uint64, 4)
	c, err := connectWith(t, s, opts, func(c *Client, id uint64, kind string, payload []byte) {
		require.Equal(t, "elicitation", kind)
		require.Contains(t, string(payload), `"task_id"`)
		questions <- id
	})
	require.Nil(t, errOrNil(err))
	init := s.requests("initialize")[0]
	var ip struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(init.Params, &ip))
	require.JSONEq(t, `{"list":{},"cancel":{},"requests":{"elicitation":{"create":{}}}}`, string(ip.Capabilities["tasks"]))

	ask := func(id string) string {
		s.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": map[string]any{
			"task": map[string]any{"ttl": 60000}, "message": "name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
		m, ok := s.waitFor(func(m wireMsg) bool { return string(m.ID) == `"`+id+`"` && m.Method == "" })
		require.True(t, ok)
		var created struct {
			Task struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			} `json:"task"`
		}
		require.NoError(t, json.Unmarshal(m.Result, &created))
		require.Equal(t, "working", created.Task.Status)
		require.NotEmpty(t, created.Task.TaskID)
		return created.Task.TaskID
	}
	request := func(id, method, taskID string) {
		s.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{"taskId": taskID}})
	}
	answer := func(id string) wireMsg {
		m, ok := s.waitFor(func(m wireMsg) bool { return string(m.ID) == `"`+id+`"` && m.Method == "" })
		require.True(t, ok, id)
		return m
	}

	task := ask("e1")
	q := <-questions
	request("g1", "tasks/get", task)
	require.Contains(t, string(answer("g1").Result), `"status":"working"`)
	request("r1", "tasks/result", task) // held until the host answers
	require.Nil(t, errOrNil(c.Respond(q, StatusOK, []byte(`{"action":"accept","content":{"name":"Ada"}}`))))
	res := answer("r1")
	require.Contains(t, string(res.Result), `"name":"Ada"`)
	require.Contains(t, string(res.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+task+`"}`)
	_, ok := s.waitFor(func(m wireMsg) bool { return m.Method == "notifications/tasks/status" })
	require.True(t, ok)

	second := ask("e2")
	q2 := <-questions
	request("c2", "tasks/cancel", second)
	require.Contains(t, string(answer("c2").Result), `"status":"cancelled"`)
	cerr := c.Respond(q2, StatusOK, []byte(`{"action":"accept","content":{"name":"Bob"}}`))
	require.NotNil(t, cerr)
	require.Equal(t, StatusNotFound, cerr.Status, "the cancelled task's question is dropped")
	request("c3", "tasks/cancel", second)
	require.Contains(t, string(answer("c3").Error), "-32602")

	request("l1", "tasks/list", "")
	list := string(answer("l1").Result)
	require.Contains(t, list, task)
	require.Contains(t, list, second)
	request("g4", "tasks/get", "nope")
	require.Contains(t, string(answer("g4").Error), "-32602")
}

// TestServedTaskTimersEndWithTheClient: a task the client runs for its
// server keeps an expiry timer for its ttl (here an hour); closing the
// client, losing its server or freeing it stops the timer and forgets the
// task, so nothing of the task outlives the client.
func TestServedTaskTimersEndWithTheClient(t *testing.T) {
	tests := []struct {
		name string
		end  func(c *Client, s *fakeServer)
	}{
		{name: "closed", end: func(c *Client, _ *fakeServer) { require.Nil(t, errOrNil(c.Close(5*time.Second))) }},
		{name: "server lost", end: func(c *Client, s *fakeServer) {
			s.peer.Hangup("gone", 1)
			require.Eventually(t, func() bool { return c.State() == StateClosed }, 5*time.Second, 5*time.Millisecond)
		}},
		{name: "freed", end: func(c *Client, _ *fakeServer) { c.Free() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeServer(t, "2025-11-25", defaultCaps())
			opts := legacyOptions()
			opts.Tasks = true
			opts.Handlers.Elicitation, opts.Handlers.ElicitForm = true, true
			asked := make(chan struct{}, 1)
			c, err := connectWith(t, s, opts, func(*Client, uint64, string, []byte) { asked <- struct{}{} })
			require.Nil(t, errOrNil(err))
			s.write(map[string]any{"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": map[string]any{
				"task": map[string]any{"ttl": 3600000}, "message": "name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
			select {
			case <-asked: // the task exists and its question is with the host
			case <-time.After(10 * time.Second):
				require.Fail(t, "the task's question never reached the host")
			}
			c.mu.Lock()
			var tasks []*servedTask
			for _, st := range c.served {
				tasks = append(tasks, st)
			}
			c.mu.Unlock()
			require.Len(t, tasks, 1)

			tc.end(c, s)
			c.mu.Lock()
			left := len(c.served)
			c.mu.Unlock()
			require.Zero(t, left, "the client forgot its tasks")
			require.False(t, tasks[0].expiry.Stop(), "the task's timer was stopped (an hour's ttl cannot have run out)")
		})
	}
}

// A tools/call whose params carry task is the application's own task:
// sent as written, its CreateTaskResult is the call's answer (nothing is
// polled), and tasks/get, tasks/result, tasks/list and tasks/cancel work
// by hand, so the application can keep the task beyond the call. Only a
// call without params.task is followed by the library.
func TestLegacyTaskByHand(t *testing.T) {
	cases := []struct {
		name, tool string
		opts       CallOptions
	}{
		{"required tool", "slow", CallOptions{}},
		{"optional tool", "maybe", CallOptions{}},
		{"optional tool, options.task too", "maybe", CallOptions{Task: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newLegacyTaskServer(t, nil)
			c := readyClient(t, s.fakeServer, legacyOptions())
			out, cerr := c.CallSync("tools/call", []byte(`{"name":"`+tc.tool+`","arguments":{},"task":{"ttl":30000}}`), tc.opts)
			require.Nil(t, errOrNil(cerr))
			var created struct {
				Task struct {
					TaskID string `json:"taskId"`
					Status string `json:"status"`
				} `json:"task"`
			}
			require.NoError(t, json.Unmarshal(out, &created), string(out))
			require.Equal(t, "t1", created.Task.TaskID, string(out))
			require.Equal(t, "working", created.Task.Status)
			calls := s.requests("tools/call")
			require.Len(t, calls, 1)
			require.JSONEq(t, `{"ttl":30000}`, string(params(t, calls[0])["task"]), "the task as the application wrote it")
			require.Empty(t, s.requests("tasks/get"), "the library does not follow the application's task")
			require.Empty(t, s.requests("tasks/result"))

			task := `{"taskId":"t1"}`
			for range 3 {
				got, gerr := c.CallSync("tasks/get", []byte(task), CallOptions{})
				require.Nil(t, errOrNil(gerr))
				require.Contains(t, string(got), `"taskId":"t1"`)
			}
			res, rerr := c.CallSync("tasks/result", []byte(task), CallOptions{})
			require.Nil(t, errOrNil(rerr))
			require.Contains(t, string(res), "done "+tc.tool)

			s.handle("tasks/list", func(*fakeServer, wireMsg) reply {
				return reply{result: map[string]any{"tasks": []any{map[string]any{"taskId": "t1", "status": "completed"}}}}
			})
			list, lerr := c.CallSync("tasks/list", nil, CallOptions{})
			require.Nil(t, errOrNil(lerr))
			require.Contains(t, string(list), `"taskId":"t1"`)

			// A second task of the application's, cancelled by hand.
			_, cerr = c.CallSync("tools/call", []byte(`{"task":{},"name":"forever","arguments":{}}`), CallOptions{})
			require.Nil(t, errOrNil(cerr))
			cancelled, xerr := c.CallSync("tasks/cancel", []byte(`{"taskId":"t2"}`), CallOptions{})
			require.Nil(t, errOrNil(xerr))
			require.Contains(t, string(cancelled), `"status":"cancelled"`)
			require.Empty(t, s.requests("notifications/cancelled"))
		})
	}
}
