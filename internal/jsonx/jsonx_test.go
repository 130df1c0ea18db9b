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
