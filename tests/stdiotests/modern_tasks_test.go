package stdiotests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// startTasks starts a modern client with protocol.tasks on (or off) and an
// elicitation handler answering {"name":"Ada"}.
func startTasks(t *testing.T, tasks bool, args ...string) *core.Client {
	t.Helper()
	argv, _ := json.Marshal(args)
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"protocol":{"mode":"modern","tasks":%t},
		"handlers":{"elicitation":{}},"timeouts":{"ready_ms":5000,"call_ms":10000,"close_grace_ms":500}}`, fixtureBin, argv, tasks)
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, _ []byte) {
		if kind == "elicitation" {
			c.Respond(id, core.StatusOK, []byte(`{"action":"accept","content":{"name":"Ada"}}`))
			return
		}
		c.Respond(id, core.StatusUnsupported, nil)
	}, nil)))
	require.Nil(t, errOrNil(c.Connect()))
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	require.Nil(t, errOrNil(c.WaitReady(10*time.Second)))
	return c
}

func taskText(t *testing.T, res []byte) string {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(res, &r))
	require.NotEmpty(t, r.Content)
	return r.Content[0].Text
}

// Task-augmented tool calls against the fixture's tasks: to the host each
// is one call with the final result or error; input requests go through
// the host's elicitation; an expired task is given up.
func TestTasksOverStdio(t *testing.T) {
	c := startTasks(t, true)
	for _, tc := range []struct {
		name, tool, args string
		want             string
		status           core.Status
	}{
		{"polled to completion", "task_echo", `{"text":"lemon"}`, "lemon", core.StatusOK},
		{"input through the host", "task_ask", `{}`, "hello Ada", core.StatusOK},
		{"failed", "task_fail", `{}`, "the task failed", core.StatusProtocol},
		{"expired", "task_expire", `{}`, "ttlMs", core.StatusTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.CallSync("tools/call", []byte(`{"name":"`+tc.tool+`","arguments":`+tc.args+`}`), core.CallOptions{})
			if tc.status == core.StatusOK {
				require.Nil(t, errOrNil(err))
				require.Equal(t, tc.want, taskText(t, res))
				return
			}
			require.NotNil(t, err)
			require.Equal(t, tc.status, err.Status, err.Message)
			require.Contains(t, err.Message, tc.want)
		})
	}
}

// Cancelling a task-augmented call sends tasks/cancel for its task, never
// notifications/cancelled.
func TestTaskCancelOverStdio(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "stdin.log")
	c := startTasks(t, true, "-log-file", logFile)
	done := make(chan core.Status, 1)
	id, err := c.Call("tools/call", []byte(`{"name":"task_forever","arguments":{}}`), core.CallOptions{}, func(_ uint64, st core.Status, _ []byte) { done <- st })
	require.Nil(t, errOrNil(err))
	require.Eventually(t, func() bool {
		raw, _ := os.ReadFile(logFile)
		return strings.Contains(string(raw), `"method":"tasks/get"`)
	}, 5*time.Second, 10*time.Millisecond)
	require.Nil(t, errOrNil(c.Cancel(id)))
	require.Equal(t, core.StatusCancelled, <-done)
	require.Eventually(t, func() bool {
		raw, _ := os.ReadFile(logFile)
		return strings.Contains(string(raw), `"method":"tasks/cancel"`)
	}, 5*time.Second, 10*time.Millisecond)
	// Listens are cancelled when replaced; the task's requests never are.
	raw, _ := os.ReadFile(logFile)
	taskIDs := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if m.Method == "tools/call" || strings.HasPrefix(m.Method, "tasks/") {
			taskIDs[string(m.ID)] = true
		}
		if m.Method == "notifications/cancelled" {
			require.False(t, taskIDs[string(m.Params.RequestID)], "notifications/cancelled for a task's request: %s", line)
		}
	}
}

// Without protocol.tasks the fixture refuses a task tool with -32021, and
// the error names the config field that turns tasks on.
func TestTasksNotOptedInOverStdio(t *testing.T) {
	c := startTasks(t, false)
	_, err := c.CallSync("tools/call", []byte(`{"name":"task_echo","arguments":{"text":"x"}}`), core.CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, core.StatusUnsupported, err.Status)
	require.Contains(t, err.Message, "protocol.tasks")
}

// A tools/call whose params carry task is the application's own: its
// CreateTaskResult comes back as the call's answer, and tasks/get and
// tasks/cancel work by hand; the library follows no task of its own.
func TestOwnTaskByHandOverStdio(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "stdin.log")
	c := startTasks(t, true, "-log-file", logFile)
	created := func(tool string) string {
		res, err := c.CallSync("tools/call", []byte(`{"name":"`+tool+`","arguments":{"text":"lemon"},"task":{}}`), core.CallOptions{})
		require.Nil(t, errOrNil(err))
		var r struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
			Status     string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(res, &r), string(res))
		require.Equal(t, "task", r.ResultType, string(res))
		require.NotEmpty(t, r.TaskID, string(res))
		require.Equal(t, "working", r.Status)
		return r.TaskID
	}
	id := created("task_echo")
	raw, _ := os.ReadFile(logFile)
	require.NotContains(t, string(raw), `"method":"tasks/get"`, "the library followed the application's task")
	get := func(id string) string {
		res, err := c.CallSync("tasks/get", []byte(`{"taskId":"`+id+`"}`), core.CallOptions{})
		require.Nil(t, errOrNil(err))
		return string(res)
	}
	require.Eventually(t, func() bool { return strings.Contains(get(id), `"completed"`) }, 10*time.Second, 20*time.Millisecond)
	require.Contains(t, get(id), "lemon")

	forever := created("task_forever")
	_, err := c.CallSync("tasks/cancel", []byte(`{"taskId":"`+forever+`"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Eventually(t, func() bool { return strings.Contains(get(forever), `"cancelled"`) }, 10*time.Second, 20*time.Millisecond)
}
