package core

import (
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/internal/tracecontext"
	"github.com/lemonmcp/lemonmcp/transport"
)

// Protocol revisions of the legacy era (initialize handshake), newest first.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Protocol revisions of the modern era (stateless, per-request _meta,
// server/discover), newest first.
var ModernVersions = []string{"2026-07-28"}

// ModernFeatures are the 2026-07-28 features this build implements, as
// lmcp_features reports them under "modern" (docs/modern.md).
var ModernFeatures = []string{"server_discover", "mrtr", "http_standard_headers", "subscriptions_listen", "result_cache", "tasks"}

// LegacyFeatures are the optional 2025-11-25 features this build
// implements, as lmcp_features reports them under "legacy": "tasks" as
// requestor (task-augmented tools/call followed to its end) and
// "tasks_receiver" (task-augmented sampling and elicitation served,
// protocol.tasks; docs/tasks.md).
var LegacyFeatures = []string{"tasks", "tasks_receiver"}

// Protocol modes: which era the client speaks.
const (
	ModeLegacy = "legacy" // the initialize handshake only
	ModeModern = "modern" // 2026-07-28 and later only
	ModeAuto   = "auto"   // probe with server/discover, fall back to initialize
)

// ClientInfo is the Implementation the client reports in initialize.
type ClientInfo struct {
	Name        string
	Version     string
	Title       string
	Description string
	WebsiteURL  string
}

// Timeouts bound every wait the client makes.
type Timeouts struct {
	Ready           time.Duration // connect → ready
	Call            time.Duration // per call; 0 = no limit
	MaxTotal        time.Duration // hard cap per call; 0 = none (see effectiveMaxTotal)
	ResetOnProgress bool          // a progress notification restarts the call timer
	AppRequest      time.Duration // how long the host may take to answer a server request
	CloseGrace      time.Duration // each step of the stdio shutdown escalation
}

// Handlers says which server requests the host answers. Capabilities are
// advertised only for these.
type Handlers struct {
	Roots           bool
	RootsListChange bool
	Sampling        bool
	SamplingTools   bool // the host can sample with tools (sampling.tools)
	SamplingContext bool // the host honours includeContext (sampling.context)
	Elicitation     bool
	ElicitForm      bool
	ElicitURL       bool
	// Authorization: the host runs the browser step of the OAuth
	// authorization code flow ("authorize" app requests).
	Authorization bool
}

// Any reports whether the host answers any server request.
func (h Handlers) Any() bool { return h.Roots || h.Sampling || h.Elicitation }

// Options configure a Client.
type Options struct {
	ClientInfo ClientInfo
	// OmitClientInfo: 2026-07-28 requests carry no
	// io.modelcontextprotocol/clientInfo (optional in the published
	// revision); initialize, where clientInfo is required, still does.
	OmitClientInfo bool
	// Mode is ModeAuto (DefaultOptions' choice: it alone connects to
	// legacy-only, modern-only and dual-era servers, for at most one extra
	// round trip; docs/modern.md), ModeLegacy (the zero value means it
	// too) or ModeModern.
	Mode string
	// Versions are the legacy-era revisions the client accepts, newest
	// first; the first is offered to initialize. Empty in ModeModern.
	Versions []string
	// Modern are the modern-era revisions the client accepts, newest first;
	// the first is offered to server/discover. Used in ModeModern and
	// ModeAuto.
	Modern          []string
	Timeouts        Timeouts
	MaxMessageBytes int
	MaxPages        int
	Handlers        Handlers
	// SamplingPolicy, when set, answers sampling requests (see
	// SamplingPolicy); sampling is advertised even in deny mode.
	SamplingPolicy *SamplingPolicy
	// Experimental is advertised as capabilities.experimental.
	Experimental []byte
	// Auth, when set, is the OAuth layer of an HTTP transport; New binds
	// the client to it as its host boundary.
	Auth *auth.Manager
	// AuthAppTokenStore: the OAuth layer keeps its grant in the
	// application's store ("store_load" / "store_save" app requests).
	AuthAppTokenStore bool
	// AuthorizationTimeout bounds one "authorize" app request.
	AuthorizationTimeout time.Duration
	// Restart, when set with NewTransport, supervises the client: a lost
	// connection restarts the server (see RestartPolicy).
	Restart *RestartPolicy
	// NewTransport builds a fresh transport of the same configuration, for
	// each restart.
	NewTransport func() (transport.Transport, error)
	// NoResultCache turns the 2026-07-28 result cache off.
	NoResultCache bool
	// AuthContext names the current authorization context (a digest, never
	// a credential): private cached results are kept per context. Nil
	// means one context (stdio).
	AuthContext func() string
	// NoListen: no subscriptions/listen stream is ever opened; in the
	// modern era resources/subscribe then fails with StatusInvalidState,
	// and tasks are followed by polling alone.
	NoListen bool
	// Tasks declares the io.modelcontextprotocol/tasks extension on every
	// modern request; a task-augmented call then completes once, with the
	// task's final result.
	Tasks bool
	// Trace is the default W3C trace context of every call that names none
	// (CallOptions.Trace).
	Trace tracecontext.Context
}

// needsHostHandler reports whether the configuration asks the host to answer
// server requests.
func (o Options) needsHostHandler() bool {
	return o.Handlers.Any() || o.Handlers.Authorization || o.AuthAppTokenStore ||
		(o.SamplingPolicy != nil && o.SamplingPolicy.Mode != PolicyDeny)
}

// DefaultOptions returns the documented defaults.
func DefaultOptions(libraryVersion string) Options {
	return Options{
		ClientInfo: ClientInfo{Name: "lemonmcp", Version: libraryVersion},
		Mode:       ModeAuto,
		Versions:   append([]string(nil), LegacyVersions...),
		Modern:     append([]string(nil), ModernVersions...),
		Timeouts: Timeouts{
			Ready:      30 * time.Second,
			Call:       120 * time.Second,
			AppRequest: 10 * time.Minute,
			CloseGrace: 2 * time.Second,
		},
		MaxMessageBytes: 16 << 20,
		MaxPages:        1000,
	}
}

// effectiveMaxTotal is the hard cap of a call: the configured one, or, when
// progress can extend a call indefinitely, ten times the call timeout.
func effectiveMaxTotal(call, maxTotal time.Duration, reset bool) time.Duration {
	if maxTotal > 0 {
		return maxTotal
	}
	if reset && call > 0 {
		return 10 * call
	}
	return 0
}
