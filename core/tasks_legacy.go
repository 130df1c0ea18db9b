package core

import (
	"context"
	"strconv"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// Tasks of the 2025-11-25 revision (basic/utilities/tasks), the client as
// requestor. A server that declares capabilities.tasks.requests.tools.call
// may mark a tool execution.taskSupport "required" (it refuses a plain
// call) or "optional". Such a tools/call carries params.task: always for
// "required", when CallOptions.Task asks for "optional". The server answers
// with a CreateTaskResult; the client then polls tasks/get at the task's
// pollInterval (bounded as in tasks.go), and once the task needs input or
// ends it sends tasks/result, which the server holds until the task ends
// and while it is open delivers the requests (elicitation, sampling) the
// task needs, answered like any server request. To the host it stays one
// call: its progress token stays valid, statusMessage changes become
// progress events, and it completes once, with tasks/result's answer. A
// cancel or timeout sends tasks/cancel (never notifications/cancelled),
// whose answer is awaited and reported. notifications/tasks/status for an
// awaited task acts at once instead of at the next poll.
//
// Which tools allow a task is learnt from the server's tools/list, listed
// by the library itself (own calls, once per tool list: a
// notifications/tools/list_changed forgets it).

const (
	metaRelatedTask = "io.modelcontextprotocol/related-task"
	// legacyCancelWait bounds the wait for the answer to the library's own
	// tasks/cancel, and for the late CreateTaskResult of a call cancelled
	// before its task existed.
	legacyCancelWait = 30 * time.Second
)

// legacyTask is a task-augmented tools/call's task. Guarded by c.mu.
type legacyTask struct {
	id       string // "" until the CreateTaskResult
	inflight string // the request outstanding: tools/call, tasks/get, tasks/result, ""
	poll     time.Duration
	timer    *time.Timer
	lastMsg  string
	polls    int
	done     bool // the task reached a terminal status
	// notified: a status notification that arrived while a tasks/get was
	// out; it wins over that answer if the answer still says "working".
	notified *taskFieldsLegacy
}

// legacyTasks is the client's side of 2025-11-25 tasks. Guarded by c.mu.
type legacyTasks struct {
	awaiting map[string]*call // the call following each task
	// tools: each listed tool's execution.taskSupport ("" when absent);
	// nil until listed.
	tools   map[string]string
	lookups []*call // calls waiting for the tool list
	listing bool
}

// taskFieldsLegacy is the Task object of 2025-11-25.
type taskFieldsLegacy struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"statusMessage"`
	PollInterval  *float64 `json:"pollInterval"`
}

// wantsLegacyTask reports whether a legacy tools/call must go through
// legacyTaskSend: the server takes task-augmented tool calls, or the host
// asked for one (which then fails, naming why). A call whose params carry
// task already is the application's own task: it is sent as written and
// its CreateTaskResult is its answer (the application follows the task
// with tasks/get, tasks/result, tasks/cancel, and may keep it beyond the
// call, across its own restarts).
func (c *Client) wantsLegacyTask(cl *call) bool {
	return cl.mod == nil && cl.method == "tools/call" && (c.server.caps.taskTools || cl.opts.Task) && !hasTopLevelKey(cl.params, "task")
}

// legacyTaskSend sends a registered tools/call (in c.calls, its timer
// armed, no request out) once it is known whether it becomes a task:
// from the tool list, listed first when unknown.
func (c *Client) legacyTaskSend(cl *call) {
	c.mu.Lock()
	if !c.server.caps.taskTools {
		c.mu.Unlock()
		c.finish(cl, Errorf(StatusUnsupported, "options.task needs a server that declares capabilities.tasks.requests.tools.call, which this one does not"), nil)
		return
	}
	if c.ltasks.tools == nil {
		c.ltasks.lookups = append(c.ltasks.lookups, cl)
		start := !c.ltasks.listing
		c.ltasks.listing = true
		c.mu.Unlock()
		if start {
			c.listToolTasks()
		}
		return
	}
	c.mu.Unlock()
	c.sendToolCall(cl)
}

// listToolTasks lists the server's tools (every page) to learn each one's
// execution.taskSupport, then sends the calls that waited.
func (c *Client) listToolTasks() {
	_, err := c.call("tools/list", nil, CallOptions{AllPages: true, Inline: true, own: true}, func(_ uint64, st Status, data []byte) {
		var tools map[string]string
		var lerr *Error
		if st == StatusOK {
			var res struct {
				Tools []struct {
					Name      string `json:"name"`
					Execution struct {
						TaskSupport string `json:"taskSupport"`
					} `json:"execution"`
				} `json:"tools"`
			}
			if jsonx.Unmarshal(data, &res) != nil {
				lerr = Errorf(StatusProtocol, "the server's tools/list result is malformed")
			} else {
				tools = make(map[string]string, len(res.Tools))
				for _, t := range res.Tools {
					tools[t.Name] = t.Execution.TaskSupport
				}
			}
		} else {
			e := decodeErrorJSON(st, data)
			lerr = &Error{Status: e.Status, Code: e.Code, Data: e.Data, Message: "listing the tools to learn which take tasks failed: " + e.Message}
		}
		c.toolTasksListed(tools, lerr)
	}, false)
	if err != nil {
		c.toolTasksListed(nil, &Error{Status: err.Status, Message: "listing the tools to learn which take tasks failed: " + err.Message})
	}
}

func (c *Client) toolTasksListed(tools map[string]string, err *Error) {
	c.mu.Lock()
	waiting := c.ltasks.lookups
	c.ltasks.lookups, c.ltasks.listing = nil, false
	if err == nil {
		c.ltasks.tools = tools
	}
	c.mu.Unlock()
	for _, cl := range waiting {
		if err != nil {
			c.finish(cl, err, nil)
			continue
		}
		c.sendToolCall(cl)
	}
}

// forgetToolTasks drops the tool list when the server says it changed.
func (c *Client) forgetToolTasks() {
	c.mu.Lock()
	c.ltasks.tools = nil
	c.mu.Unlock()
}

// sendToolCall sends the tools/call, task-augmented when the tool requires
// it or allows it and the host asked.
func (c *Client) sendToolCall(cl *call) {
	var p struct {
		Name string `json:"name"`
	}
	_ = jsonx.Unmarshal(cl.params, &p)
	c.mu.Lock()
	if cl.finished {
		c.mu.Unlock()
		return
	}
	support, listed := c.ltasks.tools[p.Name]
	augment := support == "required" || (support == "optional" && cl.opts.Task)
	if cl.opts.Task && !augment && listed {
		c.mu.Unlock()
		c.finish(cl, Errorf(StatusUnsupported, "the tool %s does not take tasks (its execution.taskSupport is %s), which options.task asks for", strconv.Quote(p.Name), strconv.Quote(orForbidden(support))), nil)
		return
	}
	params := cl.params
	if augment {
		params = withTaskParam(params)
		cl.lt = &legacyTask{inflight: "tools/call"}
	}
	reqID := c.nextRequestLocked(cl)
	c.mu.Unlock()
	if err := c.sendRequest(cl, reqID, params); err != nil {
		c.finish(cl, err, nil)
	}
}

func orForbidden(s string) string {
	if s == "" {
		return "absent, meaning forbidden"
	}
	return s
}

// withTaskParam adds "task":{} to a compact params object (the server's
// default ttl applies). A call whose params carry task never comes here
// (wantsLegacyTask).
func withTaskParam(params []byte) []byte {
	if len(params) <= 2 {
		return []byte(`{"task":{}}`)
	}
	out := make([]byte, 0, len(params)+12)
	out = append(out, `{"task":{},`...)
	return append(out, params[1:]...)
}

// onLegacyTaskResponse takes the answer to the call's outstanding request.
func (c *Client) onLegacyTaskResponse(cl *call, result []byte) {
	c.mu.Lock()
	lt := cl.lt
	method := lt.inflight
	lt.inflight = ""
	c.mu.Unlock()
	switch method {
	case "tools/call":
		var created struct {
			Task *taskFieldsLegacy `json:"task"`
		}
		if jsonx.Unmarshal(result, &created) != nil || created.Task == nil {
			// The server ran the call without a task: that is its answer.
			c.mu.Lock()
			cl.lt = nil
			c.mu.Unlock()
			c.finishResult(cl, result)
			return
		}
		if created.Task.TaskID == "" {
			c.finish(cl, Errorf(StatusProtocol, "the server's CreateTaskResult has no taskId"), nil)
			return
		}
		c.mu.Lock()
		if cl.finished {
			c.mu.Unlock()
			return
		}
		lt.id = created.Task.TaskID
		if c.ltasks.awaiting == nil {
			c.ltasks.awaiting = map[string]*call{}
		}
		c.ltasks.awaiting[lt.id] = cl
		c.mu.Unlock()
		c.onLegacyTaskStatus(cl, created.Task)
	case "tasks/get":
		var tf taskFieldsLegacy
		if jsonx.Unmarshal(result, &tf) != nil {
			c.finish(cl, Errorf(StatusProtocol, "the server's tasks/get result is malformed"), nil)
			return
		}
		c.mu.Lock()
		if lt.notified != nil && tf.Status == "working" {
			tf = *lt.notified
		}
		lt.notified = nil
		c.mu.Unlock()
		c.onLegacyTaskStatus(cl, &tf)
	case "tasks/result":
		c.mu.Lock()
		lt.done = true
		c.mu.Unlock()
		c.finishResult(cl, result)
	}
}

// onLegacyTaskStatus acts on a task's state (from the CreateTaskResult, a
// tasks/get, or a status notification): poll again, fetch the result, or
// finish.
func (c *Client) onLegacyTaskStatus(cl *call, tf *taskFieldsLegacy) {
	c.mu.Lock()
	lt := cl.lt
	if cl.finished || lt == nil || lt.inflight != "" {
		if lt != nil && lt.inflight == "tasks/get" && tf.Status != "working" {
			// The poll's answer may predate this notification.
			n := *tf
			lt.notified = &n
		}
		c.mu.Unlock()
		return
	}
	if tf.PollInterval != nil {
		lt.poll = min(max(time.Duration(*tf.PollInterval*float64(time.Millisecond)), minPoll), maxPoll)
	}
	if lt.poll == 0 {
		lt.poll = defaultPoll
	}
	lt.polls++
	progress := cl.opts.Progress && tf.StatusMessage != "" && tf.StatusMessage != lt.lastMsg
	lt.lastMsg = tf.StatusMessage
	polls, poll, id := lt.polls, lt.poll, lt.id
	c.mu.Unlock()
	if progress && c.hasEvents() {
		c.emit("progress", jsonx.MustMarshal(struct {
			CallID   uint64 `json:"call_id"`
			Progress int    `json:"progress"`
			Message  string `json:"message"`
			TaskID   string `json:"task_id"`
		}{cl.id, polls, tf.StatusMessage, id}), false)
	}
	switch tf.Status {
	case "working":
		c.armLegacyPoll(cl, poll)
	case "input_required", "completed", "failed":
		// tasks/result delivers the requests the task waits on, and ends
		// with what the tools/call itself would have returned.
		c.sendLegacyTask(cl, "tasks/result")
	case "cancelled":
		c.mu.Lock()
		lt.done = true
		c.mu.Unlock()
		msg := "the server cancelled task " + strconv.Quote(id)
		if tf.StatusMessage != "" {
			msg += ": " + tf.StatusMessage
		}
		c.finish(cl, Errorf(StatusCancelled, "%s", msg), nil)
	default:
		c.finish(cl, Errorf(StatusProtocol, "task %s has status %s, which this client does not know", strconv.Quote(id), strconv.Quote(tf.Status)), nil)
	}
}

func (c *Client) armLegacyPoll(cl *call, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lt := cl.lt
	if cl.finished || lt == nil || lt.inflight != "" {
		return
	}
	if lt.timer != nil {
		lt.timer.Stop()
	}
	lt.timer = time.AfterFunc(d, func() { c.sendLegacyTask(cl, "tasks/get") })
}

// sendLegacyTask sends tasks/get or tasks/result as the call's outstanding
// request.
func (c *Client) sendLegacyTask(cl *call, method string) {
	defer c.recoverPanic("following a task")
	c.mu.Lock()
	lt := cl.lt
	if cl.finished || lt == nil || lt.inflight != "" {
		c.mu.Unlock()
		return
	}
	if lt.timer != nil {
		lt.timer.Stop()
	}
	lt.inflight = method
	reqID, taskID := c.nextRequestLocked(cl), lt.id
	c.mu.Unlock()
	if err := c.sendPlainRequest(c.sendCtxFor(cl).(sendCtx), reqID, method, taskParams(taskID, nil)); err != nil {
		c.finish(cl, err, nil)
	}
}

// sendPlainRequest sends a legacy-era request whose method is not its
// call's.
func (c *Client) sendPlainRequest(ctx sendCtx, reqID int64, method string, params []byte) *Error {
	buf := appendRequest(nil, reqID, method, params)
	if err := c.tr.Send(ctx, transport.Outbound{Data: buf, Kind: transport.KindRequest, Method: method, ID: reqID}); err != nil {
		return AsError(err)
	}
	return nil
}

// onLegacyTaskNotification takes notifications/tasks/status: the state of
// an awaited task, acted on at once.
func (c *Client) onLegacyTaskNotification(params []byte) {
	var tf taskFieldsLegacy
	if jsonx.Unmarshal(params, &tf) != nil || tf.TaskID == "" {
		return
	}
	c.mu.Lock()
	cl := c.ltasks.awaiting[tf.TaskID]
	c.mu.Unlock()
	if cl != nil {
		c.onLegacyTaskStatus(cl, &tf)
	}
}

// endLegacyTask runs when a task-augmented call completes. A call that
// ended before its task did (cancel, timeout) cancels the task; one
// cancelled before the server created the task cancels it once the
// CreateTaskResult arrives.
func (c *Client) endLegacyTask(cl *call, lt *legacyTask, reqID int64, err *Error) {
	c.mu.Lock()
	if lt.timer != nil {
		lt.timer.Stop()
	}
	if lt.id != "" {
		delete(c.ltasks.awaiting, lt.id)
	}
	id, done, inflight := lt.id, lt.done, lt.inflight
	ready := c.state == StateReady
	if !done && err != nil && err.Status != StatusClosed && ready && id == "" && inflight == "tools/call" && reqID != 0 {
		// The task does not exist yet: its CreateTaskResult is awaited.
		orphan := &call{id: c.nextCallID.Add(1), method: "tools/call", reqID: reqID}
		orphan.internal = func(result []byte, _ *Error) {
			var created struct {
				Task *taskFieldsLegacy `json:"task"`
			}
			if result != nil && jsonx.Unmarshal(result, &created) == nil && created.Task != nil && created.Task.TaskID != "" {
				c.cancelLegacyTask(created.Task.TaskID)
			}
		}
		orphan.opts.TimeoutSet, orphan.opts.Timeout = true, legacyCancelWait
		c.armTimeouts(orphan)
		c.calls[orphan.id] = orphan
		livePending.Add(1)
		c.pending[reqID] = orphan
		c.startTimerLocked(orphan)
	}
	c.mu.Unlock()
	if !done && err != nil && err.Status != StatusClosed && id != "" {
		c.cancelLegacyTask(id)
	}
}

// cancelLegacyTask sends tasks/cancel as the library's own request and
// reports its answer: the task's status, or the server's refusal (a task
// already ended, or a server without tasks.cancel).
func (c *Client) cancelLegacyTask(taskID string) {
	c.mu.Lock()
	if c.state != StateReady || c.server == nil {
		c.mu.Unlock()
		return
	}
	if !c.server.caps.taskCancel {
		c.mu.Unlock()
		c.logf("warning", "task %s is left to run: the server does not declare capabilities.tasks.cancel", strconv.Quote(taskID))
		return
	}
	cl := &call{id: c.nextCallID.Add(1), method: "tasks/cancel"}
	cl.opts.TimeoutSet, cl.opts.Timeout = true, legacyCancelWait
	cl.internal = func(result []byte, err *Error) { c.onTaskCancelAnswer(taskID, result, err) }
	c.armTimeouts(cl)
	reqID := c.registerLocked(cl)
	c.mu.Unlock()
	go func() {
		defer c.recoverPanic("sending tasks/cancel")
		if err := c.sendPlainRequest(sendCtx{Context: context.Background(), deadline: time.Now().Add(c.sendBound())}, reqID, "tasks/cancel", taskParams(taskID, nil)); err != nil {
			c.finish(cl, err, nil)
		}
	}()
}

// onTaskCancelAnswer reports the answer to the library's own tasks/cancel
// (either era): the status the server gives the task, or why it refused.
func (c *Client) onTaskCancelAnswer(taskID string, result []byte, err *Error) {
	switch {
	case err != nil && err.Status == StatusClosed:
	case err != nil:
		c.logf("warning", "the server did not cancel task %s: %s", strconv.Quote(taskID), err.Message)
	default:
		var tf taskFieldsLegacy
		_ = jsonx.Unmarshal(result, &tf)
		switch tf.Status {
		case "", "cancelled":
			c.logf("info", "the server cancelled task %s", strconv.Quote(taskID))
		default:
			c.logf("warning", "the server answered tasks/cancel for task %s with status %s", strconv.Quote(taskID), strconv.Quote(tf.Status))
		}
	}
}
