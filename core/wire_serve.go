package core

import "github.com/lemonmcp/lemonmcp/internal/jsonx"

// The codec's server side: the gateway (package gateway) reads what its
// front clients send and writes its answers with the envelope code the
// client uses, so there is one JSON-RPC codec in the library.

// JSON-RPC error codes a server answers with (the standard ones).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = codeMethodNotFound
	CodeInvalidParams  = codeInvalidParams
	CodeInternal       = codeInternal
)

// Message is one decoded JSON-RPC message. Its byte fields are copies it
// owns.
type Message struct {
	ID        []byte // the id as sent (number, string or null); nil when absent
	Method    string
	Params    []byte
	Result    []byte
	Error     []byte
	HasResult bool
	HasError  bool
	// Invalid says why the object is not a valid JSON-RPC 2.0 message
	// ("" when it is).
	Invalid string
}

// IsRequest reports a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports a response (a result or an error, no method).
func (m *Message) IsResponse() bool { return m.Method == "" && (m.HasResult || m.HasError) }

// DecodeMessage reads one JSON-RPC message object; it fails only on text
// that is not one JSON object. What the object lacks is in Invalid.
func DecodeMessage(data []byte) (Message, error) {
	var env envelope
	if err := decodeEnvelope(data, &env); err != nil {
		return Message{}, err
	}
	m := Message{Method: env.method, Params: env.params, Result: env.result, Error: env.errRaw, HasResult: env.hasResult, HasError: env.hasError}
	if env.hasID {
		m.ID = env.idRaw
	}
	switch {
	case !env.hasVersion || !env.versionOK:
		m.Invalid = `the message lacks "jsonrpc": "2.0"`
	case env.badID:
		m.Invalid = "the id must be a string or a number"
	case env.badMethod:
		m.Invalid = "the method must be a string"
	case env.hasMethod && env.method == "":
		m.Invalid = "the method is empty"
	case !env.hasMethod && !env.hasResult && !env.hasError:
		m.Invalid = "the message is neither a request, a notification nor a response"
	case env.hasMethod && env.hasID && len(env.idRaw) == 4 && string(env.idRaw) == "null":
		m.Invalid = "a request id must not be null"
	}
	if len(m.Params) > 0 && m.Params[0] != '{' && m.Params[0] != '[' && m.Invalid == "" {
		m.Invalid = "params must be an object or an array"
	}
	return m, nil
}

// SplitBatch returns the elements of a JSON array of messages.
func SplitBatch(data []byte) ([][]byte, error) { return splitBatch(data) }

// FirstByte returns the first non-space byte of data, or 0: '[' is a batch.
func FirstByte(data []byte) byte { return firstByte(data) }

// AppendRequest appends a request with an integer id.
func AppendRequest(buf []byte, id int64, method string, params []byte) []byte {
	return appendRequest(buf, id, method, params)
}

// AppendNotification appends a notification.
func AppendNotification(buf []byte, method string, params []byte) []byte {
	return appendNotification(buf, method, params)
}

// AppendResult appends a success response echoing a request's raw id.
func AppendResult(buf, idRaw, result []byte) []byte { return appendResult(buf, idRaw, result) }

// AppendErrorResponse appends an error response echoing a raw id (null
// when idRaw is empty).
func AppendErrorResponse(buf []byte, idRaw []byte, code int64, message string, data []byte) []byte {
	return appendErrorResponse(buf, idRaw, code, message, data)
}

// ErrorObject reads a JSON-RPC error member (code, message, data).
func ErrorObject(raw []byte) (code int64, message string, data []byte) {
	var e rpcError
	if jsonx.Unmarshal(raw, &e) != nil {
		return codeInternal, "malformed JSON-RPC error object", nil
	}
	return e.Code, e.Message, e.Data
}
