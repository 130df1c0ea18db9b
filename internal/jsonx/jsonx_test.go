package jsonx

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckValue(t *testing.T) {
	cases := []struct {
		name string
		in   string
		kind Kind
		ok   bool
	}{
		{"object", `{"a":1}`, KindObject, true},
		{"object with space", "  {\"a\": [1, 2]}\n", KindObject, true},
		{"array", `[1,2]`, KindArray, true},
		{"string", `"x"`, KindString, true},
		{"number", `12.5e3`, KindNumber, true},
		{"null", `null`, KindNil, true},
		{"truncated", `{"a":`, KindInvalid, false},
		{"two values", `{} {}`, KindInvalid, false},
		{"trailing garbage", `{}x`, KindInvalid, false},
		{"bad utf8", "{\"a\":\"\xff\"}", KindInvalid, false},
		{"empty", ``, KindInvalid, false},
		{"bare word", `hello`, KindInvalid, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind, err := CheckValue([]byte(tc.in))
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.kind, kind)
		})
	}
}

func TestCompactObject(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
		err  bool
	}{
		{"already compact", `{"a":1}`, `{"a":1}`, false},
		{"pretty", "{\n  \"a\": 1,\n  \"b\": \"x y\"\r\n}", `{"a":1,"b":"x y"}`, false},
		{"array is not an object", `[1]`, "", true},
		{"invalid", `{"a"}`, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CompactObject([]byte(tc.in))
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"tools/call", "with \"quote\"", "new\nline", "üñí"} {
		t.Run(s, func(t *testing.T) {
			got := AppendString(nil, s)
			var back string
			require.NoError(t, Unmarshal(got, &back))
			require.Equal(t, s, back)
		})
	}
}

func TestInteger(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"17", 17, true},
		{"-4", -4, true},
		{"123456789012345678", 123456789012345678, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"1.0", 1, true},
		{"1.0e0", 1, true},
		{"1E+0", 1, true},
		{"0.1e1", 1, true},
		{"10e-1", 1, true},
		{"-0", 0, true},
		{"1e3", 1000, true},
		{"1.5", 0, false},
		{"9223372036854775808", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"01", 0, false},
		{"0x1", 0, false},
		{"1/2", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"1e", 0, false},
		{"1e99999", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := Integer([]byte(tc.in))
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestValueDropsLeadingSpace(t *testing.T) {
	it := BorrowIterator([]byte("{\"a\": \n\t 1 , \"\" :\r\n[ 2 ]}"))
	defer ReturnIterator(it)
	var got []string
	for name, ok := NextMember(it); ok; name, ok = NextMember(it) {
		got = append(got, name+"="+string(Value(it)))
	}
	require.Equal(t, []string{"a=1", "=[ 2 ]"}, got)
}
