package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
)

// API is the frozen json-iterator configuration the library uses.
var API = jsoniter.Config{
	EscapeHTML:             false,
	SortMapKeys:            true,
	ValidateJsonRawMessage: true,
	UseNumber:              true,
}.Froze()

// RawMessage is a raw encoded JSON value.
type RawMessage = jsoniter.RawMessage

// Number is a JSON number kept as its text.
type Number = json.Number

// Marshal encodes v.
func Marshal(v any) ([]byte, error) { return API.Marshal(v) }

// MustMarshal encodes v, which must be encodable (a value the library built).
func MustMarshal(v any) []byte {
	b, err := API.Marshal(v)
	if err != nil {
		panic("jsonx: cannot encode a library value: " + err.Error())
	}
	return b
}

// Unmarshal decodes data into v.
func Unmarshal(data []byte, v any) error { return API.Unmarshal(data, v) }

// BorrowIterator returns a pooled iterator over data; give it back with
// ReturnIterator.
func BorrowIterator(data []byte) *jsoniter.Iterator { return API.BorrowIterator(data) }

// ReturnIterator returns an iterator to the pool.
func ReturnIterator(it *jsoniter.Iterator) { API.ReturnIterator(it) }

// Kind names the JSON type of a value.
type Kind = jsoniter.ValueType

// JSON value kinds.
const (
	KindInvalid = jsoniter.InvalidValue
	KindString  = jsoniter.StringValue
	KindNumber  = jsoniter.NumberValue
	KindNil     = jsoniter.NilValue
	KindBool    = jsoniter.BoolValue
	KindArray   = jsoniter.ArrayValue
	KindObject  = jsoniter.ObjectValue
)

// ErrNotObject reports a value that is valid JSON but not an object.
var ErrNotObject = errors.New("not a JSON object")

// CheckValue reports whether data is exactly one valid JSON value in UTF-8
// (surrounding white space allowed) and returns its kind. It allocates
// nothing: the standard library's scanner validates, and the first byte
// names the kind.
func CheckValue(data []byte) (Kind, error) {
	if !utf8.Valid(data) {
		return KindInvalid, errors.New("not valid UTF-8")
	}
	if !json.Valid(data) {
		return KindInvalid, errors.New("not valid JSON")
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch trimmed[0] {
	case '{':
		return KindObject, nil
	case '[':
		return KindArray, nil
	case '"':
		return KindString, nil
	case 't', 'f':
		return KindBool, nil
	case 'n':
		return KindNil, nil
	default:
		return KindNumber, nil
	}
}

// CompactObject checks that data is one JSON object and returns it in a form
// that contains no raw line breaks (so it can be framed by newlines). Data
// that already has none is returned as is, without copying.
func CompactObject(data []byte) ([]byte, error) {
	kind, err := CheckValue(data)
	if err != nil {
		return nil, err
	}
	if kind != KindObject {
		return nil, ErrNotObject
	}
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		return bytes.TrimSpace(data), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, errors.New("not valid JSON")
	}
	return buf.Bytes(), nil
}

// AppendString appends s as a JSON string literal. Bytes of s that are
// not UTF-8 become U+FFFD: the output is always valid UTF-8 (the encoder
// alone would pass them through).
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			if !utf8.ValidString(s) {
				s = strings.ToValidUTF8(s, "\uFFFD")
			}
			b, _ := API.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// Iterator is json-iterator's pull parser, as BorrowIterator returns it.
type Iterator = jsoniter.Iterator

// NextMember reads the next member name of the object the iterator is in
// (the first call reads the '{'); ok is false at the object's end or on an
// error. Callers consume each member's value (Value, Skip, a Read...)
// before asking for the next. Unlike a bare loop over ReadObject, a member
// whose name is the empty string does not end the walk: "" is a valid
// name. ReadObject returns "" for both; after an empty name the iterator
// stands at a value, after the object's end it does not.
func NextMember(it *Iterator) (name string, ok bool) {
	name = it.ReadObject()
	if it.Error != nil {
		return "", false
	}
	if name != "" {
		return name, true
	}
	return "", it.WhatIsNext() != KindInvalid
}

// Value returns a copy of the text of the next value, without the white
// space before it: `"id": 1` gives `1`, not ` 1`. (json-iterator's
// SkipAndReturnBytes keeps that white space, which made any server writing
// `": "` unreadable.)
func Value(it *Iterator) []byte {
	it.WhatIsNext() // moves past white space
	return it.SkipAndReturnBytes()
}

// AppendValue is Value appending to dst, for callers that size the copy.
func AppendValue(it *Iterator, dst []byte) []byte {
	it.WhatIsNext()
	return it.SkipAndAppendBytes(dst)
}

// Integer reads the text of a JSON number as an exact integer. Every RFC
// 8259 spelling of the same integer gives the same result: "7", "7.0",
// "7e0", "0.7E+1", "70e-1". A number with a fraction, one out of int64 range
// or text that is not a JSON number gives false. Plain digits (what every
// server sends in practice) are read without allocating.
func Integer(text []byte) (int64, bool) {
	if n, ok := plainInteger(text); ok {
		return n, true
	}
	if !validNumber(text) {
		return 0, false
	}
	var r big.Rat
	if _, ok := r.SetString(string(text)); !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// plainInteger reads -?digits that fit an int64 (at most 18 digits, so no
// overflow check is needed; longer ones take the exact path).
func plainInteger(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || (len(b) > 1 && b[0] == '0') {
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

// validNumber reports whether b is exactly one JSON number (RFC 8259
// section 6), so that nothing big.Rat would also accept ("0x10", "1/2",
// "Inf") passes as one.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		// An exponent this long is not an id anyone sent; refusing it
		// keeps big.Rat from building a number of that many digits.
		if i == start || i-start > 3 {
			return false
		}
	}
	return i == len(b)
}
