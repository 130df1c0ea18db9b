package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// protocol.result_cache, protocol.listen and protocol.tasks are booleans
// with documented defaults; anything else is an error naming the field.
func TestModernProtocolFields(t *testing.T) {
	cases := []struct {
		name, protocol           string
		noCache, noListen, tasks bool
		err                      string
	}{
		{name: "defaults", protocol: `{}`},
		{name: "all set", protocol: `{"result_cache":false,"listen":false,"tasks":true}`, noCache: true, noListen: true, tasks: true},
		{name: "not a boolean", protocol: `{"tasks":"yes"}`, err: "protocol.tasks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"x"},"protocol":`+tc.protocol+`}`), "1")
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				return
			}
			require.Nil(t, err)
			require.Equal(t, tc.noCache, p.Options.NoResultCache)
			require.Equal(t, tc.noListen, p.Options.NoListen)
			require.Equal(t, tc.tasks, p.Options.Tasks)
		})
	}
}
