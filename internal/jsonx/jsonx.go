package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
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

// AppendString appends s as a JSON string literal.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			b, _ := API.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
