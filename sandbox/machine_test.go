package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// machineEnv names the machine TestOnThisMachine is re-run on, one of
// machines, each made by tests/fixtures/withoutlayers.
const machineEnv = "LEMON_SANDBOX_MACHINE"

const (
	noLandlock = "Landlock: landlock_create_ruleset(VERSION) failed: function not implemented"
	noUserns   = "namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: no space left on device"
)

// machines lack one layer, or have one step of the helper refused, as a
// kernel or a container could: a seccomp filter answering ENOSYS to the
// Landlock system calls (for the test process and its children), no user
// namespaces (user.max_user_namespaces=0 inside one), or a single call
// failing. refused is what a required start's error names; missing what a
// best-effort start's report lists; probed whether the probe sees it (a
// step it does not take is found by the helper at the start).
type machine struct {
	name, flags      string
	refused, missing string
	domains, probed  bool
}

var machines = []machine{
	{name: "no-landlock", flags: "-landlock", refused: noLandlock, missing: noLandlock, probed: true},
	{name: "no-userns", flags: "-userns", refused: noUserns, missing: "namespaces: no space left on device", probed: true},
	{name: "mount-refused", flags: "-fail=mount", probed: true,
		refused: "namespaces: mount --make-rprivate / failed: operation not permitted"},
	{name: "capset-refused", flags: "-fail=capset", probed: true, refused: "privileges: capset failed: operation not permitted"},
	{name: "no-seccomp", flags: "-fail=seccomp", probed: true, refused: "seccomp: the Unix socket filter failed: invalid argument"},
	{name: "restrict-refused", flags: "-fail=restrict", probed: true,
		refused: "Landlock: landlock_restrict_self failed: operation not permitted"},
	{name: "loopback-down", flags: "-fail=loopback", domains: true,
		refused: "the proxy: the loopback bridge to the proxy failed: operation not permitted"},
	// qemu-user: the subreaper only matters without namespaces, where a
	// required sandbox is refused for the namespaces anyway.
	{name: "no-subreaper", flags: "-userns,-fail=subreaper", probed: true, refused: noUserns,
		missing: "the helper: prctl(PR_SET_CHILD_SUBREAPER) failed: invalid argument"},
}

// TestFailsClosedWithoutALayer re-runs TestOnThisMachine on each of
// machines, as root and as nobody.
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
	for _, m := range machines {
		for _, user := range []string{"root", "nobody"} {
			t.Run(m.name+" as "+user, func(t *testing.T) {
				argv := append(append([]string{wrapper}, strings.Split(m.flags, ",")...),
					"--", bin, "-test.run=^TestOnThisMachine$", "-test.count=1", "-test.v")
				cache := filepath.Join(dir, "cache-"+m.name+"-"+user)
				require.NoError(t, os.Mkdir(cache, 0o700))
				if user == "nobody" {
					require.NoError(t, os.Chown(cache, 65534, 65534))
					argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = append(os.Environ(), machineEnv+"="+m.name, HelperEnv+"="+helper,
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
// is missing, and the control shows what the server could then do; a
// server without a sandbox starts as anywhere.
func TestOnThisMachine(t *testing.T) {
	name := os.Getenv(machineEnv)
	if name == "" {
		t.Log("run by TestFailsClosedWithoutALayer")
		return
	}
	i := slices.IndexFunc(machines, func(m machine) bool { return m.name == name })
	require.GreaterOrEqual(t, i, 0, "unknown machine %q", name)
	m := machines[i]
	if m.missing == "" {
		m.missing = m.refused
	}
	work, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Chmod(work, 0o777))
	require.NoError(t, os.Chmod(outside, 0o777))
	policy := Policy{AllowWrite: []string{work}}
	if m.domains {
		policy.AllowedDomains = []string{"registry.example"}
	}
	start := func(p stdio.Launcher, script string) (*stdio.Transport, *recorder, error) {
		tr, err := stdio.New(stdio.Config{Command: "/bin/sh", Args: []string{"-c", script},
			CloseGrace: 200 * time.Millisecond, Launcher: p})
		require.NoError(t, err)
		rec := newRecorder()
		err = tr.Start(context.Background(), rec)
		if err == nil {
			t.Cleanup(func() { _ = tr.Close(context.Background()) })
		}
		return tr, rec, err
	}
	requireRefused := func(err error) {
		t.Helper()
		var te *transport.Error
		require.ErrorAs(t, err, &te)
		require.Equal(t, transport.CauseSandboxUnavailable, te.Cause)
		require.Contains(t, te.Message, m.refused)
	}
	// The server says whether its write outside allowWrite got through,
	// then serves.
	escape := `if echo x > ` + outside + `/escaped 2>/dev/null; then echo '{"escaped":true}'; else echo '{"escaped":false}'; fi; exec cat`
	escaped := func(rec *recorder) bool {
		t.Helper()
		var line string
		require.Eventually(t, func() bool {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.lines) > 0 {
				line = rec.lines[0]
			}
			return line != ""
		}, 30*time.Second, 5*time.Millisecond, "the server said nothing")
		var got struct{ Escaped bool }
		require.NoError(t, json.Unmarshal([]byte(line), &got), line)
		return got.Escaped
	}

	if m.probed {
		require.Contains(t, Features().Missing, m.missing, "the probe")
		// The library refuses, from the probe.
		_, _, err := start(Confine(policy, 200*time.Millisecond), escape)
		requireRefused(err)
		require.NoFileExists(t, filepath.Join(outside, "escaped"))
	}

	// The helper refuses, when the probe did not see it coming: the
	// library believes every layer holds.
	real := probed
	pr := real()
	pr.namespaces, pr.nsErr, pr.report.Missing = true, "", nil
	probed = func() probe { return pr }
	_, _, err := start(Confine(policy, 200*time.Millisecond), escape)
	probed = real
	requireRefused(err)
	require.NoFileExists(t, filepath.Join(outside, "escaped"))

	// Best effort: it runs, and says what it lacks; the write outside
	// allowWrite gets through exactly when Landlock did not hold (the
	// control: here is why the default is to refuse).
	p := policy
	p.BestEffort = true
	tr, rec, err := start(Confine(p, 200*time.Millisecond), escape)
	require.NoError(t, err)
	rep := tr.SandboxReport().(*Report)
	require.Contains(t, rep.Missing, m.missing)
	require.Equal(t, rep.Landlock == 0, escaped(rec), "report %+v", rep)
	switch name {
	case "no-landlock", "restrict-refused":
		require.Zero(t, rep.Landlock)
	case "no-userns":
		require.Equal(t, "subreaper", rep.Reaper)
		require.NotZero(t, rep.Landlock)
	case "no-subreaper":
		require.Equal(t, "none", rep.Reaper)
	case "no-seccomp":
		require.Equal(t, "allowed", rep.UnixSockets)
	case "mount-refused":
		require.Equal(t, "host", rep.Proc)
	case "loopback-down":
		require.Equal(t, "none", rep.Network)
	}

	// A server without a sandbox runs under the helper as anywhere: a
	// missing layer, or a reaper the machine refuses, is no reason to
	// refuse a server that asked for none.
	_, rec, err = start(Reaper(200*time.Millisecond), escape)
	require.NoError(t, err)
	require.True(t, escaped(rec), "the unconfined server")
}
