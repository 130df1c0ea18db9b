package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

func TestParseRestart(t *testing.T) {
	def := core.DefaultRestartPolicy()
	tests := []struct {
		name       string
		restart    string // "" leaves the field out
		supervised bool
		want       *core.RestartPolicy
		err        string
	}{
		{name: "absent: off for a bare client"},
		{name: "absent: on for a host's server", supervised: true, want: &def},
		{name: "true", restart: `true`, want: &def},
		{name: "false in a host", restart: `false`, supervised: true},
		{name: "object", restart: `{"max_restarts":2,"backoff_ms":10,"max_backoff_ms":40,"window_ms":1000}`,
			want: &core.RestartPolicy{MaxRestarts: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Window: time.Second}},
		{name: "not an object", restart: `3`, err: "config.restart: must be true, false or a JSON object"},
		{name: "unknown field", restart: `{"retries":3}`, err: "config.restart.retries"},
		{name: "negative", restart: `{"max_restarts":-1}`, err: "config.restart.max_restarts: must be between"},
		{name: "backoff above max", restart: `{"backoff_ms":500,"max_backoff_ms":100}`, err: "config.restart.max_backoff_ms: must be at least backoff_ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := `{"transport":{"type":"stdio","command":"server"}`
			if tc.restart != "" {
				raw += `,"restart":` + tc.restart
			}
			raw += `}`
			parse := Parse
			if tc.supervised {
				parse = ParseSupervised
			}
			p, err := parse([]byte(raw), "1.0")
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				return
			}
			require.Nil(t, err)
			require.Equal(t, tc.want, p.Options.Restart)
			require.Equal(t, tc.want != nil, p.Options.NewTransport != nil, "a supervised client can build its next transport")
		})
	}
}
