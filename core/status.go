package core

import (
	"fmt"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// Status is a result code. The values are the C ABI's lmcp_status values and
// are never renumbered.
type Status int32

// Status values (see include/lemonmcp.h for their meaning).
const (
	StatusOK              Status = 0
	StatusInvalidArgument Status = -1
	StatusInvalidHandle   Status = -2
	StatusInvalidState    Status = -3
	StatusNotFound        Status = -4
	StatusTimeout         Status = -5
	StatusCancelled       Status = -6
	StatusClosed          Status = -7
	StatusTransport       Status = -8
	StatusProtocol        Status = -9
	StatusUnsupported     Status = -10
	StatusAuthRequired    Status = -11
	StatusPolicyDenied    Status = -12
	StatusABIMismatch     Status = -13
	StatusInternal        Status = -14
)

// statusNames, indexed by -status, is the one table of the statuses' names:
// Status.String, and through it lmcp_status_string (capi) and the bindings
// that call it, read it.
var statusNames = [...]string{
	-StatusOK:              "ok",
	-StatusInvalidArgument: "invalid argument",
	-StatusInvalidHandle:   "invalid handle",
	-StatusInvalidState:    "invalid state",
	-StatusNotFound:        "not found",
	-StatusTimeout:         "timeout",
	-StatusCancelled:       "cancelled",
	-StatusClosed:          "closed",
	-StatusTransport:       "transport error",
	-StatusProtocol:        "protocol error",
	-StatusUnsupported:     "unsupported",
	-StatusAuthRequired:    "authorization required",
	-StatusPolicyDenied:    "denied by policy",
	-StatusABIMismatch:     "ABI version mismatch",
	-StatusInternal:        "internal error",
}

// unknownStatus names a value that is no status.
const unknownStatus = "unknown status"

// Statuses lists every status, from StatusOK down.
func Statuses() []Status {
	out := make([]Status, len(statusNames))
	for i := range statusNames {
		out[i] = Status(-i)
	}
	return out
}

// String returns the status's static name ("unknown status" for a value
// that is none).
func (s Status) String() string {
	if s <= 0 && int(s) > -len(statusNames) {
		return statusNames[-s]
	}
	return unknownStatus
}

// Error is the library's error: a status, a human message, and for
// StatusProtocol the server's JSON-RPC error code and data. Messages never
// contain raw subprocess output, tokens or secrets.
type Error struct {
	Status  Status
	Message string
	Code    *int64           // JSON-RPC error code, when the server sent one
	Data    jsonx.RawMessage // JSON-RPC error data, when the server sent one
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error.
func Errorf(status Status, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// JSON encodes the error as the ABI's error object
// {"status","message","type","code"?,"data"?}; type is its error.type
// (telemetry.go), so that no binding works it out again.
func (e *Error) JSON() []byte {
	buf := make([]byte, 0, 80+len(e.Message)+len(e.Data))
	buf = append(buf, `{"status":`...)
	buf = fmt.Appendf(buf, "%d", e.Status)
	buf = append(buf, `,"message":`...)
	buf = jsonx.AppendString(buf, e.Message)
	buf = append(buf, `,"type":`...)
	buf = jsonx.AppendString(buf, errorType(e))
	if e.Code != nil {
		buf = fmt.Appendf(buf, `,"code":%d`, *e.Code)
	}
	if len(e.Data) > 0 {
		buf = append(buf, `,"data":`...)
		buf = append(buf, e.Data...)
	}
	return append(buf, '}')
}

// AsError converts any error into an *Error, mapping transport errors to
// their statuses.
func AsError(err error) *Error {
	switch e := err.(type) {
	case nil:
		return nil
	case *Error:
		return e
	case *transport.Error:
		if e == nil { // a typed nil inside a non-nil error: no error
			return nil
		}
		return &Error{Status: transportStatus(e.Code), Message: e.Message, Data: transportData(e)}
	case *transport.ClosedError:
		if e == nil {
			return nil
		}
		return &Error{Status: StatusClosed, Message: e.Message}
	default:
		return &Error{Status: StatusInternal, Message: err.Error()}
	}
}

// transportData is a transport failure's error data: its own, or the
// machine-readable {"cause"} of a start that could not happen.
func transportData(e *transport.Error) []byte {
	if len(e.Data) > 0 || e.Cause == "" {
		return e.Data
	}
	return jsonx.MustMarshal(map[string]string{"cause": e.Cause})
}

func transportStatus(code transport.Code) Status {
	switch code {
	case transport.CodeInvalidArgument:
		return StatusInvalidArgument
	case transport.CodeClosed:
		return StatusClosed
	case transport.CodeTimeout:
		return StatusTimeout
	case transport.CodeAuthRequired:
		return StatusAuthRequired
	case transport.CodeInternal:
		return StatusInternal
	case transport.CodeProtocol:
		return StatusProtocol
	default:
		return StatusTransport
	}
}
