package stdio_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/sandbox"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// viaEnv, when set, makes this test binary run every fake server through
// the sandbox helper: "reaper" (the unconfined servers' way) or
// "confined" (a sandbox with every layer).
const viaEnv = "LEMON_STDIO_VIA"

func init() {
	switch os.Getenv(viaEnv) {
	case "reaper":
		stdio.SetTestLauncher(sandbox.Reaper(500*time.Millisecond), "reaper")
	case "confined":
		stdio.SetTestLauncher(sandbox.Confine(sandbox.Policy{}, 500*time.Millisecond), "confined")
	}
}

// TestEveryCaseThroughTheHelper re-runs this package's tests with every
// fake server started through the helper, as the library starts stdio
// servers: the helper must be transparent to the transport (a server that
// closes its stdout noticed at once, stderr floods, a cut last line, exit
// statuses, signals, grandchildren), unconfined and confined.
func TestEveryCaseThroughTheHelper(t *testing.T) {
	if os.Getenv(viaEnv) != "" {
		return // the re-run itself
	}
	dir := t.TempDir()
	helper := filepath.Join(dir, sandbox.HelperName)
	out, err := exec.Command("go", "build", "-o", helper, "../../cmd/lemonmcp-sandbox").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, mode := range []string{"reaper", "confined"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^Test", "-test.skip=^(TestEveryCaseThroughTheHelper|Example)", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), viaEnv+"="+mode, sandbox.HelperEnv+"="+helper)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "--- PASS: TestStdoutClosedWhileRunning")
			require.NotContains(t, string(out), "--- FAIL")
		})
	}
}
