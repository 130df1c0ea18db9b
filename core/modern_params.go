package core

import (
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// retryInput is what an MRTR retry adds to the original params: the
// answers to the server's input requests, and its requestState echoed as
// the exact JSON text it sent (never decoded and re-encoded, so nothing in
// it can change).
type retryInput struct {
	responses []byte // a JSON object keyed like inputRequests, or nil
	state     []byte // the raw JSON string, or nil when the server gave none
}

// modernParams returns params (a compact JSON object or nil) with meta
// (the era's _meta members, see modernMeta) merged into params._meta and,
// for a retry, inputResponses and requestState set. The library's _meta
// members win over the host's: the protocol version must match the
// transport's header. The common case — no host _meta, no retry — splices
// bytes without decoding params.
func modernParams(params, meta []byte, retry *retryInput) ([]byte, *Error) {
	if retry == nil && !hasTopLevelKey(params, "_meta") {
		buf := make([]byte, 0, len(params)+len(meta)+16)
		buf = append(buf, `{"_meta":{`...)
		buf = append(buf, meta...)
		buf = append(buf, '}')
		if len(params) > 1 {
			buf = append(buf, ',')
			buf = append(buf, params[1:]...)
		} else {
			buf = append(buf, '}')
		}
		return buf, nil
	}
	// Rebuilt member by member from the raw bytes: nothing the host or the
	// server wrote is decoded and re-encoded.
	var hostMeta []byte
	var rest [][2][]byte
	if err := eachMember(params, func(name string, key, raw []byte) {
		switch name {
		case "_meta":
			hostMeta = raw
		case "inputResponses", "requestState":
		default:
			rest = append(rest, [2][]byte{key, raw})
		}
	}); err != nil {
		return nil, Errorf(StatusInvalidArgument, "params must be a JSON object")
	}
	buf := make([]byte, 0, len(params)+len(meta)+64)
	buf = append(buf, `{"_meta":{`...)
	if hostMeta != nil {
		if err := eachMember(hostMeta, func(name string, key, raw []byte) {
			if ownMetaKey(name) {
				return
			}
			buf = append(buf, key...)
			buf = append(buf, ':')
			buf = append(buf, raw...)
			buf = append(buf, ',')
		}); err != nil {
			return nil, Errorf(StatusInvalidArgument, "params._meta must be a JSON object")
		}
	}
	buf = append(buf, meta...)
	buf = append(buf, '}')
	if retry != nil && retry.responses != nil {
		buf = append(buf, `,"inputResponses":`...)
		buf = append(buf, retry.responses...)
	}
	if retry != nil && retry.state != nil {
		buf = append(buf, `,"requestState":`...)
		buf = append(buf, retry.state...)
	}
	for _, m := range rest {
		buf = append(buf, ',')
		buf = append(buf, m[0]...)
		buf = append(buf, ':')
		buf = append(buf, m[1]...)
	}
	return append(buf, '}'), nil
}

func ownMetaKey(k string) bool {
	switch k {
	case "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo":
		return true
	}
	return false
}

// eachMember calls fn with each member of the JSON object obj: its name,
// the name as a JSON string token, and the value's raw bytes (valid only
// during the call). An empty obj has no members.
func eachMember(obj []byte, fn func(name string, key, raw []byte)) error {
	if len(obj) == 0 {
		return nil
	}
	it := jsonx.BorrowIterator(obj)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return jsonx.ErrNotObject
	}
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		raw := it.SkipAndReturnBytes()
		if it.Error != nil {
			break
		}
		fn(field, jsonx.AppendString(nil, field), raw)
	}
	if it.Error != nil && it.Error.Error() != "EOF" {
		return it.Error
	}
	return nil
}

// hasTopLevelKey reports whether the JSON object obj has member key.
func hasTopLevelKey(obj []byte, key string) bool {
	if len(obj) == 0 {
		return false
	}
	it := jsonx.BorrowIterator(obj)
	defer jsonx.ReturnIterator(it)
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		if field == key {
			return true
		}
		it.Skip()
		if it.Error != nil {
			return false
		}
	}
	return false
}
