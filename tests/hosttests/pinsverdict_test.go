package hosttests

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// verdictStarts is how many fresh hosts each use of TestPinsHeldFromTheFirstUse
// starts: the defect it guards against (a use that went out before the
// server's pin verdict) showed in most starts, never in all.
const verdictStarts = 100

// TestPinsHeldFromTheFirstUse: a tool whose definition changed while no
// host ran is held from the very first use of a fresh host — a call right
// after the start (lazy, or after WaitReady), the raw tools/call, a list,
// a search, a search_tools call under deferred_tools — in each of
// verdictStarts starts. The refusal carries the held reason as data.
func TestPinsHeldFromTheFirstUse(t *testing.T) {
	cases := loadPinCases(t)
	rig := newRugpullRig(t, cases.Base)
	{
		h, _ := readyHost(t, rig.config(""))
		requireAllApproved(t, hostPins(t, h)["r"]) // pinned on first use
		h.Close(5 * time.Second)
		h.Free()
	}
	rig.write(t, cases.Cases[0].Defs) // echo's description changes while no host runs
	lazy := strings.Replace(rig.config(""), `"command"`, `"start":"lazy","command"`, 1)
	deferred := strings.Replace(rig.config(""), `"pins"`, `"deferred_tools":{"always_loaded":["r__echo"]},"pins"`, 1)
	heldCall := func(err *core.Error) string {
		if err == nil {
			return "the held tool was called"
		}
		if err.Status != core.StatusPolicyDenied {
			return fmt.Sprintf("status %d (%s), not policy denied", err.Status, err.Message)
		}
		var data struct {
			Held struct{ Server, Kind, Name, Status string }
		}
		if json.Unmarshal(err.Data, &data) != nil || data.Held.Server != "r" || data.Held.Kind != "tool" || data.Held.Name != "echo" || data.Held.Status != host.PinChanged {
			return "the refusal's data is " + string(err.Data)
		}
		return ""
	}
	uses := []struct {
		name, cfg string
		ready     bool // WaitReady before the use
		use       func(h *host.Host) string
	}{
		{"call after ready", rig.config(""), true, func(h *host.Host) string {
			_, err := h.CallToolSync("r__echo", []byte(`{"text":"hi"}`), core.CallOptions{})
			return heldCall(err)
		}},
		{"call of a lazy server", lazy, false, func(h *host.Host) string {
			_, err := h.CallToolSync("r__echo", []byte(`{"text":"hi"}`), core.CallOptions{})
			return heldCall(err)
		}},
		{"call waiting for the start", rig.config(""), false, func(h *host.Host) string {
			_, err := h.CallToolSync("r__echo", nil, core.CallOptions{WaitReady: true})
			return heldCall(err)
		}},
		{"raw tools/call", rig.config(""), true, func(h *host.Host) string {
			_, err := h.CallSync("r", "tools/call", []byte(`{"name":"echo"}`), core.CallOptions{})
			return heldCall(err)
		}},
		{"list", rig.config(""), true, func(h *host.Host) string {
			raw, err := h.ListTools()
			if err != nil {
				return err.Message
			}
			if !strings.Contains(string(raw), `"r__add"`) || strings.Contains(string(raw), `"r__echo"`) {
				return "listed: " + string(raw)
			}
			return ""
		}},
		{"search", rig.config(""), true, func(h *host.Host) string {
			raw, err := h.SearchTools("echoes text", host.SearchOptions{Limit: 10})
			if err != nil {
				return err.Message
			}
			if strings.Contains(string(raw), `"r__echo"`) {
				return "found: " + string(raw)
			}
			return ""
		}},
		{"deferred loading", deferred, true, func(h *host.Host) string {
			raw, err := h.CallToolSync(host.SearchToolName, []byte(`{"query":"echoes text","limit":10}`), core.CallOptions{})
			if err != nil {
				return err.Message
			}
			if strings.Contains(string(raw), `r__echo`) {
				return "search_tools offered: " + string(raw)
			}
			return ""
		}},
	}
	for _, u := range uses {
		t.Run(u.name, func(t *testing.T) {
			failures := make(chan string, verdictStarts)
			var wg sync.WaitGroup
			sem := make(chan struct{}, 8)
			for i := 0; i < verdictStarts; i++ {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					failures <- oneStart(u.cfg, u.ready, u.use)
				}()
			}
			wg.Wait()
			close(failures)
			bad := map[string]int{}
			for f := range failures {
				if f != "" {
					bad[f]++
				}
			}
			require.Empty(t, bad, "of %d starts", verdictStarts)
		})
	}
}

// oneStart runs use on a fresh host of cfg: "" when it saw what it must.
func oneStart(cfg string, ready bool, use func(*host.Host) string) string {
	h, err := host.Parse([]byte(cfg), "test")
	if err != nil {
		return err.Message
	}
	defer func() {
		h.Close(5 * time.Second)
		h.Free()
	}()
	if err := h.Connect(); err != nil {
		return err.Message
	}
	if ready {
		if err := h.WaitReady(10 * time.Second); err != nil {
			return err.Message
		}
	}
	return use(h)
}

// TestPinsVerdictWaitCancelled: a call waiting for its server's pin
// verdict (the server still starting) is cancelled by Cancel and
// completes once, with StatusCancelled.
func TestPinsVerdictWaitCancelled(t *testing.T) {
	cases := loadPinCases(t)
	rig := newRugpullRig(t, cases.Base)
	args, _ := json.Marshal([]string{"-c", "sleep 1; exec " + rugpullBin + " -defs " + rig.defs})
	cfg := fmt.Sprintf(`{"pins":{"store":{"type":"file","path":%q}},"mcpServers":{"r":{"start":"lazy","command":"/bin/sh","args":%s,"timeouts":{"ready_ms":10000,"close_grace_ms":300}}}}`, rig.pins, args)
	h, _ := newHost(t, cfg)
	done := make(chan core.Status, 2)
	id, err := h.CallTool("r__echo", nil, core.CallOptions{}, func(_ uint64, st core.Status, _ []byte) { done <- st })
	require.Nil(t, errOrNil(err))
	require.Nil(t, errOrNil(h.Cancel(id)), "a call waiting for the verdict can be cancelled")
	select {
	case st := <-done:
		require.Equal(t, core.StatusCancelled, st)
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled call never completed")
	}
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	select {
	case st := <-done:
		t.Fatalf("a second completion: %d", st)
	case <-time.After(200 * time.Millisecond):
	}
}

// renamedEcho is defs with the tool "echo" named name.
func renamedEcho(t *testing.T, defs json.RawMessage, name string) []byte {
	var d map[string]any
	require.NoError(t, json.Unmarshal(defs, &d))
	for _, tool := range d["tools"].([]any) {
		if m := tool.(map[string]any); m["name"] == "echo" {
			m["name"] = name
		}
	}
	out, err := json.Marshal(d)
	require.NoError(t, err)
	return out
}

// TestPinsHeldByTheHostsName: a tool whose own name has characters MCP
// does not allow in tool names ("echo it", exposed as r__echo_it) and whose
// definition changed while no host ran is refused as held when called by
// the host's name before any list, as by its own name; the route names the
// server's tool; once approved, the call reaches the server under the
// server's own name, whether it waited for the verdict or not.
func TestPinsHeldByTheHostsName(t *testing.T) {
	cases := loadPinCases(t)
	rig := newRugpullRig(t, renamedEcho(t, cases.Base, "echo it"))
	{
		h, _ := readyHost(t, rig.config(""))
		requireAllApproved(t, hostPins(t, h)["r"])
		h.Close(5 * time.Second)
		h.Free()
	}
	rig.write(t, renamedEcho(t, cases.Cases[0].Defs, "echo it"))
	h, _ := readyHost(t, rig.config(""))
	for _, name := range []string{"r__echo_it", "r__echo it"} {
		_, err := h.CallToolSync(name, []byte(`{"text":"hi"}`), core.CallOptions{})
		require.NotNil(t, err, name)
		require.Equal(t, core.StatusPolicyDenied, err.Status, "%s: %s", name, err.Message)
		var data struct {
			Held struct{ Server, Kind, Name, Status string }
		}
		require.NoError(t, json.Unmarshal(err.Data, &data))
		require.Equal(t, struct{ Server, Kind, Name, Status string }{"r", "tool", "echo it", host.PinChanged}, data.Held, name)
	}
	route, err := h.ToolRoute("r__echo_it")
	require.Nil(t, errOrNil(err))
	require.JSONEq(t, `{"server":"r","original_name":"echo it"}`, string(route), "held: the route still names the server's tool")

	p := hostPins(t, h)["r"].Tools["echo it"]
	require.Nil(t, errOrNil(h.Approve("r", "tool", "echo it", p.Hash)))
	out, err := h.CallToolSync("r__echo_it", []byte(`{"text":"hi"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Equal(t, "called echo it", textOf(t, out), "the verdict given: sent by the server's own name")

	// A fresh host's first call waits for the verdict, then is sent.
	fresh, _ := newHost(t, rig.config(""))
	out, err = fresh.CallToolSync("r__echo_it", []byte(`{"text":"hi"}`), core.CallOptions{WaitReady: true})
	require.Nil(t, errOrNil(err))
	require.Equal(t, "called echo it", textOf(t, out), "after the verdict: sent by the server's own name")
}

// TestHostsNameWithoutPins: without pins, a call by the host's name of a
// tool whose own name MCP does not allow ("echo it", r__echo_it) made
// before the host listed the server's tools reaches the tool by its own
// name, whether the server was ready or the call waited for it, and the
// route names it.
func TestHostsNameWithoutPins(t *testing.T) {
	cases := loadPinCases(t)
	rig := newRugpullRig(t, renamedEcho(t, cases.Base, "echo it"))
	for _, ready := range []bool{false, true} {
		t.Run(map[bool]string{false: "waiting", true: "ready"}[ready], func(t *testing.T) {
			h, _ := newHost(t, rig.config("-"))
			if ready {
				require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
			}
			out, err := h.CallToolSync("r__echo_it", []byte(`{"text":"hi"}`), core.CallOptions{WaitReady: true})
			require.Nil(t, errOrNil(err))
			require.Equal(t, "called echo it", textOf(t, out))
			route, err := h.ToolRoute("r__echo_it")
			require.Nil(t, errOrNil(err))
			require.JSONEq(t, `{"server":"r","original_name":"echo it"}`, string(route))
		})
	}
}
