package etf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// External term format tags.
const (
	tagVersion        = 131
	tagNewFloat       = 70
	tagSmallInteger   = 97
	tagInteger        = 98
	tagSmallBig       = 110
	tagLargeBig       = 111
	tagNil            = 106
	tagList           = 108
	tagBinary         = 109
	tagMap            = 116
	tagSmallAtomUTF8  = 119
	maxDepth          = 10000
	smallObjectDedupe = 16 // objects up to this size find duplicate keys without a map
)

// MaxIntegerDigits is the longest integer literal converted to an integer
// term; a longer one is delivered as a binary of its text (converting huge
// decimals costs time quadratic in their length).
const MaxIntegerDigits = 1024

// SyntaxError reports input that is not one JSON value in UTF-8.
type SyntaxError struct {
	Offset int // byte offset of the problem
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("etf: invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// FromJSON converts one JSON value into external term format, version byte
// included.
func FromJSON(data []byte) ([]byte, error) {
	return AppendJSON(make([]byte, 0, len(data)+len(data)/4+16), data)
}

// AppendJSON is FromJSON appending to dst.
func AppendJSON(dst, data []byte) ([]byte, error) {
	e := encoder{in: data, out: append(dst, tagVersion)}
	e.skipSpace()
	if err := e.value(0); err != nil {
		return dst, err
	}
	e.skipSpace()
	if e.pos != len(e.in) {
		return dst, e.fail("unexpected data after the value")
	}
	return e.out, nil
}

// pair records where one object member's key and value were written.
type pair struct{ key, value, end int }

type encoder struct {
	in    []byte
	pos   int
	out   []byte
	pairs []pair // a stack shared by the objects being written
}

func (e *encoder) fail(msg string) error { return &SyntaxError{Offset: e.pos, Msg: msg} }

func (e *encoder) skipSpace() {
	for e.pos < len(e.in) {
		switch e.in[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

func (e *encoder) value(depth int) error {
	if e.pos >= len(e.in) {
		return e.fail("unexpected end of input")
	}
	switch c := e.in[e.pos]; {
	case c == '{':
		return e.object(depth + 1)
	case c == '[':
		return e.array(depth + 1)
	case c == '"':
		return e.str()
	case c == 't':
		return e.literal("true", "true")
	case c == 'f':
		return e.literal("false", "false")
	case c == 'n':
		return e.literal("null", "nil")
	case c == '-' || (c >= '0' && c <= '9'):
		return e.number()
	default:
		return e.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

func (e *encoder) literal(word, atom string) error {
	if len(e.in)-e.pos < len(word) || string(e.in[e.pos:e.pos+len(word)]) != word {
		return e.fail("invalid literal")
	}
	e.pos += len(word)
	e.out = append(e.out, tagSmallAtomUTF8, byte(len(atom)))
	e.out = append(e.out, atom...)
	return nil
}

func (e *encoder) array(depth int) error {
	if depth > maxDepth {
		return e.fail("nested too deeply")
	}
	e.pos++ // [
	e.skipSpace()
	if e.pos < len(e.in) && e.in[e.pos] == ']' {
		e.pos++
		e.out = append(e.out, tagNil)
		return nil
	}
	head := len(e.out)
	e.out = append(e.out, tagList, 0, 0, 0, 0)
	n := 0
	for {
		e.skipSpace()
		if err := e.value(depth); err != nil {
			return err
		}
		n++
		e.skipSpace()
		if e.pos >= len(e.in) {
			return e.fail("unexpected end of input in an array")
		}
		switch e.in[e.pos] {
		case ',':
			e.pos++
		case ']':
			e.pos++
			binary.BigEndian.PutUint32(e.out[head+1:], uint32(n))
			e.out = append(e.out, tagNil)
			return nil
		default:
			return e.fail("expected ',' or ']' in an array")
		}
	}
}

func (e *encoder) object(depth int) error {
	if depth > maxDepth {
		return e.fail("nested too deeply")
	}
	e.pos++ // {
	head := len(e.out)
	e.out = append(e.out, tagMap, 0, 0, 0, 0)
	base := len(e.pairs)
	defer func() { e.pairs = e.pairs[:base] }()
	e.skipSpace()
	if e.pos < len(e.in) && e.in[e.pos] == '}' {
		e.pos++
		return nil
	}
	for {
		e.skipSpace()
		if e.pos >= len(e.in) || e.in[e.pos] != '"' {
			return e.fail("expected a string key in an object")
		}
		p := pair{key: len(e.out)}
		if err := e.str(); err != nil {
			return err
		}
		e.skipSpace()
		if e.pos >= len(e.in) || e.in[e.pos] != ':' {
			return e.fail("expected ':' after an object key")
		}
		e.pos++
		e.skipSpace()
		p.value = len(e.out)
		if err := e.value(depth); err != nil {
			return err
		}
		p.end = len(e.out)
		e.pairs = append(e.pairs, p)
		e.skipSpace()
		if e.pos >= len(e.in) {
			return e.fail("unexpected end of input in an object")
		}
		switch e.in[e.pos] {
		case ',':
			e.pos++
		case '}':
			e.pos++
			n := e.dedupe(head+5, e.pairs[base:])
			binary.BigEndian.PutUint32(e.out[head+1:], uint32(n))
			return nil
		default:
			return e.fail("expected ',' or '}' in an object")
		}
	}
}

// dedupe removes every member whose key appears again later in the object
// (the last value wins, as in every common JSON decoder; binary_to_term
// refuses a map with a repeated key). start is where the first member
// begins; it returns the number of members kept.
func (e *encoder) dedupe(start int, ps []pair) int {
	if len(ps) < 2 {
		return len(ps)
	}
	key := func(p pair) []byte { return e.out[p.key:p.value] }
	var drop []bool
	if len(ps) <= smallObjectDedupe {
		for i := 0; i < len(ps)-1; i++ {
			for j := i + 1; j < len(ps); j++ {
				if bytes.Equal(key(ps[i]), key(ps[j])) {
					if drop == nil {
						drop = make([]bool, len(ps))
					}
					drop[i] = true
					break
				}
			}
		}
	} else {
		last := make(map[string]int, len(ps))
		for i, p := range ps {
			last[string(key(p))] = i
		}
		if len(last) != len(ps) {
			drop = make([]bool, len(ps))
			for i, p := range ps {
				drop[i] = last[string(key(p))] != i
			}
		}
	}
	if drop == nil {
		return len(ps)
	}
	w, kept := start, 0
	for i, p := range ps {
		if drop[i] {
			continue
		}
		w += copy(e.out[w:], e.out[p.key:p.end])
		kept++
	}
	e.out = e.out[:w]
	return kept
}

// plain marks the ASCII bytes a string copies as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str writes the string at e.pos as a binary.
func (e *encoder) str() error {
	e.pos++ // opening quote
	head := len(e.out)
	e.out = append(e.out, tagBinary, 0, 0, 0, 0)
	start := e.pos
	for {
		// The run without escapes, copied as is once validated.
		in := e.in
		i := e.pos
		for i < len(in) {
			c := in[i]
			if plain[c] {
				i++
				continue
			}
			if c < utf8.RuneSelf {
				break // '"', '\\' or a control character
			}
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				e.pos = i
				return e.fail("invalid UTF-8 in a string")
			}
			i += size
		}
		e.out = append(e.out, e.in[e.pos:i]...)
		e.pos = i
		if e.pos >= len(e.in) {
			e.pos = start - 1
			return e.fail("unterminated string")
		}
		switch c := e.in[e.pos]; {
		case c == '"':
			e.pos++
			binary.BigEndian.PutUint32(e.out[head+1:], uint32(len(e.out)-head-5))
			return nil
		case c < 0x20:
			return e.fail("control character in a string")
		}
		if err := e.escape(); err != nil {
			return err
		}
	}
}

// escape decodes the escape sequence at e.pos.
func (e *encoder) escape() error {
	if e.pos+1 >= len(e.in) {
		return e.fail("unterminated escape")
	}
	c := e.in[e.pos+1]
	e.pos += 2
	switch c {
	case '"', '\\', '/':
		e.out = append(e.out, c)
	case 'b':
		e.out = append(e.out, '\b')
	case 'f':
		e.out = append(e.out, '\f')
	case 'n':
		e.out = append(e.out, '\n')
	case 'r':
		e.out = append(e.out, '\r')
	case 't':
		e.out = append(e.out, '\t')
	case 'u':
		r, ok := e.hex4()
		if !ok {
			return e.fail("invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate followed by a low one is one character;
			// anything else is a lone surrogate.
			if r < 0xDC00 && e.pos+1 < len(e.in) && e.in[e.pos] == '\\' && e.in[e.pos+1] == 'u' {
				save := e.pos
				e.pos += 2
				r2, ok := e.hex4()
				if !ok {
					return e.fail("invalid \\u escape")
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
				} else {
					e.pos = save // the second escape stands on its own
					r = utf8.RuneError
				}
			} else {
				r = utf8.RuneError
			}
		}
		e.out = utf8.AppendRune(e.out, r)
	default:
		e.pos -= 2
		return e.fail("invalid escape")
	}
	return nil
}

func (e *encoder) hex4() (rune, bool) {
	if e.pos+4 > len(e.in) {
		return 0, false
	}
	var r rune
	for _, c := range e.in[e.pos : e.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	e.pos += 4
	return r, true
}

// number writes the number at e.pos, checking the RFC 8259 grammar.
func (e *encoder) number() error {
	start := e.pos
	if e.in[e.pos] == '-' {
		e.pos++
	}
	digits := e.pos
	switch {
	case e.pos < len(e.in) && e.in[e.pos] == '0':
		e.pos++
	case e.pos < len(e.in) && e.in[e.pos] >= '1' && e.in[e.pos] <= '9':
		for e.pos < len(e.in) && e.in[e.pos] >= '0' && e.in[e.pos] <= '9' {
			e.pos++
		}
	default:
		return e.fail("invalid number")
	}
	isInt := true
	if e.pos < len(e.in) && e.in[e.pos] == '.' {
		isInt = false
		e.pos++
		if !e.digits() {
			return e.fail("invalid number: digits expected after '.'")
		}
	}
	if e.pos < len(e.in) && (e.in[e.pos] == 'e' || e.in[e.pos] == 'E') {
		isInt = false
		e.pos++
		if e.pos < len(e.in) && (e.in[e.pos] == '+' || e.in[e.pos] == '-') {
			e.pos++
		}
		if !e.digits() {
			return e.fail("invalid number: digits expected in the exponent")
		}
	}
	text := e.in[start:e.pos]
	if isInt {
		e.integer(text, e.pos-digits)
		return nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || math.IsInf(f, 0) {
		e.textBinary(text) // beyond the largest double
		return nil
	}
	e.out = append(e.out, tagNewFloat)
	e.out = binary.BigEndian.AppendUint64(e.out, math.Float64bits(f))
	return nil
}

func (e *encoder) digits() bool {
	n := e.pos
	for e.pos < len(e.in) && e.in[e.pos] >= '0' && e.in[e.pos] <= '9' {
		e.pos++
	}
	return e.pos > n
}

func (e *encoder) textBinary(text []byte) {
	e.out = append(e.out, tagBinary)
	e.out = binary.BigEndian.AppendUint32(e.out, uint32(len(text)))
	e.out = append(e.out, text...)
}

// integer writes a valid integer literal with ndigits digits.
func (e *encoder) integer(text []byte, ndigits int) {
	if ndigits <= 18 {
		var v int64
		neg := text[0] == '-'
		for _, c := range text {
			if c != '-' {
				v = v*10 + int64(c-'0')
			}
		}
		if neg {
			v = -v
		}
		e.int64(v)
		return
	}
	if ndigits > MaxIntegerDigits {
		e.textBinary(text)
		return
	}
	var b big.Int
	b.SetString(string(text), 10)
	if b.IsInt64() {
		e.int64(b.Int64())
		return
	}
	mag := b.Bytes() // big-endian magnitude
	e.big(b.Sign() < 0, len(mag), func(i int) byte { return mag[len(mag)-1-i] })
}

func (e *encoder) int64(v int64) {
	switch {
	case v >= 0 && v <= 255:
		e.out = append(e.out, tagSmallInteger, byte(v))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		e.out = append(e.out, tagInteger)
		e.out = binary.BigEndian.AppendUint32(e.out, uint32(int32(v)))
	default:
		neg := v < 0
		u := uint64(v)
		if neg {
			u = -u
		}
		n := 0
		for x := u; x != 0; x >>= 8 {
			n++
		}
		e.big(neg, n, func(i int) byte { return byte(u >> (8 * i)) })
	}
}

// big writes a bignum of n magnitude bytes, least significant first.
func (e *encoder) big(neg bool, n int, at func(int) byte) {
	if n <= 255 {
		e.out = append(e.out, tagSmallBig, byte(n))
	} else {
		e.out = append(e.out, tagLargeBig)
		e.out = binary.BigEndian.AppendUint32(e.out, uint32(n))
	}
	sign := byte(0)
	if neg {
		sign = 1
	}
	e.out = append(e.out, sign)
	for i := 0; i < n; i++ {
		e.out = append(e.out, at(i))
	}
}
