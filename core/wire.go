package core

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// envelope is one decoded JSON-RPC message. Byte fields are copies the
// envelope owns; they never alias the transport's read buffer.
type envelope struct {
	versionOK bool
	hasID     bool
	id        int64  // the id, when it is an integer
	idIsInt   bool   // id held an integer
	idRaw     []byte // the id as sent (number, string or null), for echoing
	method    string
	params    []byte
	result    []byte
	hasResult bool
	errRaw    []byte
	hasError  bool
}

var errNotJSONRPC = errors.New("not a JSON-RPC 2.0 message")

// decodeEnvelope reads one JSON-RPC message object.
func decodeEnvelope(data []byte, env *envelope) error {
	it := jsonx.BorrowIterator(data)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return errNotJSONRPC
	}
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		switch field {
		case "jsonrpc":
			if it.WhatIsNext() != jsonx.KindString {
				return errNotJSONRPC
			}
			env.versionOK = string(it.ReadStringAsSlice()) == "2.0"
		case "id":
			env.hasID = true
			env.idRaw = it.SkipAndReturnBytes()
			if n, err := strconv.ParseInt(string(env.idRaw), 10, 64); err == nil {
				env.id, env.idIsInt = n, true
			}
		case "method":
			if it.WhatIsNext() != jsonx.KindString {
				return errNotJSONRPC
			}
			env.method = it.ReadString()
		case "params":
			env.params = it.SkipAndReturnBytes()
		case "result":
			env.hasResult = true
			env.result = it.SkipAndAppendBytes(make([]byte, 0, len(data)))
		case "error":
			env.hasError = true
			env.errRaw = it.SkipAndReturnBytes()
		default:
			it.Skip()
		}
		if it.Error != nil {
			break
		}
	}
	if it.Error != nil && it.Error != io.EOF {
		return errNotJSONRPC
	}
	if !env.versionOK {
		return errNotJSONRPC
	}
	return nil
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
