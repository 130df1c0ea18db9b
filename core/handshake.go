package core

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// serverState is what the handshake learned.
type serverState struct {
	version string
	// modern is the 2026-07-28-era version every request carries in _meta
	// (and HTTP in MCP-Protocol-Version); "" in the legacy era.
	modern string
	// meta is the members the client adds to every modern request's _meta:
	// version, capabilities and client info, encoded once.
	meta     []byte
	caps     serverCaps
	infoJSON []byte
	identity []byte // the server's serverInfo object
}

// serverCaps are the capabilities calls are gated on.
type serverCaps struct {
	tools, resources, subscribe, prompts, logging, completions bool
	// 2025-11-25 tasks: tasks.requests.tools.call, tasks.list, tasks.cancel.
	taskTools, taskList, taskCancel bool
}

type initializeResult struct {
	ProtocolVersion string           `json:"protocolVersion"`
	Capabilities    jsonx.RawMessage `json:"capabilities"`
	ServerInfo      jsonx.RawMessage `json:"serverInfo"`
	Instructions    *string          `json:"instructions,omitempty"`
}

type capabilityFlags struct {
	Tools     *struct{} `json:"tools"`
	Resources *struct {
		Subscribe bool `json:"subscribe"`
	} `json:"resources"`
	Prompts     *struct{} `json:"prompts"`
	Logging     *struct{} `json:"logging"`
	Completions *struct{} `json:"completions"`
	Tasks       *struct {
		List     *struct{} `json:"list"`
		Cancel   *struct{} `json:"cancel"`
		Requests struct {
			Tools struct {
				Call *struct{} `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	} `json:"tasks"`
}

// startHandshake sends initialize offering version. tried holds versions
// already refused by the server, so a retry never loops.
func (c *Client) startHandshake(version string, tried []string) {
	params := c.initializeParams(version)
	cl := &call{id: c.nextCallID.Add(1), method: "initialize", params: params}
	cl.internal = func(result []byte, err *Error) { c.onInitialize(version, append(tried, version), result, err) }
	c.armReadyTimeout(cl)
	c.sendHandshakeCall(cl, params, c.handshakingLocked)
}

// armReadyTimeout bounds one of the handshake's own requests by the
// ready timeout alone. The call defaults (call_ms, max_total_ms) bound
// calls: a tight max_total_ms would time out the probe of a server that is
// merely slow to start, and the fallback's initialize would then reach a
// server that had answered server/discover on the same connection, which
// refuses it as a duplicate.
func (c *Client) armReadyTimeout(cl *call) {
	ready := c.opts.Timeouts.Ready
	cl.opts.TimeoutSet, cl.opts.Timeout = true, ready
	cl.opts.MaxTotalSet, cl.opts.MaxTotal = true, ready
	c.armTimeouts(cl)
}

// sendHandshakeCall registers one of the handshake's own requests
// (initialize, the server/discover probe) as pending and sends it, unless
// still (called under c.mu) says the handshake has moved on meanwhile.
func (c *Client) sendHandshakeCall(cl *call, params []byte, still func() bool) {
	c.mu.Lock()
	if !still() {
		c.mu.Unlock()
		return
	}
	reqID := c.registerLocked(cl)
	c.mu.Unlock()
	if err := c.sendRequest(cl, reqID, params); err != nil {
		c.finish(cl, err, nil)
	}
}

// handshakingLocked reports whether an initialize is wanted: the first
// handshake, or a re-initialization after the session expired.
func (c *Client) handshakingLocked() bool {
	return c.state == StateConnecting || (c.state == StateReady && c.reinit)
}

// initializeParams builds initialize's params: the offered version, the
// capabilities the host can answer for, and the client's identity.
func (c *Client) initializeParams(version string) []byte {
	return jsonx.MustMarshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    c.clientCapabilities(version),
		"clientInfo":      c.clientInfo(),
	})
}

// clientCapabilities are the capabilities the host can answer for, in the
// shape of version: 2026-07-28 has no roots.listChanged (the notification
// is gone).
func (c *Client) clientCapabilities(version string) map[string]any {
	h := c.opts.Handlers
	caps := map[string]any{}
	if h.Roots {
		if isModern(version) {
			caps["roots"] = map[string]any{}
		} else {
			caps["roots"] = map[string]any{"listChanged": h.RootsListChange}
		}
	}
	if c.samplingEnabled() {
		sampling := map[string]any{}
		if h.SamplingTools {
			sampling["tools"] = map[string]any{}
		}
		if h.SamplingContext {
			sampling["context"] = map[string]any{}
		}
		caps["sampling"] = sampling
	}
	if len(c.opts.Experimental) > 0 {
		caps["experimental"] = jsonx.RawMessage(c.opts.Experimental)
	}
	c.receiverTasksCapability(caps, version)
	if h.Elicitation {
		modes := map[string]any{}
		if version >= "2025-11-25" {
			if h.ElicitForm {
				modes["form"] = map[string]any{}
			}
			if h.ElicitURL {
				modes["url"] = map[string]any{}
			}
		}
		caps["elicitation"] = modes
	}
	return caps
}

// clientInfo is the client's Implementation object.
func (c *Client) clientInfo() map[string]any {
	ci := c.opts.ClientInfo
	info := map[string]any{"name": ci.Name, "version": ci.Version}
	if ci.Title != "" {
		info["title"] = ci.Title
	}
	if ci.Description != "" {
		info["description"] = ci.Description
	}
	if ci.WebsiteURL != "" {
		info["websiteUrl"] = ci.WebsiteURL
	}
	return info
}

// onInitialize takes initialize's response.
func (c *Client) onInitialize(offered string, tried []string, result []byte, err *Error) {
	if err != nil {
		if err.Status == StatusProtocol {
			if next, ok := c.retryVersion(err, tried); ok {
				c.startHandshake(next, tried)
				return
			}
			err = &Error{Status: StatusProtocol, Message: "the server refused initialize: " + err.Message, Code: err.Code, Data: err.Data}
		} else if err.Status == StatusTimeout {
			err = Errorf(StatusTimeout, "the server did not answer initialize within %s", formatMS(c.opts.Timeouts.Ready))
		} else if err.Status == StatusClosed {
			err = closedBeforeHandshake(err.Message)
		}
		if c.deferInitFailure(err) {
			return // the server/discover probe may still answer
		}
		if held := c.takeHeldDiscover(true); held != nil && err.Status != StatusClosed {
			held() // the server refused initialize: the probe's era stands
			return
		}
		c.failHandshake(err)
		return
	}
	if c.takeHeldDiscover(false) != nil {
		c.logf("info", "the server answered initialize after server/discover on the same connection, so it serves this connection in the legacy era")
	}
	c.mu.Lock()
	handshaking := c.handshakingLocked()
	c.mu.Unlock()
	if !handshaking {
		return // server/discover won the race
	}
	c.dropProbe()
	var res initializeResult
	if uerr := jsonx.Unmarshal(result, &res); uerr != nil || res.ProtocolVersion == "" {
		c.failHandshake(Errorf(StatusProtocol, "the server's initialize result is malformed (no protocolVersion)"))
		return
	}
	if !slices.Contains(c.opts.Versions, res.ProtocolVersion) {
		c.failHandshake(Errorf(StatusUnsupported,
			"the server chose protocol version %q, which this client does not support (offered %q; supported: %s)",
			res.ProtocolVersion, offered, strings.Join(c.opts.Versions, ", ")))
		return
	}
	st := &serverState{version: res.ProtocolVersion}
	caps, cerr := parseServerCaps(res.Capabilities, res.ProtocolVersion)
	if cerr != nil {
		c.failHandshake(cerr)
		return
	}
	st.caps = caps
	st.infoJSON = c.serverInfoJSON(&res, "legacy")
	st.identity = orEmptyObject(res.ServerInfo)
	if n, ok := c.tr.(transport.Negotiator); ok {
		n.SetProtocolVersion(res.ProtocolVersion)
	}

	// initialized goes out before anything queued.
	if nerr := c.sendNotification("notifications/initialized", nil); nerr != nil {
		c.failHandshake(&Error{Status: nerr.Status, Message: "could not send notifications/initialized: " + nerr.Message})
		return
	}
	c.mu.Lock()
	if c.state == StateReady && c.reinit {
		c.server, c.reinit = st, false
		c.startSessionLocked() // a new session (endSessionLocked ended the expired one)
		queued := c.queued
		c.queued = nil
		c.mu.Unlock()
		c.sendQueued(queued)
		return
	}
	c.mu.Unlock()
	c.becomeReady(st)
}

// becomeReady ends the first handshake (initialize or server/discover):
// the client is ready, the host hears so, and the calls that waited go out.
func (c *Client) becomeReady(st *serverState) {
	c.mu.Lock()
	if c.state != StateConnecting {
		c.mu.Unlock()
		return
	}
	c.state, c.server = StateReady, st
	c.startSessionLocked()
	if c.sup != nil {
		c.sup.restarting = false
	}
	queued := c.queued
	c.queued = nil
	close(c.ready)
	c.mu.Unlock()

	ready := make([]byte, 0, len(st.infoJSON)+16)
	ready = append(ready, `{"server":`...)
	ready = append(ready, st.infoJSON...)
	ready = append(ready, '}')
	c.emit("ready", ready, false)
	c.sendQueued(queued)
}

// retryVersion picks a version to retry with when the server refused ours
// and listed what it supports (error data {"supported": [...]}).
func (c *Client) retryVersion(err *Error, tried []string) (string, bool) {
	if len(err.Data) == 0 {
		return "", false
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	if jsonx.Unmarshal(err.Data, &data) != nil {
		return "", false
	}
	for _, v := range c.opts.Versions {
		if slices.Contains(data.Supported, v) && !slices.Contains(tried, v) {
			return v, true
		}
	}
	return "", false
}

// parseServerCaps reads the capabilities calls are gated on.
func parseServerCaps(raw []byte, version string) (serverCaps, *Error) {
	var flags capabilityFlags
	if len(raw) > 0 {
		if uerr := jsonx.Unmarshal(raw, &flags); uerr != nil {
			return serverCaps{}, Errorf(StatusProtocol, "the server's capabilities are malformed")
		}
	}
	caps := serverCaps{
		tools:       flags.Tools != nil,
		resources:   flags.Resources != nil,
		subscribe:   flags.Resources != nil && flags.Resources.Subscribe,
		prompts:     flags.Prompts != nil,
		logging:     flags.Logging != nil,
		completions: flags.Completions != nil || version == "2024-11-05",
	}
	if t := flags.Tasks; t != nil && version >= "2025-11-25" && !isModern(version) {
		caps.taskTools = t.Requests.Tools.Call != nil
		caps.taskList = t.List != nil
		caps.taskCancel = t.Cancel != nil
	}
	return caps, nil
}

// serverInfoJSON is what ServerInfo and the ready event report; era is
// "legacy" or "modern".
func (c *Client) serverInfoJSON(res *initializeResult, era string) []byte {
	info := map[string]any{
		"protocolVersion": res.ProtocolVersion,
		"capabilities":    jsonx.RawMessage(orEmptyObject(res.Capabilities)),
		"serverInfo":      jsonx.RawMessage(orEmptyObject(res.ServerInfo)),
		"transport":       c.tr.Name(),
		"era":             era,
	}
	if res.Instructions != nil {
		info["instructions"] = *res.Instructions
	}
	if sb := c.SandboxReport(); sb != nil {
		info["sandbox"] = sb
	}
	return jsonx.MustMarshal(info)
}

// SandboxReport is what confines the server of the current start (the
// sandbox helper's report: namespaces, Landlock ABI and rights, seccomp,
// network, limits, reaper), nil when it is not confined.
func (c *Client) SandboxReport() any {
	if r, ok := c.tr.(transport.SandboxReporter); ok {
		return r.SandboxReport()
	}
	return nil
}

func orEmptyObject(raw []byte) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}")
	}
	return raw
}

// closedBeforeHandshake is the handshake's failure when the connection
// went away under it: said the same whether the transport reported the
// close (Closed) or initialize could not be sent (a server that exited at
// once: its stdin closed), whichever the client noticed first.
func closedBeforeHandshake(reason string) *Error {
	return Errorf(StatusClosed, "the connection closed before the handshake completed: %s", reason)
}

// failHandshake ends the handshake in StateFailed and tears the transport
// down so that nothing is left running.
func (c *Client) failHandshake(err *Error) {
	c.mu.Lock()
	if c.state == StateReady && c.reinit {
		// The session stays broken for the calls that waited on it; the next
		// expiry tries again.
		c.reinit = false
		failed := c.takeQueuedLocked()
		c.mu.Unlock()
		c.failCalls(failed, &Error{Status: StatusClosed, Message: "the session expired and re-initializing failed: " + err.Message, Code: err.Code, Data: err.Data})
		return
	}
	if c.state != StateConnecting {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if c.sup != nil && c.retireGeneration(err) {
		return
	}
	c.mu.Lock()
	if c.state != StateConnecting {
		c.mu.Unlock()
		return
	}
	c.state, c.stateErr = StateFailed, err
	failed := c.takeQueuedLocked()
	close(c.ready)
	c.mu.Unlock()
	c.failCalls(failed, &Error{Status: err.Status, Message: "the handshake failed: " + err.Message, Code: err.Code, Data: err.Data})
	c.emitError("failed", err)
	go func() {
		defer c.recoverPanic("the teardown after a failed handshake")
		ctx, cancel := context.WithTimeout(context.Background(), 3*c.opts.Timeouts.CloseGrace+time.Second)
		defer cancel()
		c.closeTransport(ctx)
	}()
}

// sendQueued sends the calls accepted before the client was ready.
func (c *Client) sendQueued(queued []*call) {
	for _, cl := range queued {
		c.mu.Lock()
		if cl.finished {
			c.mu.Unlock()
			continue
		}
		if err := c.server.gate(cl.method); err != nil {
			c.mu.Unlock()
			c.finish(cl, err, nil)
			continue
		}
		cl.mod = modernCallFor(c.server)
		if cl.mod != nil && isListenMethod(cl.method) {
			c.mu.Unlock()
			c.serveSubscribe(cl)
			continue
		}
		if c.wantsLegacyTask(cl) {
			c.mu.Unlock()
			c.legacyTaskSend(cl)
			continue
		}
		reqID := c.nextRequestLocked(cl)
		c.mu.Unlock()
		if err := c.sendRequest(cl, reqID, cl.params); err != nil {
			c.finish(cl, err, nil)
		}
	}
}

// gate checks that the server declared the capability method needs, so an
// undeclared feature fails locally without a round trip.
func (s *serverState) gate(method string) *Error {
	if s.modern != "" {
		if err := modernGate(method, s.modern); err != nil {
			return err
		}
	}
	var need string
	var ok bool
	switch method {
	case "tools/list", "tools/call":
		need, ok = "tools", s.caps.tools
	case "resources/list", "resources/templates/list", "resources/read":
		need, ok = "resources", s.caps.resources
	case "resources/subscribe", "resources/unsubscribe":
		need, ok = "resources.subscribe", s.caps.subscribe
	case "prompts/list", "prompts/get":
		need, ok = "prompts", s.caps.prompts
	case "logging/setLevel":
		need, ok = "logging", s.caps.logging
	case "completion/complete":
		need, ok = "completions", s.caps.completions
	case "tasks/list":
		if s.modern != "" {
			return nil
		}
		need, ok = "tasks.list", s.caps.taskList
	case "tasks/cancel":
		if s.modern != "" {
			return nil
		}
		need, ok = "tasks.cancel", s.caps.taskCancel
	default:
		return nil
	}
	if ok {
		return nil
	}
	return Errorf(StatusUnsupported, "the server did not declare the %q capability, which %s needs", need, method)
}
