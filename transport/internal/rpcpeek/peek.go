package rpcpeek

import (
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// ResponseIDs calls fn with the integer id of each JSON-RPC response in
// data: an object, or a batch array. The core does the real decoding; this
// only lets a transport know which requests are answered.
func ResponseIDs(data []byte, fn func(id int64)) {
	switch firstByte(data) {
	case '{':
		if id, ok := ResponseID(data); ok {
			fn(id)
		}
	case '[':
		it := jsonx.BorrowIterator(data)
		defer jsonx.ReturnIterator(it)
		for it.ReadArray() {
			item := it.SkipAndReturnBytes()
			if it.Error != nil {
				return
			}
			if id, ok := ResponseID(item); ok {
				fn(id)
			}
		}
	}
}

// ResponseID reads a message object only as far as it must: an id together
// with a result or error member makes a response, a method member rules it
// out. Members after that are never scanned, so this is cheap on a large
// result and works on the head of a message cut short.
func ResponseID(obj []byte) (int64, bool) {
	it := jsonx.BorrowIterator(obj)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return 0, false
	}
	var id int64
	hasID, answered := false, false
	for key := it.ReadObject(); key != "" && it.Error == nil; key = it.ReadObject() {
		switch key {
		case "id":
			id, hasID = parseInt(it.SkipAndReturnBytes())
		case "method":
			return 0, false
		case "result", "error":
			answered = true
			if hasID {
				return id, true
			}
			it.Skip()
		default:
			it.Skip()
		}
		if hasID && answered {
			return id, true
		}
	}
	return 0, false
}

// CancelledRequestID reads params.requestId of a notifications/cancelled
// message.
func CancelledRequestID(msg []byte) (int64, bool) {
	it := jsonx.BorrowIterator(msg)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return 0, false
	}
	for key := it.ReadObject(); key != "" && it.Error == nil; key = it.ReadObject() {
		if key != "params" {
			it.Skip()
			continue
		}
		if it.WhatIsNext() != jsonx.KindObject {
			return 0, false
		}
		for pkey := it.ReadObject(); pkey != "" && it.Error == nil; pkey = it.ReadObject() {
			if pkey == "requestId" {
				return parseInt(it.SkipAndReturnBytes())
			}
			it.Skip()
		}
		return 0, false
	}
	return 0, false
}

// parseInt reads a JSON integer without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}
