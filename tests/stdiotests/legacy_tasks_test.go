package stdiotests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// tsv1TasksServer prepares the TypeScript SDK v1 tasks fixture
// (tests/fixtures/tsv1tasks) beside the packages installed into
// .cache/tasks-ts, and returns node and the script.
func tsv1TasksServer(t *testing.T) (string, string) {
	t.Helper()
	modules, err := filepath.Abs("../../.cache/tasks-ts/node_modules")
	require.NoError(t, err)
	if _, serr := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); serr != nil {
		missingPeer(t, "the TypeScript SDK v1 is not installed (make peers-setup)")
	}
	node, lerr := exec.LookPath("node")
	if lerr != nil {
		missingPeer(t, "node is not on PATH")
	}
	dir := t.TempDir()
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	src, rerr := os.ReadFile("../fixtures/tsv1tasks/server.mjs")
	require.NoError(t, rerr)
	script := filepath.Join(dir, "server.mjs")
	require.NoError(t, os.WriteFile(script, src, 0o644))
	return node, script
}

// taskPeer names, for one server, its tools: one that requires a task
// (and reports its steps), one that asks for a name, one that works until
// cancelled, one that takes a task optionally.
type taskPeer struct {
	command                      string
	args                         []string
	slow, slowArgs, slowText     string
	ask, forever, maybe, maybeOK string
}

// Against the fixture (the Go SDK with -legacy-tasks) and the TypeScript
// SDK v1 server: see checkLegacyTasks.
func TestLegacyTasksOverStdio(t *testing.T) {
	t.Run("go fixture", func(t *testing.T) {
		checkLegacyTasks(t, taskPeer{command: fixtureBin, args: []string{"-legacy-tasks"},
			slow: "task_echo", slowArgs: `{"text":"lemon"}`, slowText: "lemon",
			ask: "task_ask", forever: "task_forever", maybe: "task_maybe", maybeOK: "lemon"})
	})
	t.Run("typescript sdk v1", func(t *testing.T) {
		node, script := tsv1TasksServer(t)
		checkLegacyTasks(t, taskPeer{command: node, args: []string{script},
			slow: "delay", slowArgs: `{"ms":300}`, slowText: "done after 300 ms",
			ask: "ask", forever: "forever", maybe: "maybe", maybeOK: "maybe lemon"})
	})
}

type taskHost struct {
	*core.Client
	mu       sync.Mutex
	progress []string
}

// checkLegacyTasks connects in the default mode (the server refuses
// server/discover: the 2025-11-25 handshake), then: a required tool
// completes as one call with progress events from its task; an elicitation
// delivered by tasks/result reaches the host; an optional tool runs plainly
// or, asked, as a task; a cancel and a timeout each cancel their task
// (tasks/list then shows it cancelled).
func checkLegacyTasks(t *testing.T, p taskPeer) {
	argv, _ := json.Marshal(p.args)
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":%s},"handlers":{"elicitation":{}},
		"timeouts":{"ready_ms":20000,"call_ms":15000,"close_grace_ms":500}}`, p.command, argv)
	parsed, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := &taskHost{Client: core.New(parsed.Options, parsed.Transport)}
	require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, _ []byte) {
		if kind == "elicitation" {
			c.Respond(id, core.StatusOK, []byte(`{"action":"accept","content":{"name":"Ada"}}`))
			return
		}
		c.Respond(id, core.StatusUnsupported, nil)
	}, nil)))
	c.SetEventHandler(func(kind string, payload []byte) {
		if kind == "progress" {
			c.mu.Lock()
			c.progress = append(c.progress, string(payload))
			c.mu.Unlock()
		}
	}, nil)
	require.Nil(t, errOrNil(c.Connect()))
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	require.Nil(t, errOrNil(c.WaitReady(30*time.Second)))
	info, ierr := c.ServerInfo()
	require.Nil(t, errOrNil(ierr))
	require.Contains(t, string(info), `"protocolVersion":"2025-11-25"`)

	call := func(tool, args string, opts core.CallOptions) ([]byte, *core.Error) {
		return c.CallSync("tools/call", []byte(`{"name":"`+tool+`","arguments":`+args+`}`), opts)
	}
	t.Run("required", func(t *testing.T) {
		res, err := call(p.slow, p.slowArgs, core.CallOptions{Progress: true})
		require.Nil(t, errOrNil(err))
		require.Equal(t, p.slowText, taskText(t, res))
		c.mu.Lock()
		defer c.mu.Unlock()
		require.NotEmpty(t, c.progress, "statusMessage changes are progress events")
		require.Contains(t, c.progress[0], `"task_id"`)
	})
	t.Run("input through tasks/result", func(t *testing.T) {
		res, err := call(p.ask, `{}`, core.CallOptions{})
		require.Nil(t, errOrNil(err))
		require.Equal(t, "hello Ada", taskText(t, res))
	})
	t.Run("optional", func(t *testing.T) {
		for _, asTask := range []bool{false, true} {
			res, err := call(p.maybe, `{"text":"lemon"}`, core.CallOptions{Task: asTask})
			require.Nil(t, errOrNil(err))
			require.Equal(t, p.maybeOK, taskText(t, res))
		}
	})
	cancelled := func(t *testing.T, before int) {
		t.Helper()
		require.Eventually(t, func() bool {
			// The condition runs on its own goroutine: no require here.
			list, err := c.CallSync("tasks/list", nil, core.CallOptions{AllPages: true})
			var l struct {
				Tasks []struct {
					Status string `json:"status"`
				} `json:"tasks"`
			}
			if err != nil || json.Unmarshal(list, &l) != nil {
				return false
			}
			n := 0
			for _, task := range l.Tasks {
				if task.Status == "cancelled" {
					n++
				}
			}
			return n > before
		}, 10*time.Second, 50*time.Millisecond, "tasks/cancel reached the server")
	}
	t.Run("cancel", func(t *testing.T) {
		done := make(chan core.Status, 1)
		id, err := c.Call("tools/call", []byte(`{"name":"`+p.forever+`","arguments":{}}`), core.CallOptions{}, func(_ uint64, st core.Status, _ []byte) { done <- st })
		require.Nil(t, errOrNil(err))
		time.Sleep(300 * time.Millisecond) // the task exists and is polled
		require.Nil(t, errOrNil(c.Cancel(id)))
		require.Equal(t, core.StatusCancelled, <-done)
		cancelled(t, 0)
	})
	t.Run("timeout", func(t *testing.T) {
		_, err := call(p.forever, `{}`, core.CallOptions{Timeout: 500 * time.Millisecond, TimeoutSet: true})
		require.NotNil(t, err)
		require.Equal(t, core.StatusTimeout, err.Status)
		cancelled(t, 1)
	})
}

// The client as receiver against the TypeScript SDK v1: with
// protocol.tasks the client declares task-augmented elicitation, the
// server's elicitation carrying params.task becomes a task the server
// follows (tasks/get, tasks/result), and the host answers it as any other.
func TestLegacyTaskReceiverAgainstTypeScriptSDKv1(t *testing.T) {
	node, script := tsv1TasksServer(t)
	cfg := fmt.Sprintf(`{"transport":{"type":"stdio","command":%q,"args":[%q]},"protocol":{"tasks":true},"handlers":{"elicitation":{},"sampling":{}},
		"timeouts":{"ready_ms":20000,"call_ms":15000,"close_grace_ms":500}}`, node, script)
	parsed, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(parsed.Options, parsed.Transport)
	asked := make(chan string, 2)
	require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, payload []byte) {
		asked <- kind + " " + string(payload)
		answer := `{"action":"accept","content":{"name":"Ada"}}`
		if kind == "sampling" {
			answer = `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"stand-in"}`
		}
		c.Respond(id, core.StatusOK, []byte(answer))
	}, nil)))
	require.Nil(t, errOrNil(c.Connect()))
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	require.Nil(t, errOrNil(c.WaitReady(30*time.Second)))
	res, err := c.CallSync("tools/call", []byte(`{"name":"ask_as_task","arguments":{}}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Equal(t, "hello Ada (task created)", taskText(t, res))
	q := <-asked
	require.True(t, strings.HasPrefix(q, "elicitation "), q)
	require.Contains(t, q, `"task_id"`)
	res, err = c.CallSync("tools/call", []byte(`{"name":"sample_as_task","arguments":{}}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Equal(t, "the model says hi (task created)", taskText(t, res))
	q = <-asked
	require.True(t, strings.HasPrefix(q, "sampling "), q)
	require.Contains(t, q, `"task_id"`)
}
