package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseOptions(t *testing.T) {
	t.Setenv("GW_UNIT_TOKEN", "0123456789abcdef")
	t.Setenv("GW_UNIT_SHORT", "short")
	cases := []struct {
		name, json, wantErr string
		check               func(t *testing.T, o *Options)
	}{
		{"defaults", ``, "", func(t *testing.T, o *Options) {
			require.Equal(t, DefaultMaxSessions, o.MaxSessions)
			require.Equal(t, DefaultSessionIdle, o.SessionIdle)
			require.Equal(t, int64(DefaultMaxBodyBytes), o.MaxBodyBytes)
			require.Nil(t, o.Auth)
		}},
		{"every member", `{"name":"gw","instructions":"i","allowed_origins":["https://a.example"],"allow_non_loopback":true,
		  "session_idle_timeout_ms":5,"max_sessions":3,"max_body_bytes":100,"stop_timeout_ms":7,"resume_grace_ms":9,
		  "auth":{"bearer_env":"GW_UNIT_TOKEN"}}`, "", func(t *testing.T, o *Options) {
			require.Equal(t, "gw", o.Name)
			require.Equal(t, 5*time.Millisecond, o.SessionIdle)
			require.Equal(t, 3, o.MaxSessions)
			require.Equal(t, 9*time.Millisecond, o.ResumeGrace)
			require.Equal(t, "0123456789abcdef", o.Auth.token)
		}},
		{"jwt", `{"auth":{"jwks_url":"http://127.0.0.1:1/jwks","issuer":"https://i","audience":"https://gw/mcp"}}`, "", nil},
		{"not an object", `[1]`, "options: must be a JSON object", nil},
		{"unknown member", `{"max_session":1}`, "options.max_session: is not a known option", nil},
		{"negative count", `{"max_sessions":-1}`, "options.max_sessions: must be a positive integer", nil},
		{"origin with a path", `{"allowed_origins":["https://a.example/"]}`, "options.allowed_origins[0]", nil},
		{"bearer env unset", `{"auth":{"bearer_env":"GW_UNIT_UNSET"}}`, "GW_UNIT_UNSET, which must be set", nil},
		{"bearer too short", `{"auth":{"bearer_env":"GW_UNIT_SHORT"}}`, "at least 16 characters", nil},
		{"both auths", `{"auth":{"bearer_env":"GW_UNIT_TOKEN","issuer":"x"}}`, "not both", nil},
		{"jwt incomplete", `{"auth":{"jwks_url":"https://i/jwks"}}`, "needs jwks_url, issuer and audience", nil},
		{"jwks over plain http", `{"auth":{"jwks_url":"http://issuer.example/jwks","issuer":"i","audience":"a"}}`, "https URL", nil},
		{"unknown auth member", `{"auth":{"token":"x"}}`, "options.auth.token", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseOptions([]byte(tc.json))
			if tc.wantErr != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.wantErr)
				require.NotContains(t, err.Message, "0123456789abcdef", "a message never holds the token")
				return
			}
			require.Nil(t, err)
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

func TestBoundName(t *testing.T) {
	long := strings.Repeat("server_with_a_long_name__", 4) + "tool"
	other := strings.Repeat("server_with_a_long_name__", 4) + "tool2"
	cases := []struct{ name, in string }{
		{"short", "echo"},
		{"exactly 64", strings.Repeat("a", 64)},
		{"long", long},
		{"long, another", other},
	}
	seen := map[string]string{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := boundName(tc.in)
			require.LessOrEqual(t, len(got), maxExposedName)
			require.Equal(t, got, boundName(tc.in), "deterministic")
			if len(tc.in) <= maxExposedName {
				require.Equal(t, tc.in, got)
			}
			require.NotContains(t, seen, got, "two names stay distinct")
			seen[got] = tc.in
		})
	}
}

func TestSharedURIs(t *testing.T) {
	servers := []string{"one", "two"}
	for _, tc := range []struct {
		uri    string
		ok     bool
		server string
		rest   string
	}{
		{sharedURI("two", "file:///a+b"), true, "two", "file:///a+b"},
		{"file:///plain", false, "", ""},
		{"three+file:///x", false, "", ""},
		{"+file:///x", false, "", ""},
	} {
		got, ok := splitShared(tc.uri, servers)
		require.Equal(t, tc.ok, ok, tc.uri)
		require.Equal(t, tc.server, got.server)
		require.Equal(t, tc.rest, got.name)
	}
}

func TestParseCaps(t *testing.T) {
	for _, tc := range []struct {
		json string
		want clientCaps
	}{
		{`{}`, clientCaps{}},
		{`{"sampling":{},"roots":{"listChanged":true}}`, clientCaps{sampling: true, roots: true}},
		{`{"elicitation":{}}`, clientCaps{elicitForm: true}},
		{`{"elicitation":{"url":{}}}`, clientCaps{elicitURL: true}},
		{`{"elicitation":{"form":{},"url":{}}}`, clientCaps{elicitForm: true, elicitURL: true}},
		{`{"sampling":null}`, clientCaps{}},
		{`not json`, clientCaps{}},
	} {
		require.Equal(t, tc.want, parseCaps([]byte(tc.json)), tc.json)
	}
}

func TestWithResultType(t *testing.T) {
	require.Equal(t, `{"resultType":"complete"}`, string(withResultType([]byte(`{}`))))
	require.Equal(t, `{"resultType":"complete","content":[]}`, string(withResultType([]byte(`{"content":[]}`))))
	require.Equal(t, `{"resultType":"input_required"}`, string(withResultType([]byte(`{"resultType":"input_required"}`))))
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "[::1]": true, "localhost": true, "LOCALHOST": true,
		"127.1.2.3": true, "0.0.0.0": false, "10.0.0.1": false, "example.com": false, "localhost.evil.example": false} {
		require.Equal(t, want, isLoopbackHost(host), host)
	}
	require.True(t, isLoopbackURL("http://localhost:3000"))
	require.False(t, isLoopbackURL("http://localhost.evil.example"))
	require.False(t, isLoopbackURL("file://localhost/x"))
}
