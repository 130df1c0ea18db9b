package core

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663), when the
// host opts in (Options.Tasks): every modern request declares it, and a
// tools/call the server turns into a task stays, to the host, one call.
// The client polls tasks/get at the server's pollIntervalMs (bounded),
// answers input_required through the same app requests as MRTR with
// tasks/update, and completes the call once with the task's final result
// or error. Cancelling the call, or its timeout, sends tasks/cancel (never
// notifications/cancelled). Over HTTP every tasks/* request carries
// Mcp-Name: <taskId>. With listening on, the task id joins the listen
// filter and a notifications/tasks for it triggers an immediate poll.

const (
	extensionTasks = "io.modelcontextprotocol/tasks"
	// The poll interval is the server's pollIntervalMs, kept within these
	// bounds; defaultPoll applies when the server gives none.
	minPoll     = 20 * time.Millisecond
	maxPoll     = 5 * time.Second
	defaultPoll = 500 * time.Millisecond
	// maxTaskInputs bounds the input requests one task may make.
	maxTaskInputs = 100
)

// taskState is a task-augmented call's task. Guarded by c.mu.
type taskState struct {
	id       string
	poll     time.Duration
	deadline time.Time       // createdAt+ttlMs as received (the backstop); zero: none
	answered map[string]bool // input keys already answered (or being answered)
	pending  map[string][]byte
	want     int
	inflight string // the tasks/* request outstanding, "" between requests
	timer    *time.Timer
	polls    int
	lastMsg  string
	done     bool      // the task reached a terminal status
	due      time.Time // when the armed poll fires
	wake     bool      // a notification asked for a poll while one was out
}

type taskFields struct {
	TaskID         string                  `json:"taskId"`
	Status         string                  `json:"status"`
	StatusMessage  string                  `json:"statusMessage"`
	TTL            *float64                `json:"ttlMs"`
	PollInterval   *float64                `json:"pollIntervalMs"`
	InputRequests  map[string]inputRequest `json:"inputRequests"`
	Result         jsonx.RawMessage        `json:"result"`
	Error          jsonx.RawMessage        `json:"error"`
	CreatedAtValue string                  `json:"createdAt"`
}

// tasksCapability adds the extension to a modern request's capabilities.
func (c *Client) tasksCapability(caps map[string]any) {
	if !c.opts.Tasks {
		return
	}
	caps["extensions"] = map[string]any{extensionTasks: map[string]any{}}
}

// onTaskCreated takes a CreateTaskResult: the call now follows the task.
func (c *Client) onTaskCreated(cl *call, result []byte) {
	if !c.opts.Tasks || cl.method != "tools/call" {
		c.finish(cl, Errorf(StatusProtocol, "the server answered %s with a task, which this client did not ask for (protocol.tasks is off, or the method takes no tasks)", cl.method), nil)
		return
	}
	var tf taskFields
	if jsonx.Unmarshal(result, &tf) != nil || tf.TaskID == "" {
		c.finish(cl, Errorf(StatusProtocol, "the server's task result is malformed (no taskId)"), nil)
		return
	}
	ts := &taskState{id: tf.TaskID, answered: map[string]bool{}}
	if tf.TTL != nil && *tf.TTL > 0 {
		ts.deadline = time.Now().Add(time.Duration(*tf.TTL * float64(time.Millisecond)))
	}
	c.mu.Lock()
	if cl.finished {
		c.mu.Unlock()
		go c.cancelTask(cl, tf.TaskID)
		return
	}
	cl.mod.task = ts
	if !c.opts.NoListen {
		if c.listen.awaiting == nil {
			c.listen.awaiting = map[string]*call{}
		}
		c.listen.awaiting[ts.id] = cl
		c.listen.tasks = append(c.listen.tasks, ts.id)
	}
	c.mu.Unlock()
	if !c.opts.NoListen {
		c.relisten()
	}
	c.onTaskStatus(cl, &tf)
}

// onTaskStatus acts on a task's state (from the create result or a
// tasks/get): schedule the next poll, produce inputs, or finish.
func (c *Client) onTaskStatus(cl *call, tf *taskFields) {
	c.mu.Lock()
	ts := cl.mod.task
	if cl.finished || ts == nil {
		c.mu.Unlock()
		return
	}
	if tf.PollInterval != nil {
		ts.poll = min(max(time.Duration(*tf.PollInterval*float64(time.Millisecond)), minPoll), maxPoll)
	}
	if ts.poll == 0 {
		ts.poll = defaultPoll
	}
	if tf.TTL != nil && *tf.TTL > 0 && tf.CreatedAtValue != "" {
		if created, err := time.Parse(time.RFC3339Nano, tf.CreatedAtValue); err == nil {
			// The spec's backstop: createdAt plus the latest ttlMs (which
			// may change over the task's life).
			ts.deadline = created.Add(time.Duration(*tf.TTL * float64(time.Millisecond)))
		}
	}
	ts.polls++
	progress := cl.opts.Progress && tf.StatusMessage != "" && tf.StatusMessage != ts.lastMsg
	ts.lastMsg = tf.StatusMessage
	polls := ts.polls
	expired := !ts.deadline.IsZero() && time.Now().After(ts.deadline)
	c.mu.Unlock()
	if progress && c.hasEvents() {
		msg := tf.StatusMessage
		c.emit("progress", jsonx.MustMarshal(struct {
			CallID   uint64 `json:"call_id"`
			Progress int    `json:"progress"`
			Message  string `json:"message"`
			TaskID   string `json:"task_id"`
		}{cl.id, polls, msg, tf.TaskID}), false)
	}

	switch tf.Status {
	case "working":
		if expired {
			c.finish(cl, Errorf(StatusTimeout, "task %s passed its ttlMs without finishing", strconv.Quote(ts.id)), nil)
			return
		}
		c.schedulePoll(cl, ts.poll)
	case "input_required":
		c.onTaskInputs(cl, tf.InputRequests)
	case "completed":
		if len(tf.Result) == 0 {
			c.finish(cl, Errorf(StatusProtocol, "task %s completed without a result", strconv.Quote(ts.id)), nil)
			return
		}
		c.forgetTask(cl)
		c.finishResult(cl, tf.Result)
	case "failed":
		c.forgetTask(cl)
		if len(tf.Error) == 0 {
			c.finish(cl, Errorf(StatusProtocol, "task %s failed without an error", strconv.Quote(ts.id)), nil)
			return
		}
		c.finish(cl, decodeRPCError(tf.Error), nil)
	case "cancelled":
		c.forgetTask(cl)
		c.finish(cl, Errorf(StatusCancelled, "the server cancelled task %s: %s", strconv.Quote(ts.id), tf.StatusMessage), nil)
	default:
		c.finish(cl, Errorf(StatusProtocol, "task %s has status %s, which this client does not know", strconv.Quote(ts.id), strconv.Quote(tf.Status)), nil)
	}
}

func (c *Client) schedulePoll(cl *call, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := cl.mod.task
	if cl.finished || ts == nil {
		return
	}
	if ts.inflight != "" {
		ts.wake = true // the answer under way may predate the change
		return
	}
	if ts.wake {
		d, ts.wake = 0, false
	}
	due := time.Now().Add(d)
	if ts.timer != nil {
		if !ts.due.IsZero() && ts.due.Before(due) {
			return // an earlier poll is armed already
		}
		ts.timer.Stop()
	}
	ts.due = due
	ts.timer = time.AfterFunc(d, func() { c.sendTask(cl, "tasks/get", nil) })
}

// onTaskNotification takes notifications/tasks from a listen.
func (c *Client) onTaskNotification(params []byte) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if jsonx.Unmarshal(params, &p) == nil && p.TaskID != "" {
		c.pollNow(p.TaskID)
	}
}

// pollNow answers a notifications/tasks: the task's state is fetched at
// once (the notification itself only says that it changed).
func (c *Client) pollNow(taskID string) {
	c.mu.Lock()
	cl := c.listen.awaiting[taskID]
	c.mu.Unlock()
	if cl != nil {
		c.schedulePoll(cl, 0)
	}
}

// sendTask sends tasks/get or tasks/update for the call's task, as the
// call's outstanding request.
func (c *Client) sendTask(cl *call, method string, extra []byte) {
	c.mu.Lock()
	ts := cl.mod.task
	if cl.finished || ts == nil || ts.inflight != "" {
		c.mu.Unlock()
		return
	}
	ts.inflight = method
	ts.due = time.Time{}
	reqID, taskID := c.nextRequestLocked(cl), ts.id
	c.mu.Unlock()
	if err := c.sendTaskRequest(cl, reqID, method, taskID, extra); err != nil {
		c.finish(cl, err, nil)
	}
}

func taskParams(taskID string, extra []byte) []byte {
	p := append([]byte(`{"taskId":`), jsonx.AppendString(nil, taskID)...)
	if extra != nil {
		p = append(p, `,"inputResponses":`...)
		p = append(p, extra...)
	}
	return append(p, '}')
}

// sendTaskRequest sends one tasks/* request with the era's _meta and, over
// HTTP, Mcp-Name: <taskId> so intermediaries route it to the task's
// holder.
func (c *Client) sendTaskRequest(cl *call, reqID int64, method, taskID string, extra []byte) *Error {
	full, err := modernParams(withTraceMeta(taskParams(taskID, extra), cl.trace), cl.mod.meta, nil)
	if err != nil {
		return err
	}
	var headers []transport.Header
	if c.headers {
		headers = []transport.Header{{Name: headerProtocolVersion, Value: cl.mod.version}, {Name: headerMethod, Value: method}, {Name: headerName, Value: encodeHeaderValue(taskID)}}
	}
	buf := appendRequest(nil, reqID, method, full)
	ctx := sendCtx{Context: context.Background(), deadline: time.Now().Add(c.sendBound())}
	if serr := c.tr.Send(ctx, transport.Outbound{Data: buf, Kind: transport.KindRequest, Method: method, ID: reqID, Headers: headers}); serr != nil {
		return AsError(serr)
	}
	return nil
}

// onTaskResponse takes the answer to the call's outstanding tasks/*
// request.
func (c *Client) onTaskResponse(cl *call, result []byte) {
	c.mu.Lock()
	ts := cl.mod.task
	method := ts.inflight
	ts.inflight = ""
	poll := ts.poll
	c.mu.Unlock()
	if method == "tasks/update" {
		c.schedulePoll(cl, poll)
		return
	}
	var tf taskFields
	if jsonx.Unmarshal(result, &tf) != nil {
		c.finish(cl, Errorf(StatusProtocol, "the server's tasks/get result is malformed"), nil)
		return
	}
	c.onTaskStatus(cl, &tf)
}

// onTaskInputs produces the input requests not answered before (keys are
// unique over a task's life, so a repeated key is one already handled)
// through the host, then sends them with tasks/update.
func (c *Client) onTaskInputs(cl *call, reqs map[string]inputRequest) {
	keys := make([]string, 0, len(reqs))
	c.mu.Lock()
	ts := cl.mod.task
	for k := range reqs {
		if !ts.answered[k] {
			keys = append(keys, k)
		}
	}
	if len(ts.answered)+len(keys) > maxTaskInputs {
		c.mu.Unlock()
		c.finish(cl, Errorf(StatusProtocol, "task %s asked for more than %d inputs", strconv.Quote(ts.id), maxTaskInputs), nil)
		return
	}
	for _, k := range keys {
		if !c.declaresInput(reqs[k].Method) {
			c.mu.Unlock()
			c.finish(cl, Errorf(StatusProtocol, "task %s asked for input %q with %s, which this client did not declare", strconv.Quote(ts.id), k, reqs[k].Method), nil)
			return
		}
	}
	for _, k := range keys {
		ts.answered[k] = true
	}
	ts.pending = map[string][]byte{}
	ts.want = len(keys)
	poll := ts.poll
	c.mu.Unlock()
	if len(keys) == 0 {
		c.schedulePoll(cl, poll) // all are being answered already
		return
	}
	slices.Sort(keys)
	for _, key := range keys {
		in := reqs[key]
		req := &serverRequest{id: cl.inputOwner(), method: in.Method, params: in.Params, callID: cl.id, inputKey: key}
		req.answer = func(result []byte, err *Error) { c.onTaskInput(cl, key, result, err) }
		switch in.Method {
		case "roots/list":
			c.serveRoots(req)
		case "sampling/createMessage":
			c.serveSampling(req)
		case "elicitation/create":
			c.serveElicitation(req)
		}
	}
}

// onTaskInput takes one produced input; once all are in, tasks/update
// carries them. A refused input ends the call (and cancels the task).
func (c *Client) onTaskInput(cl *call, key string, result []byte, err *Error) {
	if err != nil {
		c.finish(cl, err, nil)
		return
	}
	c.mu.Lock()
	ts := cl.mod.task
	if cl.finished || ts == nil {
		c.mu.Unlock()
		return
	}
	ts.pending[key] = result
	if len(ts.pending) < ts.want {
		c.mu.Unlock()
		return
	}
	keys := make([]string, 0, len(ts.pending))
	for k := range ts.pending {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = jsonx.AppendString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, orEmptyObject(ts.pending[k])...)
	}
	ts.pending, ts.want = nil, 0
	c.mu.Unlock()
	c.sendTask(cl, "tasks/update", append(buf, '}'))
}

// forgetTask takes a finished task out of the listen filter.
func (c *Client) forgetTask(cl *call) {
	c.mu.Lock()
	ts := cl.mod.task
	if ts == nil {
		c.mu.Unlock()
		return
	}
	ts.done = true
	if ts.timer != nil {
		ts.timer.Stop()
	}
	_, listened := c.listen.awaiting[ts.id]
	delete(c.listen.awaiting, ts.id)
	c.listen.tasks = slices.DeleteFunc(c.listen.tasks, func(id string) bool { return id == ts.id })
	c.mu.Unlock()
	if listened {
		c.relisten()
	}
}

// endTask runs when a task-augmented call ends before its task did
// (cancel, timeout, a refused input): the server hears tasks/cancel.
func (c *Client) endTask(cl *call, err *Error) {
	ts := cl.mod.task
	c.mu.Lock()
	done := ts.done
	c.mu.Unlock()
	c.forgetTask(cl)
	c.dropInputRequests(cl)
	if !done && err != nil && err.Status != StatusClosed {
		go c.cancelTask(cl, ts.id)
	}
}

// cancelTask sends tasks/cancel as the library's own request (the host's
// call has completed already): its answer, or its absence, is reported
// (onTaskCancelAnswer, tasks_legacy.go).
func (c *Client) cancelTask(cl *call, taskID string) {
	own := &call{id: c.nextCallID.Add(1), method: "tasks/cancel"}
	own.opts.TimeoutSet, own.opts.Timeout = true, legacyCancelWait
	own.internal = func(result []byte, err *Error) { c.onTaskCancelAnswer(taskID, result, err) }
	c.armTimeouts(own)
	c.mu.Lock()
	if c.state != StateReady {
		c.mu.Unlock()
		return
	}
	own.reqID = c.nextReqID.Add(1)
	c.calls[own.id] = own
	livePending.Add(1)
	c.pending[own.reqID] = own
	c.startTimerLocked(own)
	reqID := own.reqID
	c.mu.Unlock()
	if err := c.sendTaskRequest(cl, reqID, "tasks/cancel", taskID, nil); err != nil {
		c.finish(own, &Error{Status: err.Status, Message: "could not send tasks/cancel: " + err.Message}, nil)
	}
}

// explainTaskError names what a -32021 from the server asks for: the
// tasks extension is declared only when the host opts in.
func (c *Client) explainTaskError(cl *call, err *Error) *Error {
	if cl.internal != nil || cl.mod == nil || err == nil || err.Code == nil || *err.Code != codeMissingClientCapability {
		return err
	}
	var d struct {
		Required struct {
			Extensions map[string]jsonx.RawMessage `json:"extensions"`
		} `json:"requiredCapabilities"`
	}
	if len(err.Data) > 0 && jsonx.Unmarshal(err.Data, &d) == nil {
		if _, ok := d.Required.Extensions[extensionTasks]; ok && !c.opts.Tasks {
			e := *err
			e.Status = StatusUnsupported
			e.Message = "the server requires the " + extensionTasks + " extension, which protocol.tasks enables: " + err.Message
			return &e
		}
	}
	e := *err
	e.Status = StatusUnsupported
	e.Message = "the server requires a client capability this client did not declare: " + err.Message
	return &e
}
