package core

import (
	"slices"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// JSON-RPC error codes of the 2026-07-28 era that only a modern server
// sends: a probe refused with one of them still proves the server modern.
const (
	codeHeaderMismatch          = -32020
	codeMissingClientCapability = -32021
	codeUnsupportedVersion      = -32022
)

// probeGrace is how long ModeAuto waits for server/discover alone: a
// legacy server may never answer an unknown method. Past it, initialize
// goes out alongside the probe and the first handshake to succeed decides
// the era, so a slow modern server (one that takes seconds to start) is
// still found and a silent legacy server costs at most this much more.
const probeGrace = time.Second

// probeState is ModeAuto's race between a pending server/discover and an
// initialize sent after probeGrace. Guarded by c.mu.
type probeState struct {
	racing  bool   // initialize went out alongside the probe
	done    bool   // the probe has its answer (or its error)
	initErr *Error // initialize failed while the probe was pending
	timer   *time.Timer
	call    *call // the first probe, withdrawn when initialize wins
	// On a transport without per-message headers (stdio) the server picks
	// the era per connection, and it reads the race's initialize after the
	// server/discover it has answered: a dual-era server (the TypeScript
	// SDK v2's serveStdio) then serves the connection in the legacy era.
	// A probe that wins there waits in held for initialize's answer, which
	// decides: success means legacy, failure means the held probe's era.
	held         func()
	initAnswered bool // initialize's final answer has come
	initFailed   bool // ... and it was an error
}

func isModern(version string) bool { return version >= "2026-07-28" }

func isModernErrorCode(code int64) bool {
	return code == codeUnsupportedVersion || code == codeMissingClientCapability || code == codeHeaderMismatch
}

// startEra begins the first handshake the configured mode asks for.
func (c *Client) startEra() {
	// A supervised client's next generation races afresh: the last one's
	// probe outcome (done, racing, a held initialize failure) is not its.
	c.mu.Lock()
	if c.probe.timer != nil {
		c.probe.timer.Stop()
	}
	c.probe = probeState{}
	c.mu.Unlock()
	if c.opts.Mode == ModeLegacy || c.opts.Mode == "" || len(c.opts.Modern) == 0 ||
		(c.opts.Mode == ModeAuto && c.legacyOnly && len(c.opts.Versions) > 0) {
		c.startHandshake(c.opts.Versions[0], nil)
		return
	}
	c.startDiscover(c.opts.Modern[0], nil)
}

type discoverResult struct {
	SupportedVersions []string         `json:"supportedVersions"`
	Capabilities      jsonx.RawMessage `json:"capabilities"`
	Instructions      *string          `json:"instructions,omitempty"`
	// ServerInfo is where the release candidate put the server's identity;
	// the published revision moved it to _meta, which is read first.
	ServerInfo jsonx.RawMessage `json:"serverInfo"`
	Meta       struct {
		ServerInfo jsonx.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// identity is the server's Implementation: _meta's (published 2026-07-28),
// else the serverInfo member of servers written to the release candidate.
func (r *discoverResult) identity() jsonx.RawMessage {
	if len(r.Meta.ServerInfo) > 0 && string(r.Meta.ServerInfo) != "null" {
		return r.Meta.ServerInfo
	}
	return r.ServerInfo
}

// startDiscover probes with server/discover carrying version in _meta.
// tried holds versions already refused, so a retry never loops.
func (c *Client) startDiscover(version string, tried []string) {
	cl := &call{id: c.nextCallID.Add(1), method: "server/discover", mod: &modernCall{version: version, meta: c.modernMeta(version)}}
	cl.internal = func(result []byte, err *Error) { c.onDiscover(version, append(tried, version), result, err) }
	c.armReadyTimeout(cl) // the probe may take the whole ready timeout
	if c.opts.Mode == ModeAuto && len(tried) == 0 && len(c.opts.Versions) > 0 {
		c.mu.Lock()
		c.probe.timer = time.AfterFunc(min(probeGrace, c.opts.Timeouts.Ready/3), c.onProbeGrace)
		c.probe.call = cl
		c.mu.Unlock()
	}
	c.sendHandshakeCall(cl, nil, func() bool { return c.state == StateConnecting })
}

// onProbeGrace sends initialize alongside a probe still unanswered.
func (c *Client) onProbeGrace() {
	c.mu.Lock()
	if c.state != StateConnecting || c.probe.done || c.probe.racing {
		c.mu.Unlock()
		return
	}
	c.probe.racing = true
	c.mu.Unlock()
	c.logf("info", "server/discover is not answered yet; sending initialize alongside it")
	c.startHandshake(c.opts.Versions[0], nil) // the race's own initialize
}

// probeAnswered records the probe's outcome. It reports whether the
// probe still decides: false when the client is no longer connecting
// (initialize won the race).
func (c *Client) probeAnswered() (decides, racing bool, initErr *Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probe.done = true
	if c.probe.timer != nil {
		c.probe.timer.Stop()
	}
	return c.state == StateConnecting, c.probe.racing, c.probe.initErr
}

// deferInitFailure keeps an initialize failure while the probe it races
// is pending: the probe may still find a modern server. It reports
// whether the failure was kept.
func (c *Client) deferInitFailure(err *Error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probe.racing && !c.probe.done && c.state == StateConnecting {
		c.probe.initErr = err
		return true
	}
	return false
}

// fallBackToInitialize starts the legacy handshake, unless the race's
// initialize is already under way.
func (c *Client) fallBackToInitialize() {
	c.mu.Lock()
	racing := c.probe.racing
	c.mu.Unlock()
	if !racing {
		c.startHandshake(c.opts.Versions[0], nil)
	}
}

// dropProbe forgets a probe still pending once initialize won the race:
// the server never answered it and nothing waits for it.
func (c *Client) dropProbe() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probe.racing && !c.probe.done && c.probe.call != nil {
		c.probe.done = true
		c.retireLocked(c.probe.call)
	}
}

// onDiscover takes the probe's outcome (spec 2026-07-28, versioning,
// backward compatibility): a DiscoverResult means a modern server; a
// modern error (-32022 with the supported list) means a modern server
// that wants another version; anything else, or silence, means a legacy
// server, which ModeAuto then initializes.
func (c *Client) onDiscover(offered string, tried []string, result []byte, err *Error) {
	decides, racing, initErr := c.probeAnswered()
	if !decides {
		return
	}
	if racing && err != nil && !(err.Status == StatusProtocol && err.Code != nil && isModernErrorCode(*err.Code)) {
		// Not a modern server: the initialize under way decides, or has
		// failed already.
		if initErr != nil {
			c.failHandshake(initErr)
		}
		return
	}
	if err != nil {
		c.onDiscoverError(offered, tried, err)
		return
	}
	if racing && initErr == nil && !c.headers && c.holdDiscover(func() { c.onDiscoverResult(offered, result) }) {
		return
	}
	c.onDiscoverResult(offered, result)
}

// holdDiscover keeps a winning probe's continuation until the race's
// initialize has answered on a connection-scoped transport (see
// probeState.held). It reports false when the probe decides now: the
// initialize has failed already.
func (c *Client) holdDiscover(cont func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateConnecting {
		return true
	}
	if !c.probe.initAnswered {
		c.probe.held = cont
		return true
	}
	return !c.probe.initFailed // a successful initialize decides (legacy)
}

// takeHeldDiscover records initialize's final answer and returns the probe
// continuation held for it, if any.
func (c *Client) takeHeldDiscover(failed bool) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probe.initAnswered, c.probe.initFailed = true, failed
	held := c.probe.held
	c.probe.held = nil
	return held
}

// onDiscoverResult takes a DiscoverResult: the version, then ready.
func (c *Client) onDiscoverResult(offered string, result []byte) {
	var res discoverResult
	if uerr := jsonx.Unmarshal(result, &res); uerr != nil || res.SupportedVersions == nil {
		c.legacyOrFail(Errorf(StatusProtocol, "the server's server/discover result is malformed (no supportedVersions)"))
		return
	}
	version := ""
	if slices.Contains(res.SupportedVersions, offered) {
		version = offered
	} else {
		for _, v := range c.opts.Modern {
			if slices.Contains(res.SupportedVersions, v) {
				version = v
				break
			}
		}
	}
	if version == "" {
		// A server that discovers but offers only legacy revisions (a
		// stateful dual-era server, for one) is spoken to through
		// initialize, when the client may.
		if c.opts.Mode == ModeAuto && c.commonLegacy(res.SupportedVersions) {
			c.logf("info", "the server supports only legacy protocol versions (%s); using initialize", strings.Join(res.SupportedVersions, ", "))
			c.fallBackToInitialize()
			return
		}
		c.failHandshake(Errorf(StatusUnsupported,
			"the server supports protocol versions %s, none of which this client accepts (%s)",
			strings.Join(res.SupportedVersions, ", "), strings.Join(c.acceptedVersions(), ", ")))
		return
	}
	caps, cerr := parseServerCaps(res.Capabilities, version)
	if cerr != nil {
		c.failHandshake(cerr)
		return
	}
	if version == offered {
		c.cacheDiscover(result)
	}
	c.configureListen(res.Capabilities)
	st := &serverState{version: version, modern: version, caps: caps}
	st.meta = c.modernMeta(version)
	st.identity = orEmptyObject(res.identity())
	st.infoJSON = c.serverInfoJSON(&initializeResult{
		ProtocolVersion: version,
		Capabilities:    res.Capabilities,
		ServerInfo:      res.identity(),
		Instructions:    res.Instructions,
	}, "modern")
	c.becomeReady(st)
	c.relisten()
}

func (c *Client) onDiscoverError(offered string, tried []string, err *Error) {
	if err.Status == StatusProtocol && err.Code != nil && isModernErrorCode(*err.Code) {
		if *err.Code == codeUnsupportedVersion {
			// The best version both sides support, even the one just
			// offered: a server may refuse a first request for reasons of
			// its own and list it anyway. The attempts are bounded, so a
			// server that keeps refusing cannot loop the client.
			supported := supportedList(err.Data)
			if len(tried) <= len(c.opts.Modern) {
				for _, v := range c.opts.Modern {
					if slices.Contains(supported, v) {
						c.startDiscover(v, tried)
						return
					}
				}
			}
			// The server named only legacy revisions it shares with us:
			// that is a version choice, and initialize is how it is spoken.
			if c.opts.Mode == ModeAuto && c.commonLegacy(supported) {
				c.fallBackToInitialize()
				return
			}
			c.failHandshake(&Error{Status: StatusUnsupported, Code: err.Code, Data: err.Data, Message: "the server supports none of the protocol versions this client accepts (offered " +
				offered + "; the server supports " + strings.Join(supported, ", ") + "): " + err.Message})
			return
		}
		c.failHandshake(&Error{Status: StatusProtocol, Code: err.Code, Data: err.Data, Message: "the server refused server/discover: " + err.Message})
		return
	}
	switch err.Status {
	case StatusProtocol, StatusTimeout, StatusTransport:
		if err.Status == StatusTimeout {
			err = Errorf(StatusTimeout, "the server did not answer server/discover within %s", formatMS(c.opts.Timeouts.Ready))
		}
		c.legacyOrFail(err)
	case StatusClosed: // no sign of the era either
		c.failHandshake(closedBeforeHandshake(err.Message))
	default:
		// Authorization and the like are no sign of the era.
		c.failHandshake(err)
	}
}

// legacyOrFail falls back to initialize in ModeAuto; a modern-only client
// fails, saying the server does not speak the modern era.
func (c *Client) legacyOrFail(err *Error) {
	if c.opts.Mode == ModeAuto && len(c.opts.Versions) > 0 {
		c.logf("info", "server/discover failed (%s); falling back to the initialize handshake", err.Message)
		c.fallBackToInitialize()
		return
	}
	c.failHandshake(&Error{Status: err.Status, Code: err.Code, Data: err.Data,
		Message: "the server does not speak protocol " + strings.Join(c.opts.Modern, "/") + " (protocol.mode \"modern\"): " + err.Message})
}

func (c *Client) commonLegacy(supported []string) bool {
	for _, v := range c.opts.Versions {
		if slices.Contains(supported, v) {
			return true
		}
	}
	return false
}

func (c *Client) acceptedVersions() []string {
	out := append([]string(nil), c.opts.Modern...)
	if c.opts.Mode == ModeAuto {
		out = append(out, c.opts.Versions...)
	}
	return out
}

func supportedList(data []byte) []string {
	var d struct {
		Supported []string `json:"supported"`
	}
	if len(data) == 0 || jsonx.Unmarshal(data, &d) != nil {
		return nil
	}
	return d.Supported
}

// modernMeta encodes the members every modern request's _meta carries:
// the protocol version, the capabilities the host can answer for, and
// the client's identity. They do not change for the life of the client,
// so they are encoded once.
func (c *Client) modernMeta(version string) []byte {
	buf := make([]byte, 0, 256)
	buf = append(buf, `"io.modelcontextprotocol/protocolVersion":`...)
	buf = jsonx.AppendString(buf, version)
	buf = append(buf, `,"io.modelcontextprotocol/clientCapabilities":`...)
	caps := c.clientCapabilities(version)
	c.tasksCapability(caps)
	buf = append(buf, jsonx.MustMarshal(caps)...)
	if !c.opts.OmitClientInfo {
		buf = append(buf, `,"io.modelcontextprotocol/clientInfo":`...)
		buf = append(buf, jsonx.MustMarshal(c.clientInfo())...)
	}
	return buf
}

// modernGate refuses, locally, what the modern era removed.
func modernGate(method, version string) *Error {
	switch method {
	case "initialize", "ping", "logging/setLevel":
		return Errorf(StatusUnsupported, "%s does not exist in protocol %s (the modern era, which the server speaks)", method, version)
	case "subscriptions/listen":
		return Errorf(StatusUnsupported, "subscriptions/listen is managed by the client: list changes are listened for when the server advertises them, and resources/subscribe adds a resource")
	}
	return nil
}
