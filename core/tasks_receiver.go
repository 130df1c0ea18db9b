package core

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Tasks of the 2025-11-25 revision, the client as receiver: with
// Options.Tasks, the client declares capabilities.tasks (list, cancel, and
// requests.sampling.createMessage / requests.elicitation.create for the
// handlers it has). A server's sampling/createMessage or
// elicitation/create carrying params.task is then answered at once with a
// CreateTaskResult, and served as usual (validation, policy, the host's
// answer); the server follows the task with tasks/get, tasks/result (held
// until the task ends, then exactly what the request would have returned,
// with related-task in _meta), tasks/list and tasks/cancel (which drops the
// host's question). The end of a task is announced with
// notifications/tasks/status. To the host, such a request is the same
// app request, whose payload also names "task_id".

const (
	// maxServedTasks bounds the tasks the client holds for its server; a
	// task-augmented request past it is refused.
	maxServedTasks = 256
	// servedTaskTTL is how long a task is kept (the server's requested
	// ttl, within these bounds).
	servedTaskTTL    = 10 * time.Minute
	maxServedTaskTTL = time.Hour
	servedTaskPoll   = 500 * time.Millisecond
)

// servedTask is a task the client runs for its server. Guarded by c.mu.
type servedTask struct {
	id          string
	status      string
	message     string
	created     time.Time
	updated     time.Time
	ttl         time.Duration
	result      []byte // the request's result, when completed
	errCode     int64  // or its JSON-RPC error, when failed
	errMsg      string
	errData     []byte
	appReqs     []uint64 // the host questions serving it, dropped on cancel
	waiting     [][]byte // ids of tasks/result requests held until it ends
	expiry      *time.Timer
	serverReqID []byte
}

// receiverTasksCapability adds the 2025-11-25 tasks capability to a
// legacy initialize's capabilities (Options.Tasks).
func (c *Client) receiverTasksCapability(caps map[string]any, version string) {
	if !c.opts.Tasks || isModern(version) || version < "2025-11-25" {
		return
	}
	requests := map[string]any{}
	if c.samplingEnabled() {
		requests["sampling"] = map[string]any{"createMessage": map[string]any{}}
	}
	if c.opts.Handlers.Elicitation {
		requests["elicitation"] = map[string]any{"create": map[string]any{}}
	}
	caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": requests}
}

// serveTaskRequest serves the tasks/* requests and task-augmented
// requests of a server; it reports false for any other request.
func (c *Client) serveTaskRequest(req *serverRequest) bool {
	if !c.opts.Tasks {
		return false
	}
	switch req.method {
	case "tasks/get", "tasks/result", "tasks/cancel":
		c.serveTaskQuery(req)
		return true
	case "tasks/list":
		c.serveTaskList(req)
		return true
	case "sampling/createMessage":
		if !c.samplingEnabled() {
			return false
		}
	case "elicitation/create":
		if !c.opts.Handlers.Elicitation {
			return false
		}
	default:
		return false
	}
	var p struct {
		Task *struct {
			TTL *float64 `json:"ttl"`
		} `json:"task"`
	}
	if jsonx.Unmarshal(req.params, &p) != nil || p.Task == nil {
		return false
	}
	ttl := servedTaskTTL
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = min(time.Duration(*p.Task.TTL*float64(time.Millisecond)), maxServedTaskTTL)
	}
	now := time.Now().UTC()
	st := &servedTask{id: newTaskID(), status: "working", created: now, updated: now, ttl: ttl, serverReqID: req.id}
	c.mu.Lock()
	if len(c.served) >= maxServedTasks {
		c.mu.Unlock()
		c.replyError(req, codeInternal, "the client holds "+strconv.Itoa(maxServedTasks)+" tasks already; try again once some have ended", nil)
		return true
	}
	if c.served == nil {
		c.served = map[string]*servedTask{}
	}
	c.served[st.id] = st
	st.expiry = time.AfterFunc(ttl, func() { c.dropServedTask(st.id) })
	created := jsonx.MustMarshal(map[string]any{"task": st.jsonLocked()})
	c.mu.Unlock()
	c.replyResult(req, created)
	inner := &serverRequest{id: req.id, method: req.method, params: req.params, served: st}
	if req.method == "sampling/createMessage" {
		c.serveSampling(inner)
	} else {
		c.serveElicitation(inner)
	}
	return true
}

func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// jsonLocked is the task's Task object.
func (st *servedTask) jsonLocked() map[string]any {
	t := map[string]any{
		"taskId": st.id, "status": st.status,
		"createdAt":     st.created.Format(time.RFC3339Nano),
		"lastUpdatedAt": st.updated.Format(time.RFC3339Nano),
		"ttl":           st.ttl.Milliseconds(), "pollInterval": servedTaskPoll.Milliseconds(),
	}
	if st.message != "" {
		t["statusMessage"] = st.message
	}
	return t
}

func (st *servedTask) terminal() bool {
	return st.status == "completed" || st.status == "failed" || st.status == "cancelled"
}

// servedTaskDone takes the outcome the request would have been answered
// with: the task ends, and the tasks/result requests held get it.
func (c *Client) servedTaskDone(st *servedTask, result []byte, code int64, msg string, data []byte) {
	c.mu.Lock()
	if st.terminal() {
		c.mu.Unlock()
		return
	}
	st.updated = time.Now().UTC()
	if result != nil {
		st.status, st.result = "completed", result
	} else {
		st.status, st.errCode, st.errMsg, st.errData = "failed", code, msg, data
		st.message = msg
	}
	waiting := st.waiting
	st.waiting = nil
	status := jsonx.MustMarshal(st.jsonLocked())
	c.mu.Unlock()
	for _, id := range waiting {
		c.sendTaskResult(st, id)
	}
	if err := c.sendNotification("notifications/tasks/status", status); err != nil && err.Status != StatusClosed {
		c.logf("warning", "could not send notifications/tasks/status: %s", err.Message)
	}
}

// sendTaskResult answers a tasks/result for an ended task.
func (c *Client) sendTaskResult(st *servedTask, id []byte) {
	c.mu.Lock()
	status, result, code, msg, data := st.status, st.result, st.errCode, st.errMsg, st.errData
	c.mu.Unlock()
	switch status {
	case "completed":
		out, err := withRelatedTask(result, st.id)
		if err != nil {
			go c.sendResponse(appendErrorResponse(nil, id, codeInternal, "the task's result is not a JSON object", nil))
			return
		}
		go c.sendResponse(appendResult(nil, id, out))
	case "failed":
		go c.sendResponse(appendErrorResponse(nil, id, code, msg, data))
	default:
		go c.sendResponse(appendErrorResponse(nil, id, codeInternal, "task "+strconv.Quote(st.id)+" was cancelled", nil))
	}
}

// withRelatedTask adds _meta["io.modelcontextprotocol/related-task"] to a
// result object.
func withRelatedTask(result []byte, taskID string) ([]byte, error) {
	var meta map[string]jsonx.RawMessage
	raw := getMember(result, "_meta")
	if raw != nil {
		if err := jsonx.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
	}
	if meta == nil {
		meta = map[string]jsonx.RawMessage{}
	}
	meta[metaRelatedTask] = jsonx.MustMarshal(map[string]string{"taskId": taskID})
	out, err := withField(result, "_meta", meta)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// getMember returns obj[key]'s raw bytes, or nil.
func getMember(obj []byte, key string) []byte {
	var out []byte
	_ = eachMember(obj, func(name string, _, raw []byte) {
		if name == key {
			out = append([]byte(nil), raw...)
		}
	})
	return out
}

// serveTaskQuery answers tasks/get, tasks/result and tasks/cancel.
func (c *Client) serveTaskQuery(req *serverRequest) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if jsonx.Unmarshal(req.params, &p) != nil || p.TaskID == "" {
		c.replyError(req, codeInvalidParams, req.method+" needs params.taskId, a non-empty string", nil)
		return
	}
	c.mu.Lock()
	st := c.served[p.TaskID]
	if st == nil {
		c.mu.Unlock()
		c.replyError(req, codeInvalidParams, "Failed to retrieve task: no task "+strconv.Quote(p.TaskID), nil)
		return
	}
	switch req.method {
	case "tasks/get":
		out := jsonx.MustMarshal(st.jsonLocked())
		c.mu.Unlock()
		c.replyResult(req, out)
	case "tasks/result":
		if !st.terminal() {
			st.waiting = append(st.waiting, req.id)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.sendTaskResult(st, req.id)
	case "tasks/cancel":
		if st.terminal() {
			status := st.status
			c.mu.Unlock()
			c.replyError(req, codeInvalidParams, "task "+strconv.Quote(st.id)+" is already "+status, nil)
			return
		}
		st.status, st.message, st.updated = "cancelled", "cancelled by the server", time.Now().UTC()
		hostIDs, waiting := st.appReqs, st.waiting
		st.appReqs, st.waiting = nil, nil
		out := jsonx.MustMarshal(st.jsonLocked())
		c.mu.Unlock()
		for _, id := range hostIDs {
			if hr := c.takeAppRequest(id); hr != nil {
				c.logf("info", "the server cancelled task %s: app request %d (%s) is dropped", strconv.Quote(st.id), hr.id, hr.kind)
			}
		}
		c.replyResult(req, out)
		for _, id := range waiting {
			c.sendTaskResult(st, id)
		}
	}
}

// serveTaskList answers tasks/list with every task held, in one page.
func (c *Client) serveTaskList(req *serverRequest) {
	c.mu.Lock()
	tasks := make([]*servedTask, 0, len(c.served))
	for _, st := range c.served {
		tasks = append(tasks, st)
	}
	slices.SortFunc(tasks, func(a, b *servedTask) int { return a.created.Compare(b.created) })
	list := make([]any, 0, len(tasks))
	for _, st := range tasks {
		list = append(list, st.jsonLocked())
	}
	c.mu.Unlock()
	c.replyResult(req, jsonx.MustMarshal(map[string]any{"tasks": list}))
}

// endServedTasksLocked forgets every task the client runs for its server,
// with its expiry timer: the connection they belong to is gone (closed,
// lost, restarted or freed), and a timer must not keep the client alive
// for up to an hour after it. Their host questions go with the client's
// other app requests.
func (c *Client) endServedTasksLocked() {
	for id, st := range c.served {
		st.expiry.Stop()
		delete(c.served, id)
	}
}

// dropServedTask forgets a task past its ttl; a question still open for it
// is dropped.
func (c *Client) dropServedTask(id string) {
	defer c.recoverPanic("a task's expiry")
	c.mu.Lock()
	st := c.served[id]
	delete(c.served, id)
	var hostIDs []uint64
	if st != nil {
		hostIDs = st.appReqs
		st.appReqs = nil
	}
	c.mu.Unlock()
	for _, hid := range hostIDs {
		c.takeAppRequest(hid)
	}
}
