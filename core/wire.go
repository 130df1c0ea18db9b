package core

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// envelope is one decoded JSON-RPC message. Byte fields are copies the
// envelope owns; they never alias the transport's read buffer, and they
// hold each value's text without the white space around it.
type envelope struct {
	hasVersion bool // a "jsonrpc" member is present
	versionOK  bool // ... and it is "2.0"
	hasID      bool
	id         int64  // the id, when it is an integer
	idIsInt    bool   // id held an integer (in any JSON spelling of one)
	idRaw      []byte // the id as sent (number, string or null), for echoing
	badID      bool   // the id is an object, array or boolean
	method     string
	hasMethod  bool
	badMethod  bool // the method member is not a string
	params     []byte
	result     []byte
	hasResult  bool
	errRaw     []byte
	hasError   bool
	srcLen     int // the message's size, which bounds the result's
}

var errNotJSONRPC = errors.New("not a JSON-RPC 2.0 message")

// decodeEnvelope reads one JSON-RPC message object. Any RFC 8259 text is
// accepted: white space anywhere between tokens, members in any order,
// escaped member names. It fails only on text that is not one JSON object;
// what the object lacks (a "jsonrpc" member, a usable id) is recorded for
// the caller, which can then fail the call the message answers instead of
// dropping it.
func decodeEnvelope(data []byte, env *envelope) error {
	it := jsonx.BorrowIterator(data)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return errNotJSONRPC
	}
	env.srcLen = len(data)
	for field, ok := jsonx.NextMember(it); ok; field, ok = jsonx.NextMember(it) {
		if !envelopeMember(it, env, field) {
			break
		}
	}
	if it.Error != nil && it.Error != io.EOF {
		return errNotJSONRPC
	}
	return nil
}

// envelopeMember reads one member of a message into env.
func envelopeMember(it *jsonx.Iterator, env *envelope, field string) bool {
	switch field {
	case "jsonrpc":
		env.hasVersion = true
		if it.WhatIsNext() == jsonx.KindString {
			env.versionOK = it.ReadString() == "2.0"
		} else {
			env.versionOK = false
			it.Skip()
		}
	case "id":
		env.hasID = true
		kind := it.WhatIsNext()
		env.idRaw = jsonx.Value(it)
		env.idIsInt, env.badID = false, false
		switch kind {
		case jsonx.KindNumber:
			env.id, env.idIsInt = jsonx.Integer(env.idRaw)
		case jsonx.KindString, jsonx.KindNil:
		default:
			env.badID = true
		}
	case "method":
		env.hasMethod = true
		if it.WhatIsNext() != jsonx.KindString {
			env.badMethod = true
			it.Skip()
			break
		}
		env.method = it.ReadString()
	case "params":
		env.params = jsonx.Value(it)
	case "result":
		env.hasResult = true
		env.result = jsonx.AppendValue(it, make([]byte, 0, env.srcLen))
	case "error":
		env.hasError = true
		env.errRaw = jsonx.Value(it)
	default:
		it.Skip()
	}
	return it.Error == nil
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int64            `json:"code"`
	Message string           `json:"message"`
	Data    jsonx.RawMessage `json:"data,omitempty"`
}

// decodeRPCError turns an error member into an *Error with StatusProtocol.
func decodeRPCError(raw []byte) *Error {
	var e rpcError
	if err := jsonx.Unmarshal(raw, &e); err != nil {
		return Errorf(StatusProtocol, "the server sent a malformed JSON-RPC error object")
	}
	code := e.Code
	msg := e.Message
	if msg == "" {
		msg = "the server returned an error without a message"
	}
	return &Error{Status: StatusProtocol, Message: msg, Code: &code, Data: e.Data}
}

const wirePrefix = `{"jsonrpc":"2.0",`

// appendRequest appends a request with an integer id.
func appendRequest(buf []byte, id int64, method string, params []byte) []byte {
	buf = append(buf, wirePrefix...)
	buf = append(buf, `"id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":`...)
	buf = jsonx.AppendString(buf, method)
	if len(params) > 0 {
		buf = append(buf, `,"params":`...)
		buf = append(buf, params...)
	}
	return append(buf, '}')
}

// appendNotification appends a notification.
func appendNotification(buf []byte, method string, params []byte) []byte {
	buf = append(buf, wirePrefix...)
	buf = append(buf, `"method":`...)
	buf = jsonx.AppendString(buf, method)
	if len(params) > 0 {
		buf = append(buf, `,"params":`...)
		buf = append(buf, params...)
	}
	return append(buf, '}')
}

// appendResult appends a success response echoing the request's raw id.
func appendResult(buf []byte, idRaw, result []byte) []byte {
	buf = append(buf, wirePrefix...)
	buf = append(buf, `"id":`...)
	buf = append(buf, idRaw...)
	buf = append(buf, `,"result":`...)
	buf = append(buf, result...)
	return append(buf, '}')
}

// appendErrorResponse appends an error response echoing the raw id.
func appendErrorResponse(buf []byte, idRaw []byte, code int64, message string, data []byte) []byte {
	buf = append(buf, wirePrefix...)
	buf = append(buf, `"id":`...)
	if len(idRaw) == 0 {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, idRaw...)
	}
	buf = append(buf, `,"error":{"code":`...)
	buf = strconv.AppendInt(buf, code, 10)
	buf = append(buf, `,"message":`...)
	buf = jsonx.AppendString(buf, message)
	if len(data) > 0 {
		buf = append(buf, `,"data":`...)
		buf = append(buf, data...)
	}
	return append(buf, "}}"...)
}

// splitBatch returns the elements of a JSON array of messages.
func splitBatch(data []byte) ([][]byte, error) {
	it := jsonx.BorrowIterator(data)
	defer jsonx.ReturnIterator(it)
	var out [][]byte
	for it.ReadArray() {
		out = append(out, it.SkipAndReturnBytes())
		if it.Error != nil {
			break
		}
	}
	if it.Error != nil && it.Error != io.EOF {
		return nil, errNotJSONRPC
	}
	return out, nil
}

// firstByte returns the first non-space byte of data, or 0.
func firstByte(data []byte) byte {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return 0
	}
	return trimmed[0]
}

// sameID reports whether two JSON-RPC ids, as JSON texts, are the same
// value: numbers by value (7, 7.0 and 7e0 alike), strings by their decoded
// text ("a" and "\u0061" alike). A number never equals a string.
func sameID(a, b []byte) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if bytes.Equal(a, b) {
		return len(a) > 0
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	switch {
	case a[0] == '"' && b[0] == '"':
		var sa, sb string
		return jsonx.Unmarshal(a, &sa) == nil && jsonx.Unmarshal(b, &sb) == nil && sa == sb
	case a[0] != '"' && b[0] != '"':
		na, oka := jsonx.Integer(a)
		nb, okb := jsonx.Integer(b)
		return oka && okb && na == nb
	}
	return false
}
