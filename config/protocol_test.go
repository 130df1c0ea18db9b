package config

import (
	"testing"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/stretchr/testify/require"
)

// protocol.mode picks the era; protocol.versions may mix both eras and is
// split per era, newest first.
func TestParseProtocolModes(t *testing.T) {
	cases := []struct {
		name     string
		protocol string
		mode     string
		legacy   []string
		modern   []string
	}{
		{"default is auto", `{}`, core.ModeAuto, core.LegacyVersions, core.ModernVersions},
		{"legacy", `{"mode":"legacy"}`, core.ModeLegacy, core.LegacyVersions, core.ModernVersions},
		{"default with modern versions only", `{"versions":["2026-07-28"]}`, core.ModeAuto, nil, []string{"2026-07-28"}},
		{"auto", `{"mode":"auto"}`, core.ModeAuto, core.LegacyVersions, core.ModernVersions},
		{"modern drops legacy versions", `{"mode":"modern"}`, core.ModeModern, nil, core.ModernVersions},
		{"mixed list is split", `{"mode":"auto","versions":["2025-06-18","2026-07-28"]}`, core.ModeAuto, []string{"2025-06-18"}, []string{"2026-07-28"}},
		{"auto with legacy only", `{"mode":"auto","versions":["2025-11-25"]}`, core.ModeAuto, []string{"2025-11-25"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"x"},"protocol":`+tc.protocol+`}`), "1")
			require.Nil(t, errOrNil(err))
			require.Equal(t, tc.mode, p.Options.Mode)
			require.Equal(t, tc.legacy, p.Options.Versions)
			require.Equal(t, tc.modern, p.Options.Modern)
		})
	}
}

// With no protocol object the client probes both eras (docs/modern.md, "Era
// default"): only "auto" connects to legacy-only, modern-only and dual-era
// servers.
func TestParseDefaultModeIsAuto(t *testing.T) {
	p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"x"}}`), "1")
	require.Nil(t, errOrNil(err))
	require.Equal(t, core.ModeAuto, p.Options.Mode)
	require.Equal(t, core.LegacyVersions, p.Options.Versions)
	require.Equal(t, core.ModernVersions, p.Options.Modern)
}
