package transport

import (
	"context"
	"fmt"
)

// Kind says what an outbound message is, so that transports which care (HTTP
// needs to know whether a body expects a response) need not parse it.
type Kind uint8

const (
	// KindRequest is a JSON-RPC request: it carries an id and expects a response.
	KindRequest Kind = iota + 1
	// KindNotification carries no id and expects nothing back.
	KindNotification
	// KindResponse answers a request the server sent.
	KindResponse
)

// Outbound is one JSON-RPC message ready for the wire.
type Outbound struct {
	// Data is compact JSON text without a trailing newline. The transport
	// must not retain it after Send returns.
	Data []byte
	// Kind says whether Data is a request, a notification or a response.
	Kind Kind
	// Method is the request or notification method ("" for responses).
	Method string
	// ID is the request id for KindRequest and KindResponse when it is an
	// integer; transports use it only for diagnostics and stream routing.
	ID int64
	// Headers are per-message HTTP headers the core computed (2026-07-28:
	// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*). They are
	// set only for transports that implement HeaderCarrier, and only in the
	// modern era; legacy messages leave them nil, so that path allocates
	// nothing. Transports without headers ignore them.
	Headers []Header
	// Waiting is set on a request whose sender blocks until the request
	// completes anyway (a synchronous call): a transport may then run the
	// exchange on the sender's goroutine inside Send, saving the hand-off
	// to a goroutine of its own and back, as long as Send returns once
	// the response has been delivered (or the request failed or was
	// aborted; the sender aborts it when the call times out).
	Waiting bool
	// Thread, with Waiting: the sender is an OS thread outside Go (a C
	// host's, locked to its goroutine while in Go), which a transport lets
	// sleep in the exchange's system calls however many others do: parked
	// in Go instead, it would be woken through a hand-off between threads.
	// A waiting goroutine (Thread unset) sleeps there only while few do.
	Thread bool
}

// Header is one HTTP header of a message. Value is already encoded for the
// wire (visible ASCII).
type Header struct {
	Name  string
	Value string
}

// HeaderCarrier is implemented by transports that put Outbound.Headers on
// the wire (HTTP). The core computes them only for such transports.
type HeaderCarrier interface {
	CarriesHeaders() bool
}

// LegacyOnly is implemented by transports the 2026-07-28 era is not
// defined for (legacy HTTP+SSE: that revision has only the stdio and
// Streamable HTTP bindings). The core does not probe them with
// server/discover in protocol.mode "auto".
type LegacyOnly interface {
	LegacyOnly() bool
}

// SendHolder is implemented by transports that can write the messages
// sent during a hold together, when the hold is released (stdio: one
// write(2), one wake-up of the server, for a burst of calls). A hold
// delays other senders' messages until its release too, so it lasts only
// while its caller starts the calls it has ready.
// Holds nest: the last ReleaseSends writes.
type SendHolder interface {
	HoldSends()
	ReleaseSends()
}

// Aborter is implemented by transports that can cancel one request by
// closing its response stream (HTTP). In the 2026-07-28 era that is how an
// HTTP client cancels: no notifications/cancelled is sent there. Over
// legacy HTTP+SSE, whose replies come on the one stream, it ends a waiting
// sender's POST (Outbound.Waiting) instead.
type Aborter interface {
	// Abort closes the stream of the request with this id (over legacy
	// HTTP+SSE: its POST under way on a waiting sender); nothing more is
	// reported for it. Unknown ids are ignored.
	Abort(id int64)
}

// Networked is implemented by transports whose requests are network
// exchanges run by goroutines of their own (the HTTP transports), as
// opposed to a write on the sender's goroutine (stdio). A blocking caller
// outside Go is better served by a library goroutine that sends and waits
// in its stead (capi's submission queue, docs/abi-cost.md).
type Networked interface {
	Networked() bool
}

// CallerExchanger is implemented by transports that run a waiting
// request's exchange (Outbound.Waiting) on the sender's goroutine in
// blocking system calls, to its end when the reply is JSON: Streamable
// HTTP with a client of its own (transport/internal/callerhttp). A
// blocking caller outside Go is then best served by making the call on
// its own thread, which the kernel wakes when the server answers.
// ExchangesOnCaller may change once (httpdetect settles on a transport).
type CallerExchanger interface {
	ExchangesOnCaller() bool
}

// CallerPoster is implemented by transports that POST a waiting request
// (Outbound.Waiting) on the sender's goroutine in blocking system calls,
// its reply coming later on a stream the transport reads: legacy HTTP+SSE
// with a client of its own. A blocking caller outside Go then makes the
// POST on its own thread and waits outside Go for the reply, as it waits
// for a stdio server's. PostsOnCaller may change once (httpdetect settles
// on a transport).
type CallerPoster interface {
	PostsOnCaller() bool
}

// LineStreamer is implemented by transports that read messages as the lines
// of a byte stream the server writes (stdio reads the server's stdout). When
// the core skips a line that is not JSON-RPC, it reports it with the
// stream's name as LogLine.Source, so that the host can tell what the server
// printed from a transport's own warnings ("transport").
type LineStreamer interface {
	// InboundStream names the stream messages are read from ("stdout").
	InboundStream() string
}

// SandboxReporter is implemented by transports that may run their server
// confined (stdio, through the sandbox helper): SandboxReport is what was
// set up for the running server, nil when it is not confined or not
// started.
type SandboxReporter interface {
	SandboxReport() any
}

// LogLine is a diagnostic line a transport reports: a stderr line, a stdout
// line that is not a JSON-RPC message, or a warning of the transport's own.
type LogLine struct {
	Level  string // "debug", "info", "warning" or "error"
	Source string // "stderr", "stdout", "transport"
	Text   string
}

// Sink receives what a transport reads. The transport calls Receive and Log
// from its reader goroutines (never while holding a lock the sink might need)
// and Closed exactly once.
type Sink interface {
	// Receive takes one inbound JSON text: an object, or an array (a batch).
	// data is only valid during the call.
	Receive(data []byte)
	// Log takes one diagnostic line.
	Log(line LogLine)
	// RequestFailed reports that the request with this id could not be
	// delivered or answered at the transport level (an HTTP error status, a
	// broken response stream, a response over the size limit whose head
	// names the request). The failure concerns that request only. A *Error with CodeSessionExpired asks the core to re-initialize.
	RequestFailed(id int64, err *Error)
	// Closed reports that the transport is gone for good. It is called
	// exactly once, after the last Receive. The error is a *ClosedError.
	Closed(err *ClosedError)
}

// Negotiator is implemented by transports that need the negotiated protocol
// version (HTTP sends it as MCP-Protocol-Version). The core calls
// SetProtocolVersion after initialize succeeds and before it sends
// notifications/initialized, and again after a re-initialization.
type Negotiator interface {
	SetProtocolVersion(version string)
}

// Transport is a bidirectional JSON-RPC message channel to one MCP server.
type Transport interface {
	// Start opens the channel (for stdio: spawns the server) and begins
	// delivering inbound messages to sink. A non-nil error is an *Error and
	// means nothing was started and Closed will not be called.
	Start(ctx context.Context, sink Sink) error
	// Send writes one message. It is safe for concurrent use and must not
	// retain msg.Data after it returns. It returns an *Error when the message
	// could not be written. Transports with a connection per request (HTTP)
	// return as soon as a KindRequest is on its way and report its later
	// failure through Sink.RequestFailed; they deliver KindNotification and
	// KindResponse messages before returning (bounded by ctx's deadline).
	Send(ctx context.Context, msg Outbound) error
	// Close shuts the channel down gracefully, bounded by ctx, and releases
	// every resource (for stdio: the process group is terminated and the
	// child reaped). Closed is delivered to the sink before Close returns if
	// it had not been delivered already. Close is idempotent.
	Close(ctx context.Context) error
	// Name is the transport's name as reported in server info ("stdio", ...).
	Name() string
}

// Code classifies a transport failure. The core maps it to a status code.
type Code uint8

const (
	// CodeInvalidArgument: the configuration cannot work (empty command,
	// not an executable file, bad URL).
	CodeInvalidArgument Code = iota + 1
	// CodeTransport: an I/O or spawn failure (an executable that is not
	// found included: the server cannot be started).
	CodeTransport
	// CodeClosed: the transport is closed.
	CodeClosed
	// CodeTimeout: the operation ran out of time.
	CodeTimeout
	// CodeSessionExpired: the server forgot the session (HTTP 404 with a
	// session id); the core may re-initialize and retry once.
	CodeSessionExpired
	// CodeAuthRequired: the server demands authorization (HTTP 401/403).
	CodeAuthRequired
	// CodeInternal: a bug in the library, recovered (see Recover).
	CodeInternal
	// CodeProtocol: the server's answer to the request is unusable (for
	// stdio: its response line is over the message size limit).
	CodeProtocol
)

// Error is a transport failure. Message never contains raw subprocess output,
// tokens or secrets.
type Error struct {
	Code    Code
	Message string
	// Data, when set, is JSON the host gets as the error's "data" (for
	// CodeAuthRequired: what OAuth discovery learned; never a secret).
	Data []byte
	// RPCError, when set, is the JSON-RPC error object ({"code","message",
	// "data"?}) the server sent as the body of an HTTP error status in
	// answer to a 2026-07-28 request (400 for -32022, 404 for -32601, ...).
	// The core decides what it means: on a probe, whether the server is
	// modern; otherwise, the call's protocol error.
	RPCError []byte
	// Permanent marks a start failure that trying again cannot cure (an
	// executable that does not exist): a supervised client does not retry
	// it. CodeInvalidArgument failures are permanent too.
	Permanent bool
	// Cause, when set, is a machine-readable code of why (one of the
	// Cause* constants), which the application gets as the error data's
	// "cause": a binding branches on it, never on Message.
	Cause string
}

// The codes of Error.Cause, as include/lemonmcp.h lists them.
const (
	// CauseExecutableNotFound: a server command that does not exist (or
	// whose interpreter is missing).
	CauseExecutableNotFound = "executable_not_found"
	// CauseNotExecutable: a server command that exists but may not be run.
	CauseNotExecutable = "not_executable"
	// CauseWorkingDirectory: a server's working directory that does not
	// exist or is not a directory.
	CauseWorkingDirectory = "working_directory_not_found"
	// CauseSandboxUnavailable: a sandbox layer the server's policy asks
	// for could not be set up (package sandbox); the server was not run.
	CauseSandboxUnavailable = "sandbox_unavailable"
)

// WithCause sets e's Cause and returns e.
func (e *Error) WithCause(cause string) *Error {
	e.Cause = cause
	return e
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ClosedError describes why a transport closed.
type ClosedError struct {
	// Message is a human sentence ("server exited with status 3"). It never
	// contains raw subprocess output.
	Message string
	// ExitCode is the server's exit status, or -1 when unknown or killed by
	// a signal.
	ExitCode int
	// Signal names the signal that ended the server ("SIGKILL"), if any.
	Signal string
	// Requested is true when the close was asked for (Close), false when the
	// server went away on its own.
	Requested bool
	// StderrTail holds the last stderr lines, for diagnostics delivered to
	// the host in the closed event (never in an error message).
	StderrTail []string
}

func (e *ClosedError) Error() string { return e.Message }
