package sandboxtests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/tests/internal/fakepypi"
)

// python is the real interpreter behind python3 (not a pyenv shim, which
// looks for its root in a home the sandbox replaces): uv is told to use it
// rather than look for, or download, one.
func python(t *testing.T) string {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err, "python3 is not on PATH")
	return strings.TrimSpace(string(out))
}

// uvxServer is `uvx fakepypi.Project` confined, with the index at index
// and allowedDomains as given.
func uvxServer(t *testing.T, index string, allowed []string, work string) server {
	uv := uvx(t)
	return server{
		Command: uv, Args: []string{fakepypi.Project}, Cwd: work,
		Env: map[string]string{
			"PATH":                filepath.Dir(uv) + ":/usr/bin:/bin",
			"UV_DEFAULT_INDEX":    index,
			"UV_PYTHON":           python(t),
			"UV_PYTHON_DOWNLOADS": "never",
			"UV_NO_CONFIG":        "1",
		},
		Sandbox: map[string]any{"network": map[string]any{"allowedDomains": allowed}},
	}
}

// TestUvxConfined: uvx fetches the wheel through the sandbox's proxy (plain
// HTTP: absolute-URI requests, where npx's HTTPS tunnels) from an index
// allowedDomains names by address and port, though NO_PROXY would send uv
// around the proxy, and the console script it runs answers; uv's writes
// land in the server's cache directories only. Without the index allowed
// the proxy refuses it, the index is never asked, and the start fails
// saying what the sandbox refused.
func TestUvxConfined(t *testing.T) {
	ix, err := fakepypi.Start(false)
	require.NoError(t, err)
	defer ix.Stop()
	byAddress := "127.0.0.1:" + ix.Port

	t.Run("fetched through the proxy", func(t *testing.T) {
		home, cache := isolate(t)
		work := t.TempDir()
		s := uvxServer(t, ix.IndexURL, []string{byAddress}, work)
		s.Env["NO_PROXY"], s.Env["http_proxy"] = "127.0.0.1", "http://127.0.0.1:9"
		c, e := start(t, s)
		require.Nil(t, errOrNil(e))
		require.Equal(t, "through the proxy", echo(t, c, "through the proxy"))

		require.Contains(t, ix.Requests(), "GET /simple/"+fakepypi.Project+"/")
		require.Contains(t, ix.Requests(), "GET /files/"+fakepypi.WheelName)
		written := writtenUnder(t, serverCache(t, cache))
		require.True(t, anyHasPrefix(written, "uv/"), "uv's cache: %v", written)
		require.True(t, anyHas(written, filepath.Join("lemonmcp_fake_pypi_server", "__init__.py")), "uvx's install: %v", written)
		require.Empty(t, writtenUnder(t, home), "written in the application's home")
		require.Empty(t, writtenUnder(t, work), "written in the server's working directory")
	})

	t.Run("index not allowed", func(t *testing.T) {
		isolate(t)
		before := len(ix.Requests())
		_, e := start(t, uvxServer(t, ix.IndexURL, []string{"pypi.example"}, t.TempDir()))
		require.NotNil(t, e, "the server started without its package")
		require.Contains(t, e.Message, "the sandbox refused network access to "+byAddress+" (not in allowedDomains)")
		require.Len(t, ix.Requests(), before, "the index was asked")
	})
}
