package core

import (
	"bytes"
	"slices"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// subscriptions/listen (SEP-2575, basic/patterns/subscriptions) replaces,
// in the 2026-07-28 era, the GET stream and resources/subscribe: the
// client keeps one listen request open whose filter names everything the
// host wants to hear about (list changes the server advertises, the
// resources the host subscribed to, the tasks being awaited). A change of
// the filter opens a new listen; the old one ends once the new one is
// acknowledged, so nothing is missed in between. A listen is never
// replaced before the server acknowledged it: the change waits for that
// acknowledgement (a listen cancelled while the server was still setting it
// up made the TypeScript SDK v2 answer the next one "Method not found").
// Over stdio a server may tear down all of a connection's subscriptions
// when any listen ends (the Go SDK v1.8.0 does, and answers the cancelled
// listen); against such a server, or one not known yet, the old listens
// end first and the new one goes out once the server has answered their
// cancellation or, for a server not known yet, a server/discover sent
// right after it (the stream is ordered: its answer means the cancellation
// was read). A server that does not answer cancelled listens is from then
// on switched like HTTP. Notifications carry the
// listen's request id in _meta; those of a listen the client no longer
// keeps are dropped. They reach the host as the same "notification"
// events a legacy server's produce.

const (
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
	methodListen       = "subscriptions/listen"
	notifyAcknowledged = "notifications/subscriptions/acknowledged"
	// maxRelisten bounds the re-listens after a broken stream without an
	// acknowledgement in between.
	maxRelisten = 5
	// relistenDelay is the first re-listen's delay; each failure doubles it.
	relistenDelay = 100 * time.Millisecond
	// switchBound bounds a stdio switch whose old listens, or whose
	// server/discover fence, the server does not answer: a safety net, not
	// the switch's pace (which the server's answers set).
	switchBound = 5 * time.Second
)

// fenceGrace is how long a cancelled listen may still answer after the
// fence of the first stdio switch: the Go SDK's server answers it only once
// the listen's handler goroutine has woken and torn it down, which often
// comes just after the fence's answer. A server that never answers pays it
// once per connection. A variable for the tests.
var fenceGrace = 250 * time.Millisecond

// listenFilter is the notifications member of subscriptions/listen and of
// its acknowledgement.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs               []string `json:"taskIds,omitempty"`
}

func (f listenFilter) equal(g listenFilter) bool {
	return f.ToolsListChanged == g.ToolsListChanged && f.PromptsListChanged == g.PromptsListChanged &&
		f.ResourcesListChanged == g.ResourcesListChanged && slices.Equal(f.ResourceSubscriptions, g.ResourceSubscriptions) &&
		slices.Equal(f.TaskIDs, g.TaskIDs)
}

func (f *listenFilter) empty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0 && len(f.TaskIDs) == 0
}

// listenState is the client's side of its listen streams. Guarded by c.mu.
type listenState struct {
	lists    listenFilter           // the list changes asked for (from the server's capabilities)
	uris     []string               // resources the host subscribed to
	tasks    []string               // tasks awaited (modern_tasks.go)
	awaiting map[string]*call       // the call following each awaited task
	live     map[int64]*call        // open listens by request id (= subscription id)
	current  int64                  // the newest listen's id, 0 when none
	asked    map[int64]listenFilter // what each open listen asked for
	waiters  []*call                // resources/subscribe calls awaiting an acknowledgement
	failures int                    // re-listens since the last acknowledgement
	timer    *time.Timer            // a pending re-listen
	// closing: on stdio, the listens whose end the next one waits for.
	closing     map[int64]bool
	switchTimer *time.Timer
	// switchGen counts the stdio switches started, so that a fence's
	// grace (fenceTimer) ends only the switch it was armed for.
	switchGen  uint64
	fenceTimer *time.Timer
	// unacked: the current listen is not acknowledged yet; dirty: a
	// filter change waits for that acknowledgement.
	unacked, dirty bool
	// cancelAnswers (stdio): 1 the server answers a cancelled listen, -1
	// it does not (seen at a fence), 0 not known yet.
	cancelAnswers int8
	// probing: cancelled listens kept pending after a fence, whose late
	// answer would show that the server answers them after all.
	probing    map[int64]*call
	probeTimer *time.Timer
	// heard: an acknowledged listen has carried the server's list
	// changes without a break since the last gap (ListChangeGaps).
	heard bool
}

type capsListChanged struct {
	Tools *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"tools"`
	Prompts *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"prompts"`
	Resources *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"resources"`
}

// configureListen records which list changes to listen for: those the
// server advertises, unless the host turned listening off.
func (c *Client) configureListen(rawCaps []byte) {
	if c.opts.NoListen {
		return
	}
	var caps capsListChanged
	if len(rawCaps) > 0 && jsonx.Unmarshal(rawCaps, &caps) != nil {
		return
	}
	c.mu.Lock()
	c.listen.lists = listenFilter{
		ToolsListChanged:     caps.Tools != nil && caps.Tools.ListChanged,
		PromptsListChanged:   caps.Prompts != nil && caps.Prompts.ListChanged,
		ResourcesListChanged: caps.Resources != nil && caps.Resources.ListChanged,
	}
	c.mu.Unlock()
}

// filterLocked is what a listen opened now asks for.
func (c *Client) filterLocked() listenFilter {
	f := c.listen.lists
	f.ResourceSubscriptions = slices.Clone(c.listen.uris)
	f.TaskIDs = slices.Clone(c.listen.tasks)
	return f
}

// relisten opens a listen with the current filter (when there is anything
// to listen for; otherwise the open ones end).
func (c *Client) relisten() {
	c.mu.Lock()
	if c.state != StateReady || c.server == nil || c.server.modern == "" {
		c.mu.Unlock()
		return
	}
	if c.listen.closing != nil {
		c.mu.Unlock()
		return // the switch under way opens the listen once the old ones ended
	}
	if c.listen.current != 0 && c.listen.unacked {
		// Replaced only once acknowledged (onListenAck listens again).
		c.listen.dirty = true
		c.mu.Unlock()
		return
	}
	if !c.headers && len(c.listen.live) > 0 && c.listen.cancelAnswers >= 0 {
		// stdio, against a server that answers cancelled listens or one
		// not known yet: the old listens end first, and the new one goes
		// out once the server answered their cancellation or the fence, so
		// its registration is never undone by their teardown.
		old := c.takeListensLocked(0)
		c.listen.current = 0
		c.listen.closing = map[int64]bool{}
		ids := make([]int64, 0, len(old))
		for _, cl := range old {
			c.listen.closing[cl.reqID] = true
			ids = append(ids, cl.reqID)
		}
		fence := c.listen.cancelAnswers == 0
		c.listen.switchGen++
		c.listen.switchTimer = time.AfterFunc(switchBound, c.finishSwitch)
		c.mu.Unlock()
		// One goroutine, so the fence follows the cancellations on the
		// wire (and no caller, the transport's reader among them, waits on
		// a write).
		for range ids {
			c.cancelNotices.add()
		}
		go func() {
			for _, id := range ids {
				c.sendCancelled(id, "the subscription is replaced or no longer needed")
			}
			if fence {
				c.sendSwitchFence()
			}
		}()
		return
	}
	f := c.filterLocked()
	if f.empty() {
		old := c.takeListensLocked(0)
		c.listen.current = 0
		c.mu.Unlock()
		c.endListens(old)
		return
	}
	params := jsonx.MustMarshal(map[string]any{"notifications": f})
	cl := &call{id: c.nextCallID.Add(1), method: methodListen, params: params, mod: modernCallFor(c.server)}
	// A listen lives until it is replaced or the client closes.
	cl.opts.TimeoutSet, cl.opts.MaxTotalSet = true, true
	c.armTimeouts(cl)
	cl.reqID = c.nextReqID.Add(1)
	reqID := cl.reqID
	cl.internal = func(result []byte, err *Error) { c.onListenEnd(reqID, result, err) }
	c.calls[cl.id] = cl
	livePending.Add(1)
	c.pending[reqID] = cl
	if c.listen.live == nil {
		c.listen.live = map[int64]*call{}
		c.listen.asked = map[int64]listenFilter{}
	}
	c.listen.live[reqID] = cl
	c.listen.asked[reqID] = f
	c.listen.current = reqID
	c.listen.unacked, c.listen.dirty = true, false
	c.mu.Unlock()
	if err := c.sendRequest(cl, reqID, params); err != nil {
		c.finish(cl, err, nil)
	}
}

// finishSwitch ends a stdio switch: the listens that did not answer their
// cancellation in time are forgotten, and the new listen goes out. Changes
// the server announced in between may be lost, so the cached lists are
// made stale.
func (c *Client) finishSwitch() {
	c.mu.Lock()
	if c.listen.closing == nil {
		c.mu.Unlock()
		return
	}
	var stale []*call
	for id := range c.listen.closing {
		if cl := c.pending[id]; cl != nil {
			stale = append(stale, cl)
		}
	}
	c.listen.closing = nil
	if c.listen.switchTimer != nil {
		c.listen.switchTimer.Stop()
	}
	if c.listen.fenceTimer != nil {
		c.listen.fenceTimer.Stop()
	}
	for _, cl := range stale {
		c.retireLocked(cl)
	}
	c.mu.Unlock()
	c.invalidateListCaches()
	c.relisten()
}

// invalidateListCaches makes the cached lists stale: a switch may have
// missed the changes the server announced in between.
func (c *Client) invalidateListCaches() {
	c.mu.Lock()
	c.noteListGapLocked()
	c.mu.Unlock()
	for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		c.cacheInvalidate(m, nil)
	}
}

// forgetListensLocked drops every listen of a connection that is gone (a
// supervised client restarting its server): the new server never saw them,
// so there is nothing to cancel and no switch to wait for, and the next
// ready listens at once. The filter (lists, uris, tasks) is kept: the new
// listen asks for the same. Subscribe calls waiting for an acknowledgement
// were failed with the connection.
func (c *Client) forgetListensLocked() {
	c.noteListGapLocked()
	clear(c.listen.live)
	clear(c.listen.asked)
	c.listen.current = 0
	c.listen.waiters = nil
	c.listen.failures = 0
	c.listen.closing = nil
	if c.listen.switchTimer != nil {
		c.listen.switchTimer.Stop()
	}
	if c.listen.fenceTimer != nil {
		c.listen.fenceTimer.Stop()
	}
	if c.listen.timer != nil {
		c.listen.timer.Stop()
	}
	c.listen.unacked, c.listen.dirty, c.listen.cancelAnswers = false, false, 0
	clear(c.listen.probing)
	if c.listen.probeTimer != nil {
		c.listen.probeTimer.Stop()
	}
}

// takeListensLocked removes the open listens other than keep.
func (c *Client) takeListensLocked(keep int64) []*call {
	var out []*call
	for id, cl := range c.listen.live {
		if id != keep {
			out = append(out, cl)
			delete(c.listen.live, id)
			delete(c.listen.asked, id)
		}
	}
	return out
}

// endListens cancels listens the client no longer keeps: over HTTP by
// closing the stream, over stdio with notifications/cancelled.
func (c *Client) endListens(calls []*call) {
	for _, cl := range calls {
		c.mu.Lock()
		reqID, ok := c.retireLocked(cl)
		c.mu.Unlock()
		if !ok || reqID == 0 {
			continue
		}
		if c.aborter != nil {
			c.aborter.Abort(reqID)
		} else {
			c.cancelNotices.add()
			go c.sendCancelled(reqID, "the subscription is replaced or no longer needed")
		}
	}
}

// subscriptionIDOf reads params._meta's subscription id.
func subscriptionIDOf(params []byte) (int64, bool) {
	var p struct {
		Meta map[string]jsonx.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || jsonx.Unmarshal(params, &p) != nil {
		return 0, false
	}
	raw, ok := p.Meta[metaSubscriptionID]
	if !ok {
		return 0, false
	}
	var id int64
	if jsonx.Unmarshal(raw, &id) != nil {
		return 0, false
	}
	return id, true
}

// onListenNotification takes a notification that may belong to a listen.
// It reports whether the notification is to be dropped: an
// acknowledgement (handled here), or a notification of a listen the
// client no longer keeps.
func (c *Client) onListenNotification(method string, params []byte) bool {
	if method != notifyAcknowledged && !hasMetaKey(params) {
		return false
	}
	id, ok := subscriptionIDOf(params)
	if !ok {
		return method == notifyAcknowledged
	}
	c.mu.Lock()
	_, live := c.listen.live[id]
	c.mu.Unlock()
	if !live {
		c.logf("debug", "dropped %s of subscription %d, which this client no longer keeps", method, id)
		return true
	}
	if method == notifyAcknowledged {
		c.onListenAck(id, params)
		return true
	}
	return false
}

// hasMetaKey is the cheap test that spares the other notifications (a
// legacy server's, progress) a decode.
func hasMetaKey(params []byte) bool {
	return bytes.Contains(params, []byte(metaSubscriptionID))
}

// onListenAck checks what the server agreed to against what was asked,
// answers the resources/subscribe calls waiting for it, and ends the
// listens this one replaces.
func (c *Client) onListenAck(id int64, params []byte) {
	var ack struct {
		Notifications listenFilter `json:"notifications"`
	}
	if jsonx.Unmarshal(params, &ack) != nil {
		c.logf("warning", "ignored a malformed subscription acknowledgement")
		return
	}
	got := ack.Notifications
	c.mu.Lock()
	asked := c.listen.asked[id]
	current := id == c.listen.current
	var done, refused []*call
	dirty := false
	if current {
		// A change asked for meanwhile that this listen already carries
		// (it was opened after the change) needs no new one.
		dirty = c.listen.dirty && !asked.equal(c.filterLocked())
		c.listen.unacked, c.listen.dirty = false, false
		c.listen.failures = 0
		if !c.listen.heard {
			// Changes made before this listen was in place were not
			// heard: a list fetched before now may be out of date.
			c.listen.heard = true
			c.listGaps.Add(1)
		}
		keep := c.listen.waiters[:0]
		for _, w := range c.listen.waiters {
			uri := subscribeURI(w)
			switch {
			case slices.Contains(got.ResourceSubscriptions, uri):
				done = append(done, w)
			case slices.Contains(asked.ResourceSubscriptions, uri):
				refused = append(refused, w)
				c.listen.uris = slices.DeleteFunc(c.listen.uris, func(u string) bool { return u == uri })
			default:
				keep = append(keep, w) // asked for by a newer listen
			}
		}
		c.listen.waiters = keep
	}
	var old []*call
	if current {
		old = c.takeListensLocked(id)
	}
	c.mu.Unlock()
	c.endListens(old)
	var missing []string
	for _, m := range []struct {
		name      string
		want, got bool
	}{{"toolsListChanged", asked.ToolsListChanged, got.ToolsListChanged}, {"promptsListChanged", asked.PromptsListChanged, got.PromptsListChanged}, {"resourcesListChanged", asked.ResourcesListChanged, got.ResourcesListChanged}} {
		if m.want && !m.got {
			missing = append(missing, m.name)
		}
	}
	for _, t := range asked.TaskIDs {
		if !slices.Contains(got.TaskIDs, t) {
			missing = append(missing, "task "+t)
		}
	}
	if len(missing) > 0 {
		c.logf("info", "the server did not agree to every notification asked for (%v); the client goes on without them", missing)
	}
	for _, w := range done {
		c.finish(w, nil, []byte("{}"))
	}
	for _, w := range refused {
		c.finish(w, Errorf(StatusUnsupported, "the server did not acknowledge a subscription to %s", subscribeURI(w)), nil)
	}
	if dirty {
		c.relisten() // the filter changed while this listen was being set up
	}
}

// onListenEnd takes the end of a listen request: a result is the server
// ending it gracefully; a transport failure (a broken stream) re-listens
// with backoff; a JSON-RPC error is final and fails the waiting
// subscribe calls.
func (c *Client) onListenEnd(id int64, result []byte, err *Error) {
	c.mu.Lock()
	if c.listen.closing[id] {
		delete(c.listen.closing, id)
		if err == nil && c.listen.cancelAnswers == 0 {
			c.listen.cancelAnswers = 1 // from now on the switch waits for this answer
		}
		last := len(c.listen.closing) == 0
		c.mu.Unlock()
		if last {
			c.finishSwitch()
		}
		return
	}
	if _, probed := c.listen.probing[id]; probed {
		delete(c.listen.probing, id)
		redo := false
		if err == nil && c.listen.cancelAnswers < 0 {
			// It answers after all, later than fenceGrace: later switches
			// wait for that answer, and this one is redone. The server
			// read the cancellation before the fence, but tears the
			// listen down only when its handler returns, just before this
			// answer: the Go SDK's handler, woken by the cancellation,
			// then deletes the session's list-change registration,
			// whichever listen made it, so the listen opened after the
			// fence may hear nothing more (seen under load). A listen
			// opened after this answer is registered after that teardown.
			c.listen.cancelAnswers = 1
			redo = c.listen.current != 0
		}
		c.mu.Unlock()
		if redo {
			c.relisten()
		}
		return
	}
	_, live := c.listen.live[id]
	delete(c.listen.live, id)
	delete(c.listen.asked, id)
	current := live && id == c.listen.current
	if current {
		c.listen.current = 0
		c.listen.unacked = false
		c.noteListGapLocked() // nothing carries the server's changes now
	}
	ready := c.state == StateReady
	var waiters []*call
	if current && (err == nil || err.Code != nil || c.listen.failures >= maxRelisten) {
		waiters = c.listen.waiters
		c.listen.waiters = nil
	}
	retry := current && ready && err != nil && err.Code == nil && err.Status != StatusClosed && c.listen.failures < maxRelisten
	if retry {
		c.listen.failures++
		delay := relistenDelay << (c.listen.failures - 1)
		if c.listen.timer != nil {
			c.listen.timer.Stop()
		}
		c.listen.timer = time.AfterFunc(delay, c.relisten)
	}
	c.mu.Unlock()
	switch {
	case !live:
	case err == nil:
		// SubscriptionsListenResult: the server tore the subscription down
		// gracefully (shutting down, say). It is not reopened; the host
		// hears that its subscriptions ended.
		if sid, ok := subscriptionIDOf(result); !ok || sid != id {
			c.logf("warning", "the server ended subscription %d with a result whose _meta does not name it (%s)", id, metaSubscriptionID)
		}
		c.logf("warning", "the server ended subscription %d: list changes and resource updates it carried are no longer delivered", id)
	case retry:
		c.logf("warning", "subscription %d broke (%s); listening again", id, err.Message)
	case err.Status != StatusClosed:
		c.logf("warning", "subscriptions/listen failed: %s", err.Message)
	}
	for _, w := range waiters {
		if err == nil {
			c.finish(w, Errorf(StatusClosed, "the server ended the subscription to %s before acknowledging it", subscribeURI(w)), nil)
			continue
		}
		c.finish(w, &Error{Status: err.Status, Code: err.Code, Data: err.Data, Message: "subscriptions/listen failed: " + err.Message}, nil)
	}
}

// isListenMethod: in the modern era these are served through the listen
// stream rather than sent.
func isListenMethod(method string) bool {
	return method == "resources/subscribe" || method == "resources/unsubscribe"
}

func subscribeURI(cl *call) string {
	var p struct {
		URI string `json:"uri"`
	}
	_ = jsonx.Unmarshal(cl.params, &p)
	return p.URI
}

// serveSubscribe carries out resources/subscribe and unsubscribe in the
// modern era: the uri joins (or leaves) the listen filter and a new listen
// goes out. subscribe completes when the server acknowledges the uri;
// unsubscribe at once. The call is registered and its timer armed.
func (c *Client) serveSubscribe(cl *call) {
	uri := subscribeURI(cl)
	if c.opts.NoListen {
		// protocol.listen false means no listen at all: a subscription
		// could only be served by one.
		c.finish(cl, Errorf(StatusInvalidState, "%s needs a subscriptions/listen stream, which protocol.listen false turns off", cl.method), nil)
		return
	}
	if uri == "" {
		c.finish(cl, Errorf(StatusInvalidArgument, "%s needs params.uri, a non-empty string", cl.method), nil)
		return
	}
	c.mu.Lock()
	if cl.method == "resources/subscribe" {
		if !slices.Contains(c.listen.uris, uri) {
			c.listen.uris = append(c.listen.uris, uri)
		}
		c.listen.waiters = append(c.listen.waiters, cl)
	} else {
		c.listen.uris = slices.DeleteFunc(c.listen.uris, func(u string) bool { return u == uri })
	}
	c.mu.Unlock()
	c.relisten()
	if cl.method == "resources/unsubscribe" {
		c.finish(cl, nil, []byte("{}"))
	}
}

// sendSwitchFence sends server/discover after the cancellations of a stdio
// switch against a server not known yet: the stream is ordered, so its
// answer means the server has read them (onSwitchFence).
func (c *Client) sendSwitchFence() {
	c.mu.Lock()
	if c.state != StateReady || c.server == nil {
		c.mu.Unlock()
		return
	}
	cl := &call{id: c.nextCallID.Add(1), method: "server/discover", mod: modernCallFor(c.server)}
	cl.opts.TimeoutSet, cl.opts.Timeout = true, switchBound
	cl.internal = func([]byte, *Error) { c.onSwitchFence() }
	c.armTimeouts(cl)
	reqID := c.registerLocked(cl)
	c.mu.Unlock()
	if err := c.sendRequest(cl, reqID, nil); err != nil {
		c.finish(cl, err, nil)
	}
}

// onSwitchFence: the server read the cancellations. A cancelled listen
// it answers may still be answered a moment later (fenceGrace): the
// switch waits that long for the answers before it concludes
// (concludeFence).
func (c *Client) onSwitchFence() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listen.closing == nil {
		return // every cancelled listen answered first: the switch is done
	}
	gen := c.listen.switchGen
	if c.listen.fenceTimer != nil {
		c.listen.fenceTimer.Stop()
	}
	c.listen.fenceTimer = time.AfterFunc(fenceGrace, func() { c.concludeFence(gen) })
}

// concludeFence ends the grace of switch gen's fence: listens the server
// has not answered by now it does not answer (the TypeScript and Python
// SDKs): the switch goes on, and later ones open the new listen first. The
// unanswered ones stay pending a while (probing), in case a late answer
// shows otherwise (then later switches wait for the answers).
func (c *Client) concludeFence(gen uint64) {
	c.mu.Lock()
	if c.listen.closing == nil || c.listen.switchGen != gen {
		c.mu.Unlock()
		return // the cancelled listens answered in time, or another switch runs
	}
	if c.listen.probing == nil {
		c.listen.probing = map[int64]*call{}
	}
	for id := range c.listen.closing {
		if cl := c.pending[id]; cl != nil {
			c.listen.probing[id] = cl
		}
	}
	c.listen.closing = nil
	c.listen.cancelAnswers = -1
	if c.listen.switchTimer != nil {
		c.listen.switchTimer.Stop()
	}
	if c.listen.probeTimer != nil {
		c.listen.probeTimer.Stop()
	}
	c.listen.probeTimer = time.AfterFunc(switchBound, c.endProbing)
	c.mu.Unlock()
	c.invalidateListCaches() // changes announced in between may be lost
	c.relisten()
}

// endProbing forgets the cancelled listens that never answered.
func (c *Client) endProbing() {
	c.mu.Lock()
	for id, cl := range c.listen.probing {
		c.retireLocked(cl)
		delete(c.listen.probing, id)
	}
	c.mu.Unlock()
}

// ListChangeGaps counts the times the client may have missed a list
// change the server announced: a listen that broke, ended or was switched
// without an acknowledged one in between, and each acknowledgement that
// ends such a gap (the first listen's too: a change made before it was in
// place went unheard). A list fetched while the count stays the same is
// current unless a list_changed notification says otherwise; the host
// keeps a 2026-07-28 server's lists on that promise (host/lists.go).
func (c *Client) ListChangeGaps() uint64 { return c.listGaps.Load() }

// HearsListChanges reports whether a 2026-07-28 server's list changes
// reach the client now: only a listen stream carries them in that era, so
// it is false with protocol.listen off (Options.NoListen) and, for a
// server that announces list changes, while no acknowledged listen
// carries them (before the first acknowledgement, after a listen failed
// or the server ended it). A server that announces none has none to miss.
func (c *Client) HearsListChanges() bool {
	if c.opts.NoListen {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.listen.lists
	return c.listen.heard || !(f.ToolsListChanged || f.PromptsListChanged || f.ResourcesListChanged)
}

// noteListGapLocked records that list changes may go unheard from now
// until the next acknowledged listen. c.mu is held.
func (c *Client) noteListGapLocked() {
	c.listen.heard = false
	c.listGaps.Add(1)
}
