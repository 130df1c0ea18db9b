package hosttests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/host"
)

// corpusFile is one entry of tests/configs/expected.json, which every
// binding's corpus test reads.
type corpusFile struct {
	Path     string            `json:"path"`
	Inputs   map[string]string `json:"inputs"`
	Servers  map[string]bool   `json:"servers"`
	Warnings []string          `json:"warnings"`
}

func loadCorpus(t *testing.T) []corpusFile {
	raw, err := os.ReadFile("../configs/expected.json")
	require.NoError(t, err)
	var doc struct {
		Files []corpusFile `json:"files"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.NotEmpty(t, doc.Files)
	return doc.Files
}

// TestConfigCorpus loads config files as Claude Desktop, Claude Code,
// Cursor, VS Code, Cline, Roo Code and Windsurf write them: each becomes a
// host with the expected servers and exactly the expected warnings, and
// under strict each file with a warning is refused.
func TestConfigCorpus(t *testing.T) {
	for _, f := range loadCorpus(t) {
		t.Run(f.Path, func(t *testing.T) {
			path := filepath.Join("..", "configs", f.Path)
			cfg, err := host.LoadFile(path, host.LoadOptions{Inputs: f.Inputs})
			require.Nil(t, errOrNil(err))
			want := make([]string, len(f.Warnings))
			for i, w := range f.Warnings {
				want[i] = path + ": " + w
			}
			require.Equal(t, want, append([]string{}, cfg.Warnings...))
			h, err := host.New(cfg, "test")
			require.Nil(t, errOrNil(err))
			defer h.Free()
			var servers map[string]struct {
				State   string `json:"state"`
				Enabled bool   `json:"enabled"`
			}
			require.NoError(t, json.Unmarshal(h.Servers(), &servers))
			require.Len(t, servers, len(f.Servers))
			for name, enabled := range f.Servers {
				require.Contains(t, servers, name)
				require.Equal(t, enabled, servers[name].Enabled, name)
			}
			_, err = host.LoadFile(path, host.LoadOptions{Inputs: f.Inputs, Strict: true})
			if len(f.Warnings) > 0 {
				require.NotNil(t, err, "strict refuses what was a warning")
				require.Contains(t, err.Message, "refused under \"strict\"")
			} else {
				require.Nil(t, errOrNil(err))
			}
		})
	}
}
