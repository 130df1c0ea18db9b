package hosttests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// The environment of an approver process (this test binary run again):
// the host configuration it starts, the approval it makes, and the files
// it meets the other approver at.
const (
	approverConfigEnv = "HOSTTESTS_APPROVER_CONFIG"
	approverToolEnv   = "HOSTTESTS_APPROVER_TOOL"
	approverHashEnv   = "HOSTTESTS_APPROVER_HASH"
	approverReadyEnv  = "HOSTTESTS_APPROVER_READY" // the file it writes once its host is ready
	approverGoEnv     = "HOSTTESTS_APPROVER_GO"    // the file it waits for before approving
)

// TestPinsFleetAcrossProcesses: a host holds two tools new to a shared pin
// store (first_use hold); two other processes, each with its own host of
// the same server, approve one tool each at the same instant. Both
// approvals are kept (a lost compare-and-save is retried on the winner's
// pins), and the first host, in a third process, honours both without a
// restart or a list_changed from its server: it re-reads the store. On a
// file (sealed too), PostgreSQL and Redis.
func TestPinsFleetAcrossProcesses(t *testing.T) {
	if cfg := os.Getenv(approverConfigEnv); cfg != "" {
		approveAsAnotherProcess(t, cfg)
		return
	}
	cases := loadPinCases(t)
	for name, store := range pinStores(t, newRugpullRig(t, cases.Base)) {
		t.Run(name, func(t *testing.T) {
			rig, hosts, _ := fleetRigs(t, cases.Base, store, 1, `,"first_use":"hold"`)
			h := hosts[0]
			instr := hostPins(t, h)["r"].Instructions
			require.NotNil(t, instr)
			require.Nil(t, errOrNil(h.Approve("r", "instructions", "", instr.Hash)))
			tools := []string{"echo", "add"}
			for _, tool := range tools {
				require.Equal(t, host.PinNew, hostPins(t, h)["r"].Tools[tool].Status)
				_, err := h.CallToolSync("r__"+tool, json.RawMessage(`{"a":1,"b":2,"text":"x"}`), core.CallOptions{})
				require.NotNil(t, err, "%s is held before any approval", tool)
				require.Equal(t, core.StatusPolicyDenied, err.Status)
			}

			goFile := filepath.Join(rig.dir, "go")
			var cmds []*exec.Cmd
			var outs []*strings.Builder
			for i, tool := range tools {
				r := *rig
				r.store = store
				r.pidfile = filepath.Join(rig.dir, "approver-pid"+strconv.Itoa(i))
				cmd := exec.Command(os.Args[0], "-test.run=^TestPinsFleetAcrossProcesses$", "-test.count=1")
				cmd.Env = append(os.Environ(),
					approverConfigEnv+"="+r.config(`,"first_use":"hold"`),
					approverToolEnv+"="+tool,
					approverHashEnv+"="+hostPins(t, h)["r"].Tools[tool].Hash,
					approverReadyEnv+"="+filepath.Join(rig.dir, "ready"+strconv.Itoa(i)),
					approverGoEnv+"="+goFile)
				out := &strings.Builder{}
				cmd.Stdout, cmd.Stderr = out, out
				require.NoError(t, cmd.Start())
				t.Cleanup(func() {
					if cmd.ProcessState == nil {
						_ = cmd.Process.Kill()
						_ = cmd.Wait()
					}
				})
				cmds, outs = append(cmds, cmd), append(outs, out)
			}
			// Both approvers' hosts are ready: let them approve at once.
			require.Eventually(t, func() bool {
				for i := range tools {
					if _, err := os.Stat(filepath.Join(rig.dir, "ready"+strconv.Itoa(i))); err != nil {
						return false
					}
				}
				return true
			}, 60*time.Second, 5*time.Millisecond, "the approvers' hosts never became ready")
			require.NoError(t, os.WriteFile(goFile, nil, 0o600))
			for i, cmd := range cmds {
				require.NoError(t, cmd.Wait(), "approver %d failed:\n%s", i, outs[i])
			}

			// No signal, no restart: this process finds both approvals in
			// the store.
			for _, tool := range tools {
				require.Eventually(t, func() bool {
					_, err := h.CallToolSync("r__"+tool, json.RawMessage(`{"a":1,"b":2,"text":"x"}`), core.CallOptions{})
					return err == nil
				}, 10*time.Second, 20*time.Millisecond, "this process honours the other process's approval of %s", tool)
				require.Equal(t, host.PinApproved, hostPins(t, h)["r"].Tools[tool].Status)
			}
		})
	}
}

// approveAsAnotherProcess is the approver process: a host of the
// configuration, ready, meets the other approver, approves its tool with
// the hash the first host was offered (its own server offers the same),
// and ends.
func approveAsAnotherProcess(t *testing.T, cfg string) {
	h, _ := readyHost(t, cfg)
	tool, hash := os.Getenv(approverToolEnv), os.Getenv(approverHashEnv)
	require.Equal(t, hash, hostPins(t, h)["r"].Tools[tool].Hash, "this host's server offers what the first host's offers")
	require.NoError(t, os.WriteFile(os.Getenv(approverReadyEnv), nil, 0o600))
	require.Eventually(t, func() bool {
		_, err := os.Stat(os.Getenv(approverGoEnv))
		return err == nil
	}, 60*time.Second, time.Millisecond, "never told to approve")
	require.Nil(t, errOrNil(h.Approve("r", "tool", tool, hash)))
}

// TestPinsSealedWithAnotherKey: a host whose pin store is sealed with a key
// it does not hold (another key in key_env) holds everything, names the
// variable, and writes nothing over the pins, even under first_use
// "trust", which would pin what it sees; a host without the variable does
// not start; a host given the old key in previous_key_envs reads the pins
// and seals them again with its new key at the next change.
func TestPinsSealedWithAnotherKey(t *testing.T) {
	cases := loadPinCases(t)
	rig := newRugpullRig(t, cases.Base)
	t.Setenv("LEMONMCP_TEST_PINS_OLD", newStoreKey())
	t.Setenv("LEMONMCP_TEST_PINS_NEW", newStoreKey())
	sealedWith := func(env string, previous ...string) string {
		prev, _ := json.Marshal(append([]string{}, previous...))
		return `{"type":"file","path":"` + rig.pins + `","encryption":{"key_env":"` + env + `","previous_key_envs":` + string(prev) + `}}`
	}
	r := *rig
	r.store = sealedWith("LEMONMCP_TEST_PINS_OLD")
	h, _ := readyHost(t, r.config(""))
	requireAllApproved(t, hostPins(t, h)["r"])
	h.Close(5 * time.Second)
	before, err := os.ReadFile(rig.pins)
	require.NoError(t, err)
	require.NotContains(t, string(before), "echo", "the pins are sealed")

	r.store = sealedWith("LEMONMCP_TEST_PINS_NEW")
	h, _ = readyHost(t, r.config(""))
	requireStoreFailed(t, h, "LEMONMCP_TEST_PINS_NEW")
	require.NotContains(t, hostPins(t, h)["r"].Error, os.Getenv("LEMONMCP_TEST_PINS_NEW"))
	h.Close(5 * time.Second)
	after, err := os.ReadFile(rig.pins)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "a host with another key changed the pins")

	r.store = sealedWith("LEMONMCP_TEST_PINS_UNSET")
	_, perr := host.Parse([]byte(r.config("")), "test")
	require.NotNil(t, perr)
	require.Contains(t, perr.Message, "config.pins.store.encryption.key_env: the environment variable LEMONMCP_TEST_PINS_UNSET is not set")

	// Rotation: the old key opens the pins; the next change seals them
	// with the new key, which alone opens them from then on.
	r.store = sealedWith("LEMONMCP_TEST_PINS_NEW", "LEMONMCP_TEST_PINS_OLD")
	h, ev := readyHost(t, r.config(""))
	requireAllApproved(t, hostPins(t, h)["r"])
	rig.write(t, cases.Cases[0].Defs)
	r.signal(t)
	require.Eventually(t, func() bool { return ev.has("definition_changed", `"name":"echo"`, `"status":"changed"`) }, 10*time.Second, 10*time.Millisecond)
	require.Nil(t, errOrNil(h.Approve("r", "tool", "echo", hostPins(t, h)["r"].Tools["echo"].Hash)))
	h.Close(5 * time.Second)
	r.store = sealedWith("LEMONMCP_TEST_PINS_NEW")
	h, _ = readyHost(t, r.config(""))
	requireAllApproved(t, hostPins(t, h)["r"])
	r.store = sealedWith("LEMONMCP_TEST_PINS_OLD")
	h, _ = readyHost(t, r.config(""))
	requireStoreFailed(t, h, "LEMONMCP_TEST_PINS_OLD")
}
