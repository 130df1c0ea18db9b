package etf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// A reference decoder of the external term format, written from the format's
// specification, for the tags this package produces. Values come out in the
// normalised form of norm below, so they compare with reflect-style equality.

type intVal string   // an integer, as its decimal text
type floatVal uint64 // a float, as its IEEE 754 bits (0.0 and -0.0 differ)

func decodeETF(b []byte) (any, error) {
	if len(b) == 0 || b[0] != tagVersion {
		return nil, errors.New("missing version byte")
	}
	d := &termDecoder{b: b, pos: 1}
	v, err := d.term()
	if err != nil {
		return nil, err
	}
	if d.pos != len(b) {
		return nil, fmt.Errorf("%d trailing bytes", len(b)-d.pos)
	}
	return v, nil
}

type termDecoder struct {
	b   []byte
	pos int
}

func (d *termDecoder) need(n int) ([]byte, error) {
	if d.pos+n > len(d.b) {
		return nil, errors.New("truncated term")
	}
	s := d.b[d.pos : d.pos+n]
	d.pos += n
	return s, nil
}

func (d *termDecoder) u8() (int, error) {
	s, err := d.need(1)
	if err != nil {
		return 0, err
	}
	return int(s[0]), nil
}

func (d *termDecoder) u32() (int, error) {
	s, err := d.need(4)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint32(s)), nil
}

func (d *termDecoder) term() (any, error) {
	tag, err := d.u8()
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagSmallInteger:
		v, err := d.u8()
		return intVal(strconv.Itoa(v)), err
	case tagInteger:
		s, err := d.need(4)
		if err != nil {
			return nil, err
		}
		return intVal(strconv.Itoa(int(int32(binary.BigEndian.Uint32(s))))), nil
	case tagSmallBig, tagLargeBig:
		var n int
		if tag == tagSmallBig {
			n, err = d.u8()
		} else {
			n, err = d.u32()
		}
		if err != nil {
			return nil, err
		}
		sign, err := d.u8()
		if err != nil {
			return nil, err
		}
		mag, err := d.need(n)
		if err != nil {
			return nil, err
		}
		if n == 0 || mag[n-1] == 0 {
			return nil, errors.New("bignum with a zero top byte")
		}
		be := make([]byte, n)
		for i := range mag {
			be[n-1-i] = mag[i]
		}
		v := new(big.Int).SetBytes(be)
		if sign == 1 {
			v.Neg(v)
		} else if sign != 0 {
			return nil, errors.New("bad bignum sign")
		}
		if v.IsInt64() && v.Int64() >= math.MinInt32 && v.Int64() <= math.MaxInt32 {
			return nil, errors.New("bignum that fits INTEGER_EXT")
		}
		return intVal(v.String()), nil
	case tagNewFloat:
		s, err := d.need(8)
		if err != nil {
			return nil, err
		}
		return floatVal(binary.BigEndian.Uint64(s)), nil
	case tagSmallAtomUTF8:
		n, err := d.u8()
		if err != nil {
			return nil, err
		}
		s, err := d.need(n)
		if err != nil {
			return nil, err
		}
		switch string(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "nil":
			return nil, nil
		}
		return nil, fmt.Errorf("unexpected atom %q", s)
	case tagBinary:
		n, err := d.u32()
		if err != nil {
			return nil, err
		}
		s, err := d.need(n)
		return string(s), err
	case tagNil:
		return []any{}, nil
	case tagList:
		n, err := d.u32()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errors.New("LIST_EXT of length 0 (must be NIL_EXT)")
		}
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			v, err := d.term()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		tail, err := d.u8()
		if err != nil {
			return nil, err
		}
		if tail != tagNil {
			return nil, errors.New("improper list")
		}
		return out, nil
	case tagMap:
		n, err := d.u32()
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, n)
		for i := 0; i < n; i++ {
			k, err := d.term()
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, errors.New("map key is not a binary")
			}
			if _, dup := out[ks]; dup {
				return nil, fmt.Errorf("repeated map key %q", ks)
			}
			v, err := d.term()
			if err != nil {
				return nil, err
			}
			out[ks] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected tag %d", tag)
}

// norm converts what encoding/json decoded (with UseNumber) into the
// reference form, applying the package's documented number rules.
func norm(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = norm(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = norm(e)
		}
		return x
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if len(strings.TrimPrefix(s, "-")) > MaxIntegerDigits {
				return s
			}
			b, _ := new(big.Int).SetString(s, 10)
			return intVal(b.String())
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && math.IsInf(f, 0) {
			return s
		}
		return floatVal(math.Float64bits(f))
	}
	return v
}

func referenceDecode(t testing.TB, data []byte) any {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return norm(v)
}

func convert(t testing.TB, in string) any {
	t.Helper()
	out, err := FromJSON([]byte(in))
	require.NoError(t, err, "FromJSON(%q)", in)
	v, err := decodeETF(out)
	require.NoError(t, err, "decoding FromJSON(%q) = %x", in, out)
	return v
}

// ---------------------------------------------------------------------------

func TestExactBytes(t *testing.T) {
	cases := []struct {
		in   string
		want []byte
	}{
		{`null`, []byte{131, 119, 3, 'n', 'i', 'l'}},
		{`true`, []byte{131, 119, 4, 't', 'r', 'u', 'e'}},
		{`false`, []byte{131, 119, 5, 'f', 'a', 'l', 's', 'e'}},
		{`0`, []byte{131, 97, 0}},
		{`255`, []byte{131, 97, 255}},
		{`256`, []byte{131, 98, 0, 0, 1, 0}},
		{`-1`, []byte{131, 98, 255, 255, 255, 255}},
		{`2147483647`, []byte{131, 98, 127, 255, 255, 255}},
		{`2147483648`, []byte{131, 110, 4, 0, 0, 0, 0, 128}},
		{`-2147483649`, []byte{131, 110, 4, 1, 1, 0, 0, 128}},
		{`18446744073709551616`, []byte{131, 110, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{`1.5`, []byte{131, 70, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}},
		{`""`, []byte{131, 109, 0, 0, 0, 0}},
		{`"ab"`, []byte{131, 109, 0, 0, 0, 2, 'a', 'b'}},
		{`[]`, []byte{131, 106}},
		{`[1,2]`, []byte{131, 108, 0, 0, 0, 2, 97, 1, 97, 2, 106}},
		{`{}`, []byte{131, 116, 0, 0, 0, 0}},
		{`{"a":1}`, []byte{131, 116, 0, 0, 0, 1, 109, 0, 0, 0, 1, 'a', 97, 1}},
		{` {"a" : [ ] } `, []byte{131, 116, 0, 0, 0, 1, 109, 0, 0, 0, 1, 'a', 106}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := FromJSON([]byte(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestValues(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want any
	}{
		{"nested", `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"nextCursor":null}`,
			map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}, "nextCursor": nil}},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t"},
		{"unicode escape", `"\u00e9\u4e2d"`, "é中"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"lone high surrogate", `"\ud83dx"`, "\uFFFDx"},
		{"lone low surrogate", `"\ude00"`, "\uFFFD"},
		{"high then non-low escape", `"\ud83d\u0041"`, "\uFFFDA"},
		{"raw utf-8", `"héllo 中文 😀"`, "héllo 中文 😀"},
		{"last key wins", `{"a":1,"b":2,"a":3}`, map[string]any{"a": intVal("3"), "b": intVal("2")}},
		{"negative zero int", `-0`, intVal("0")},
		{"negative zero float", `-0.0`, floatVal(math.Float64bits(math.Copysign(0, -1)))},
		{"exponent is a float", `1e2`, floatVal(math.Float64bits(100))},
		{"max int64", `9223372036854775807`, intVal("9223372036854775807")},
		{"min int64", `-9223372036854775808`, intVal("-9223372036854775808")},
		{"big negative", `-123456789012345678901234567890`, intVal("-123456789012345678901234567890")},
		{"float overflow is text", `1e400`, "1e400"},
		{"float underflow is zero", `1e-400`, floatVal(0)},
		{"too many digits is text", strings.Repeat("9", MaxIntegerDigits+1), strings.Repeat("9", MaxIntegerDigits+1)},
		{"many digits", strings.Repeat("9", MaxIntegerDigits), intVal(strings.Repeat("9", MaxIntegerDigits))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, convert(t, tc.in))
			require.Equal(t, referenceDecode(t, []byte(tc.in)), tc.want, "the reference agrees")
		})
	}
}

func TestLargeBigUsesLargeBigExt(t *testing.T) {
	out, err := FromJSON([]byte(strings.Repeat("7", 700))) // > 255 magnitude bytes
	require.NoError(t, err)
	require.Equal(t, byte(tagLargeBig), out[1])
	v, err := decodeETF(out)
	require.NoError(t, err)
	require.Equal(t, intVal(strings.Repeat("7", 700)), v)
}

func TestManyDuplicateKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":{"v":%d}`, i%40, i)
	}
	b.WriteString("}")
	require.Equal(t, referenceDecode(t, []byte(b.String())), convert(t, b.String()))
}

func TestDeepNesting(t *testing.T) {
	in := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	v := convert(t, in)
	for i := 0; i < 4999; i++ {
		v = v.([]any)[0]
	}
	require.Equal(t, []any{}, v)
	_, err := FromJSON([]byte(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)))
	require.Error(t, err)
}

func TestErrors(t *testing.T) {
	cases := []struct{ in, msg string }{
		{``, "unexpected end"},
		{`   `, "unexpected end"},
		{`nul`, "invalid literal"},
		{`tru`, "invalid literal"},
		{`01`, "after the value"},
		{`1.`, "after '.'"},
		{`1e`, "exponent"},
		{`-`, "invalid number"},
		{`+1`, "unexpected character"},
		{`.5`, "unexpected character"},
		{`"abc`, "unterminated string"},
		{"\"a\x01\"", "control character"},
		{`"\x"`, "invalid escape"},
		{`"\u12"`, "invalid \\u"},
		{`"\ud800\uzzzz"`, "invalid \\u"},
		{"\"\xff\"", "invalid UTF-8"},
		{`[1,]`, "unexpected character"},
		{`[1 2]`, "expected ',' or ']'"},
		{`{"a" 1}`, "expected ':'"},
		{`{a:1}`, "string key"},
		{`{"a":1,}`, "string key"},
		{`{"a":1 "b":2}`, "expected ',' or '}'"},
		{`[`, "unexpected end"},
		{`{"a":`, "unexpected end"},
		{`1 2`, "after the value"},
		{`NaN`, "unexpected character"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			_, err := FromJSON([]byte(tc.in))
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			require.Contains(t, err.Error(), tc.msg)
			require.False(t, json.Valid([]byte(tc.in)) && utf8.ValidString(tc.in), "the standard library agrees it is invalid")
		})
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	out, err := AppendJSON([]byte("xy"), []byte(`[true]`))
	require.NoError(t, err)
	require.Equal(t, []byte("xy"), out[:2])
	_, err = decodeETF(out[2:])
	require.NoError(t, err)
	out, err = AppendJSON([]byte("xy"), []byte(`[tru]`))
	require.Error(t, err)
	require.Equal(t, []byte("xy"), out)
}

// fuzzSeeds are realistic MCP results plus the edge cases above.
var fuzzSeeds = []string{
	`{"content":[{"type":"text","text":"hello"}],"structuredContent":{"text":"hello"},"isError":false}`,
	`{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}}],"nextCursor":"eyJ"}`,
	`{"contents":[{"uri":"fixture://blob","blob":"AAEC","mimeType":"application/octet-stream"}]}`,
	`{"a":1,"a":[1.5e3,-0,0.1,1e400,-1e-400,12345678901234567890]}`,
	`"\ud83d\ude00\ud800\u0041\\\/\b"`, `[[],[{}],[[[null]]]]`, `-0.0`, `true`, `"é"`,
}

// FuzzFromJSON checks FromJSON against encoding/json: every valid UTF-8 JSON
// text converts, and the reference decoding of the output equals what the
// standard library decodes; every input the standard library refuses is
// refused.
func FuzzFromJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := FromJSON(data)
		valid := json.Valid(data) && utf8.Valid(data)
		if !valid {
			require.Error(t, err, "accepted invalid input %q", data)
			return
		}
		require.NoError(t, err, "refused valid input %q", data)
		got, err := decodeETF(out)
		require.NoError(t, err, "output does not decode: %x", out)
		require.Equal(t, referenceDecode(t, data), got)
	})
}

func BenchmarkFromJSON(b *testing.B) {
	tools := `{"tools":[` + strings.Repeat(`{"name":"echo","description":"Returns text, also as structuredContent","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"text to return"}},"required":["text"]}},`, 19) +
		`{"name":"last","inputSchema":{"type":"object"}}]}`
	for _, bc := range []struct{ name, in string }{
		{"echo", `{"content":[{"type":"text","text":"hello"}],"structuredContent":{"text":"hello"}}`},
		{"tools20", tools},
		{"text64k", `{"content":[{"type":"text","text":"` + strings.Repeat("x", 65536) + `"}]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := []byte(bc.in)
			buf := make([]byte, 0, 2*len(data))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var err error
				if buf, err = AppendJSON(buf[:0], data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
