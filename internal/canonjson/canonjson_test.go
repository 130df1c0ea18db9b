package canonjson

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The number cases come from RFC 8785 Appendix B and the ECMAScript rules.
func TestNumbers(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-1, "-1"},
		{4.5, "4.5"},
		{0.002, "0.002"},
		{0.000001, "0.000001"},
		{1e-7, "1e-7"},
		{1e21, "1e+21"},
		{1e20, "100000000000000000000"},
		{123456789012345680000, "123456789012345680000"},
		{1e30, "1e+30"},
		{333333333.3333333, "333333333.3333333"},
		{9007199254740992, "9007199254740992"},
		{5e-324, "5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{-1.5e-10, "-1.5e-10"},
		{295147905179352830000, "295147905179352830000"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			got, err := appendNumber(nil, tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}
	_, err := appendNumber(nil, math.NaN())
	require.Error(t, err)
}

func TestCanonicalize(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"sorted keys, no space", `{ "b": 1, "a": [true, null, "x"] }`, `{"a":[true,null,"x"],"b":1}`},
		{"nested", `{"z":{"y":2,"x":1}}`, `{"z":{"x":1,"y":2}}`},
		{"numbers normalised", `[1.0, 1e2, 0.50, -0]`, `[1,100,0.5,0]`},
		{"minimal escapes", `"\u00e9\u2028\/\u001f\n"`, "\"é\u2028/\\u001f\\n\""},
		// RFC 8785 §3.2.3: sorting by UTF-16 code units puts U+10000 (a
		// surrogate pair D800 DC00) before U+FB33.
		{"utf16 order", `{"\ufb33":1,"\ud800\udc00":2,"a":3}`, "{\"a\":3,\"\U00010000\":2,\"\ufb33\":1}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
			require.True(t, json.Valid(got))
		})
	}
	_, err := Canonicalize([]byte(`{"a":`))
	require.Error(t, err)
}

// FuzzCanonicalize: canonical output is valid JSON, means the same as the
// input, and is a fixed point.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1.5e300,-0,"\u0000"]`, `{"b":{"a":[]}}`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Canonicalize(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q for %q", out, data)
		}
		again, err := Canonicalize(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a fixed point: %q -> %q", out, again)
		}
	})
}
