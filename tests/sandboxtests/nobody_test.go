package sandboxtests

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/sandbox"
)

// nobodyEnv marks the run TestNpxUvxAsUnprivilegedUser starts as nobody:
// its TestMain uses the helper it is given rather than building one.
const nobodyEnv = "LEMONMCP_SANDBOXTESTS_NOBODY"

// nobodyUID is the user (and group) the unprivileged run is: nobody.
const nobodyUID = 65534

// TestNpxUvxAsUnprivilegedUser runs TestNpxConfined and TestUvxConfined
// again as nobody, under setpriv: user namespaces, Landlock and the proxy
// without root, and npm and uv writing where nobody may (the per-server
// cache directories) and nowhere else. The repository and .cache may lie
// where nobody cannot read (under /root), so everything the run needs is
// copied into a temporary directory: the test binary, the helper, Node
// 22's node and uv; its TMPDIR, HOME and caches are in a directory nobody
// owns, and it starts its own fake registries. Everything is removed
// afterwards, and no process of the run may survive it.
func TestNpxUvxAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("already unprivileged: TestNpxConfined and TestUvxConfined are the unprivileged run")
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	require.NoError(t, err, "setpriv (util-linux) runs the tests as nobody")
	node, uv := filepath.Join(node22Bin(t), "node"), uvx(t)

	dir, err := os.MkdirTemp("", "sandboxtests-nobody-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "sandboxtests.test")
	helper := filepath.Join(dir, sandbox.HelperName)
	nodeDir, uvDir := filepath.Join(dir, "node22"), filepath.Join(dir, "uv")
	for _, d := range []string{nodeDir, uvDir} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	for src, dst := range map[string]string{
		os.Args[0]:                            bin,
		os.Getenv(sandbox.HelperEnv):          helper,
		node:                                  filepath.Join(nodeDir, "node"),
		uv:                                    filepath.Join(uvDir, "uvx"),
		filepath.Join(filepath.Dir(uv), "uv"): filepath.Join(uvDir, "uv"), // uvx runs the uv beside it
	} {
		copyExecutable(t, src, dst)
	}
	// nobody's own: TMPDIR (where the tests' directories and the fake
	// registries' CA go), HOME and the user's cache directory.
	own := filepath.Join(dir, "nobody")
	for _, d := range []string{own, filepath.Join(own, "tmp"), filepath.Join(own, "cache")} {
		require.NoError(t, os.Mkdir(d, 0o700))
		require.NoError(t, os.Chown(d, nobodyUID, nobodyUID))
	}

	// The run ends by itself before this test's deadline (the library
	// stops every server as it closes), so that it never outlives it.
	timeout := 10 * time.Minute
	if d, ok := t.Deadline(); ok {
		timeout = time.Until(d) - 30*time.Second
	}
	cmd := exec.Command(setpriv, "--reuid="+strconv.Itoa(nobodyUID), "--regid="+strconv.Itoa(nobodyUID), "--clear-groups",
		bin, "-test.run", "^(TestNpxConfined|TestUvxConfined)$", "-test.count=1", "-test.v",
		"-test.timeout="+timeout.String())
	cmd.Env = append(os.Environ(),
		nobodyEnv+"=1",
		sandbox.HelperEnv+"="+helper,
		"LEMONMCP_NODE22="+filepath.Join(nodeDir, "node"),
		"LEMONMCP_UVX="+filepath.Join(uvDir, "uvx"),
		// npx (npm's) and python3 from the system, not from a
		// directory under a home nobody cannot read.
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME="+own,
		"TMPDIR="+filepath.Join(own, "tmp"),
		"XDG_CACHE_HOME="+filepath.Join(own, "cache"),
	)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	survivors := processesUnder(t, dir)
	require.NoError(t, err, "%s", out)
	require.Empty(t, survivors, "processes of the run as nobody survived it (killed)")
	// Every subtest of npx_test.go and uvx_test.go, by name: the registry's
	// port in a name is whatever fakenpm got.
	for _, passed := range []string{
		`TestNpxConfined/fetched_through_the_proxy,_allowed_as_127\.0\.0\.1:[0-9]+`,
		`TestNpxConfined/fetched_through_the_proxy,_allowed_as_127\.0\.0\.1`,
		`TestNpxConfined/registry_not_allowed`,
		`TestUvxConfined/fetched_through_the_proxy`,
		`TestUvxConfined/index_not_allowed`,
	} {
		require.Regexp(t, `(?m)^\s*--- PASS: `+passed+` \(`, string(out))
	}
	require.NotContains(t, string(out), "--- FAIL")
	require.NotContains(t, string(out), "--- SKIP")
}

// copyExecutable copies the program src to dst, readable and executable
// by all.
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// processesUnder kills, by PID, every process whose executable or command
// line lies under dir (npm's and npx's node, uv, the servers they ran,
// the helper, the test binary) and returns their command lines.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.HasPrefix(exe, dir+"/") || strings.Contains(string(cmdline), dir+"/") {
			found = append(found, strings.ReplaceAll(string(cmdline), "\x00", " "))
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return found
}
