package config

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/stretchr/testify/require"
)

func TestParseCallOptions(t *testing.T) {
	cases := []struct {
		name string
		opts string
		want core.CallOptions
	}{
		{"empty means defaults", ``, core.CallOptions{}},
		{"empty object", `{}`, core.CallOptions{}},
		{"timeouts", `{"timeout_ms":1500,"max_total_ms":0,"reset_timeout_on_progress":false}`,
			core.CallOptions{Timeout: 1500 * time.Millisecond, TimeoutSet: true, MaxTotalSet: true, ResetSet: true}},
		{"flags", `{"all_pages":true,"progress":true,"wait_ready":true,"reset_timeout_on_progress":true}`,
			core.CallOptions{AllPages: true, Progress: true, WaitReady: true, ResetOnProgress: true, ResetSet: true}},
		{"task", `{"task":true}`, core.CallOptions{Task: true}},
		{"meta kept as given", "{\"_meta\":{\"trace\":\"a\"}}", core.CallOptions{Meta: []byte(`{"trace":"a"}`)}},
		{"line breaks", "{\n\"timeout_ms\": 5\n}", core.CallOptions{Timeout: 5 * time.Millisecond, TimeoutSet: true}},
		{"verify", `{"verify":{"size":4}}`, core.CallOptions{Verify: &core.ResourceVerify{Size: 4, SizeSet: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCallOptions([]byte(tc.opts))
			require.Nil(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseCallOptionsRefuses(t *testing.T) {
	upper := sha256.Sum256([]byte("x"))
	cases := []struct{ name, opts, msg string }{
		{"not an object", `[1]`, "options must be a JSON object"},
		{"not JSON", `{"timeout_ms":`, "options must be a JSON object"},
		{"unknown field", `{"timeout":5}`, "options.timeout is not a known call option"},
		{"negative timeout", `{"timeout_ms":-1}`, "options.timeout_ms must be a whole number of milliseconds, 0 or more"},
		{"fractional timeout", `{"max_total_ms":1.5}`, "options.max_total_ms must be a whole number of milliseconds, 0 or more"},
		{"string timeout", `{"timeout_ms":"5"}`, "options.timeout_ms must be a whole number of milliseconds"},
		{"flag not a bool", `{"progress":1}`, "options.progress must be true or false"},
		{"meta not an object", `{"_meta":[]}`, "options._meta must be a JSON object"},
		// The verify member (resources/read only).
		{"verify not an object", `{"verify":true}`, "must be a JSON object"},
		{"verify empty", `{"verify":{}}`, "needs digest, size or frontmatter"},
		{"verify unknown member", `{"verify":{"sha":"x"}}`, "verify.sha is not a known member"},
		{"verify other algorithm", `{"verify":{"digest":"md5:00"}}`, "sha256"},
		{"verify uppercase hex", `{"verify":{"digest":"sha256:` + strings.ToUpper(hex.EncodeToString(upper[:])) + `"}}`, "sha256"},
		{"verify short hex", `{"verify":{"digest":"sha256:abcd"}}`, "sha256"},
		{"verify negative size", `{"verify":{"size":-1}}`, "size must be"},
		{"verify fractional size", `{"verify":{"size":1.5}}`, "size must be"},
		{"verify string size", `{"verify":{"size":"4"}}`, "size must be"},
		{"verify frontmatter not object", `{"verify":{"frontmatter":[1]}}`, "frontmatter must be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCallOptions([]byte(tc.opts))
			require.NotNil(t, err)
			require.Equal(t, core.StatusInvalidArgument, err.Status)
			require.Contains(t, err.Message, tc.msg)
		})
	}
}

// Call options are parsed on every call: the benchmark watches the
// allocations of the common shapes (none for no options).
func BenchmarkParseCallOptions(b *testing.B) {
	for _, tc := range []struct{ name, opts string }{
		{"empty", ``},
		{"timeout", `{"timeout_ms":5000}`},
		{"typical", `{"timeout_ms":5000,"progress":true,"_meta":{"trace":"abc"}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			raw := []byte(tc.opts)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseCallOptions(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
