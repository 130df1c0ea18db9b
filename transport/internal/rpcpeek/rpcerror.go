package rpcpeek

import (
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// ErrorObject returns the "error" member of a JSON-RPC error response, or
// false when body is not one. HTTP transports use it on an error status:
// a 2026-07-28 server explains a 400 or 404 with a JSON-RPC error body,
// which is what tells it apart from a legacy server's plain refusal.
func ErrorObject(body []byte) ([]byte, bool) {
	it := jsonx.BorrowIterator(body)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return nil, false
	}
	var errObj []byte
	versionOK := false
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		switch field {
		case "jsonrpc":
			versionOK = it.WhatIsNext() == jsonx.KindString && it.ReadString() == "2.0"
		case "error":
			if it.WhatIsNext() != jsonx.KindObject {
				return nil, false
			}
			errObj = append([]byte(nil), it.SkipAndReturnBytes()...)
		default:
			it.Skip()
		}
		if it.Error != nil {
			break
		}
	}
	if !versionOK || errObj == nil {
		return nil, false
	}
	var e struct {
		Code *int64 `json:"code"`
	}
	if jsonx.Unmarshal(errObj, &e) != nil || e.Code == nil {
		return nil, false
	}
	return errObj, true
}
