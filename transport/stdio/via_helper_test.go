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

// notAboutTheProcess are the cases of this package that a launcher cannot
// change: the sender's queue, memory, goroutines and threads of the
// transport itself, and pure functions. They run once, directly.
const notAboutTheProcess = `^(TestEveryCaseThroughTheHelper|Example.*|TestSend.*|TestConcurrentSend|TestRoundTripMany|` +
	`TestNoGoroutineLeak|TestReaperHoldsNoThreadPerChild|TestReapPidfdOfReapedChild|TestHugeLineMemoryBounded|` +
	`TestNew.*|TestEnding|TestBuildEnv|TestResolveCommand|TestExitReportNil|TestLogText|TestLineReader.*)$`

// confinedCases are the cases run again confined: the transport's view of
// the server's pipes and end, which the sandbox's namespaces must not
// change.
const confinedCases = `^(TestStdoutClosedWhileRunning|TestStderrFloodDoesNotWedge|TestStderrModes|TestUnterminatedLastLine|` +
	`TestExitReports|TestExitReportedWhenTheReapIsLate|TestCloseEscalation|TestCloseKillsGrandchild|TestClosedExactlyOnce|TestBannerLines|` +
	`TestOverlongLineSkipped|TestOverlongResponseFailsItsRequest|TestEnvInherit)$`

// TestEveryCaseThroughTheHelper re-runs this package's tests with every
// fake server started through the helper, as the library starts stdio
// servers: the helper must be transparent to the transport (a server that
// closes its stdout noticed at once, stderr floods, a cut last line, exit
// statuses, signals, grandchildren). Every case that concerns the server
// process runs under the helper as unconfined servers do, and those of its
// pipes and its end run confined too.
func TestEveryCaseThroughTheHelper(t *testing.T) {
	if os.Getenv(viaEnv) != "" {
		return // the re-run itself
	}
	dir := t.TempDir()
	helper := filepath.Join(dir, sandbox.HelperName)
	out, err := exec.Command("go", "build", "-o", helper, "../../cmd/lemonmcp-sandbox").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, run := range []struct{ mode, selection string }{
		{"reaper", "-test.skip=" + notAboutTheProcess},
		{"confined", "-test.run=" + confinedCases},
	} {
		t.Run(run.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], run.selection, "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), viaEnv+"="+run.mode, sandbox.HelperEnv+"="+helper)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "--- PASS: TestStdoutClosedWhileRunning")
			require.Contains(t, string(out), "--- PASS: TestUnterminatedLastLine")
			require.Contains(t, string(out), "--- PASS: TestStderrFloodDoesNotWedge")
			require.NotContains(t, string(out), "--- FAIL")
		})
	}
}
