package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// machineEnv names the machine TestOnThisMachine is re-run on: "no-landlock"
// (a seccomp filter answers ENOSYS to the Landlock system calls, for the
// test process and its children) or "no-userns" (no user namespace can
// be created), each made by tests/fixtures/withoutlayers.
const machineEnv = "LEMON_SANDBOX_MACHINE"

// TestFailsClosedWithoutALayer re-runs TestOnThisMachine on a machine
// without Landlock, then without user namespaces, as root and as nobody.
func TestFailsClosedWithoutALayer(t *testing.T) {
	if os.Getenv(machineEnv) != "" {
		return // the re-run itself
	}
	dir, err := os.MkdirTemp("", "sandbox-machine-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	wrapper := filepath.Join(dir, "withoutlayers")
	build := exec.Command("go", "build", "-o", wrapper, "./fixtures/withoutlayers")
	build.Dir = "../tests"
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	// Copies nobody can run, as TestAsUnprivilegedUser makes.
	bin, helper := filepath.Join(dir, "sandbox.test"), filepath.Join(dir, HelperName)
	for src, dst := range map[string]string{os.Args[0]: bin, os.Getenv(HelperEnv): helper} {
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, 0o755))
	}
	for _, machine := range []struct{ name, flag string }{{"no-landlock", "-landlock"}, {"no-userns", "-userns"}} {
		for _, user := range []string{"root", "nobody"} {
			t.Run(machine.name+" as "+user, func(t *testing.T) {
				argv := []string{wrapper, machine.flag, "--", bin, "-test.run=^TestOnThisMachine$", "-test.count=1", "-test.v"}
				cache := filepath.Join(dir, "cache-"+machine.name+"-"+user)
				require.NoError(t, os.Mkdir(cache, 0o700))
				if user == "nobody" {
					require.NoError(t, os.Chown(cache, 65534, 65534))
					argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = append(os.Environ(), machineEnv+"="+machine.name, HelperEnv+"="+helper,
					"TMPDIR=/tmp", "HOME=/tmp", "XDG_CACHE_HOME="+cache)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				require.Contains(t, string(out), "--- PASS: TestOnThisMachine")
			})
		}
	}
}

// TestOnThisMachine is run by TestFailsClosedWithoutALayer on a machine
// that lacks a layer: a sandbox that cannot be had in full does not start
// (at the library, from the probe, and at the helper, where a step fails),
// naming the layer and why; "required": false starts it and reports what
// is missing, and the control shows what the server could then do.
func TestOnThisMachine(t *testing.T) {
	machine := os.Getenv(machineEnv)
	if machine == "" {
		t.Log("run by TestFailsClosedWithoutALayer")
		return
	}
	work, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Chmod(work, 0o777))
	require.NoError(t, os.Chmod(outside, 0o777))
	policy := Policy{AllowWrite: []string{work}}
	var layer string
	switch machine {
	case "no-landlock":
		layer = "Landlock: landlock_create_ruleset(VERSION) failed: function not implemented"
		require.Contains(t, Features().Missing, layer)
	case "no-userns":
		layer = "namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: no space left on device"
		require.False(t, Features().Namespaces)
	default:
		t.Fatalf("unknown machine %q", machine)
	}
	start := func(p Policy, script string) (*stdio.Transport, *recorder, error) {
		tr, err := stdio.New(stdio.Config{Command: "/bin/sh", Args: []string{"-c", script},
			CloseGrace: 200 * time.Millisecond, Launcher: Confine(p, 200*time.Millisecond)})
		require.NoError(t, err)
		rec := newRecorder()
		return tr, rec, tr.Start(context.Background(), rec)
	}
	requireRefused := func(err error) {
		t.Helper()
		var te *transport.Error
		require.ErrorAs(t, err, &te)
		require.Equal(t, transport.CauseSandboxUnavailable, te.Cause)
		require.Contains(t, te.Message, layer)
	}
	escape := `echo x > ` + outside + `/escaped; exec cat`

	// The library refuses, from the probe.
	_, _, err := start(policy, escape)
	requireRefused(err)
	require.NoFileExists(t, filepath.Join(outside, "escaped"))

	// The helper refuses, when the probe did not see it coming: the
	// library believes every layer holds.
	real := probed
	pr := real()
	pr.namespaces, pr.nsErr, pr.report.Missing = true, "", nil
	probed = func() probe { return pr }
	_, _, err = start(policy, escape)
	probed = real
	requireRefused(err)
	require.NoFileExists(t, filepath.Join(outside, "escaped"))

	// Best effort: it runs, and says what it lacks; here is why the
	// default is to refuse.
	p := policy
	p.BestEffort = true
	tr, _, err := start(p, escape)
	require.NoError(t, err)
	defer tr.Close(context.Background())
	rep := tr.SandboxReport().(*Report)
	require.Contains(t, rep.Missing, map[string]string{"no-landlock": layer, "no-userns": "namespaces: no space left on device"}[machine])
	if machine == "no-landlock" {
		require.Zero(t, rep.Landlock)
		require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(outside, "escaped")); return err == nil },
			30*time.Second, 5*time.Millisecond, "the control: without Landlock the write gets through")
	} else {
		require.Equal(t, "subreaper", rep.Reaper)
		require.NotZero(t, rep.Landlock)
	}
}
