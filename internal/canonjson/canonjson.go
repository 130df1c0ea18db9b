package canonjson

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Canonicalize returns the JCS form of one JSON text.
func Canonicalize(data []byte) ([]byte, error) {
	if _, err := jsonx.CheckValue(data); err != nil {
		return nil, err
	}
	var v any
	if err := jsonx.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return Append(nil, v)
}

// Append appends the JCS form of a decoded JSON value (as produced by
// jsonx.Unmarshal into any: maps, slices, strings, jsonx.Number, float64,
// bools and nil).
func Append(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendString(dst, x), nil
	case jsonx.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, errors.New("canonjson: number out of range: " + string(x))
		}
		return appendNumber(dst, f)
	case float64:
		return appendNumber(dst, x)
	case int:
		return appendNumber(dst, float64(x))
	case int64:
		return appendNumber(dst, float64(x))
	case uint64:
		return appendNumber(dst, float64(x))
	case []any:
		dst = append(dst, '[')
		for i, item := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = Append(dst, item); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = Append(dst, x[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	default:
		return nil, errors.New("canonjson: unsupported value type")
	}
}

// lessUTF16 orders strings by their UTF-16 code units, as JCS requires.
func lessUTF16(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

const hexDigits = "0123456789abcdef"

// appendString escapes only what JSON requires: the quote, the backslash and
// control characters (with the short forms where they exist).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			dst = append(dst, '\\', '"')
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendNumber writes f as ECMAScript's Number.prototype.toString would.
func appendNumber(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errors.New("canonjson: NaN and infinities are not JSON")
	}
	if f == 0 {
		return append(dst, '0'), nil // also -0
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits d1d2...dk and exponent n, with
	// value = 0.d1...dk × 10^n (ECMAScript's k and n).
	e := strconv.FormatFloat(f, 'e', -1, 64) // "d.ddde±XX"
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expPart)
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for i := 0; i < n-k; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := 0; i < -n; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst, nil
}
