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
			item := jsonx.Value(it)
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
// result and works on the head of a message cut short. Any RFC 8259
// spelling is read (white space between tokens, members in any order, an
// integer id written 7, 7.0 or 7e0); a string id is never one of ours.
func ResponseID(obj []byte) (int64, bool) {
	it := jsonx.BorrowIterator(obj)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return 0, false
	}
	var p responsePeek
	for key, ok := jsonx.NextMember(it); ok; key, ok = jsonx.NextMember(it) {
		if !p.member(it, key) {
			break
		}
	}
	if p.hasID && p.answered && !p.request {
		return p.id, true
	}
	return 0, false
}

// responsePeek is what ResponseID has seen so far.
type responsePeek struct {
	id                       int64
	hasID, answered, request bool
}

// responseMember reads one member for ResponseID; it stops the walk as
// soon as the answer is known.
func (p *responsePeek) member(it *jsonx.Iterator, key string) bool {
	switch key {
	case "id":
		if it.WhatIsNext() == jsonx.KindNumber {
			p.id, p.hasID = jsonx.Integer(jsonx.Value(it))
		} else {
			it.Skip()
			p.hasID = false
			return false // a string or null id is not one we sent
		}
	case "method":
		p.request = true
		return false
	case "result", "error":
		p.answered = true
		if p.hasID {
			return false
		}
		it.Skip()
	default:
		it.Skip()
	}
	if p.hasID && p.answered {
		return false
	}
	return it.Error == nil
}

// CancelledRequestID reads params.requestId of a notifications/cancelled
// message.
func CancelledRequestID(msg []byte) (int64, bool) {
	it := jsonx.BorrowIterator(msg)
	defer jsonx.ReturnIterator(it)
	if it.WhatIsNext() != jsonx.KindObject {
		return 0, false
	}
	for key, ok := jsonx.NextMember(it); ok; key, ok = jsonx.NextMember(it) {
		if key != "params" {
			it.Skip()
			continue
		}
		if it.WhatIsNext() != jsonx.KindObject {
			return 0, false
		}
		for pkey, ok := jsonx.NextMember(it); ok; pkey, ok = jsonx.NextMember(it) {
			if pkey != "requestId" {
				it.Skip()
				continue
			}
			if it.WhatIsNext() != jsonx.KindNumber {
				return 0, false
			}
			return jsonx.Integer(jsonx.Value(it))
		}
		return 0, false
	}
	return 0, false
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
