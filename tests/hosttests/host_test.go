package hosttests

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// hostEvents keeps a host's events.
type hostEvents struct {
	mu     sync.Mutex
	events []string
}

func (e *hostEvents) handle(kind string, payload []byte) {
	if kind == "log" {
		return
	}
	e.mu.Lock()
	e.events = append(e.events, kind+" "+string(payload))
	e.mu.Unlock()
}

// has reports whether an event of kind mentions every one of parts.
func (e *hostEvents) has(kind string, parts ...string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.events {
		if !strings.HasPrefix(ev, kind+" ") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(ev, p)
		}
		if all {
			return true
		}
	}
	return false
}

// stdioServer is an mcpServers entry running the fixture.
func stdioServer(extra string, args ...string) string {
	argv, _ := json.Marshal(args)
	s := fmt.Sprintf(`{"command":%q,"args":%s,"timeouts":{"ready_ms":5000,"close_grace_ms":300},"restart":{"backoff_ms":20,"max_backoff_ms":200,"max_restarts":3}`, fixtureBin, argv)
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func newHost(t *testing.T, cfg string) (*host.Host, *hostEvents) {
	t.Helper()
	h, err := host.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(err))
	ev := &hostEvents{}
	h.SetEventHandler(ev.handle, nil)
	t.Cleanup(func() {
		h.Close(5 * time.Second)
		h.Free()
	})
	require.Nil(t, errOrNil(h.Connect()))
	return h, ev
}

type listedTool struct {
	Name         string `json:"name"`
	Server       string `json:"server"`
	OriginalName string `json:"original_name"`
}

func listTools(t *testing.T, h *host.Host) map[string]listedTool {
	t.Helper()
	raw, err := h.ListTools()
	require.Nil(t, errOrNil(err))
	var doc struct {
		Tools []listedTool `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	out := map[string]listedTool{}
	for _, tl := range doc.Tools {
		_, dup := out[tl.Name]
		require.False(t, dup, "tool names are unique: %s", tl.Name)
		out[tl.Name] = tl
	}
	return out
}

type serverReport struct {
	State     string `json:"state"`
	Era       string `json:"era"`
	Restarts  int    `json:"restarts"`
	LastError string `json:"last_error"`
	Enabled   bool   `json:"enabled"`
}

func servers(t *testing.T, h *host.Host) map[string]serverReport {
	t.Helper()
	var out map[string]serverReport
	require.NoError(t, json.Unmarshal(h.Servers(), &out))
	return out
}

func textOf(t *testing.T, raw []byte) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	require.NotEmpty(t, r.Content)
	return r.Content[0].Text
}

func TestHostTwoServersWithTheSameTools(t *testing.T) {
	// Both eras in one host: alpha pins the legacy era (the default, auto,
	// would find the dual-era fixture modern too).
	cfg := fmt.Sprintf(`{"mcpServers":{"alpha":%s,"beta":%s}}`, stdioServer(`"protocol":{"mode":"legacy"}`), stdioServer(`"protocol":{"mode":"modern"}`))
	h, ev := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))

	require.Eventually(t, func() bool { return ev.has("ready", `{"server":"beta","info":{`, `"era":"modern"`) }, 5*time.Second, 10*time.Millisecond)
	rep := servers(t, h)
	require.Equal(t, "ready", rep["alpha"].State)
	require.Equal(t, "legacy", rep["alpha"].Era)
	require.Equal(t, "ready", rep["beta"].State)
	require.Equal(t, "modern", rep["beta"].Era, "both protocol eras in one host")

	tools := listTools(t, h)
	require.Contains(t, tools, "alpha__echo")
	require.Contains(t, tools, "beta__echo")
	require.Equal(t, "beta", tools["beta__echo"].Server)
	require.Equal(t, "echo", tools["beta__echo"].OriginalName)

	for _, name := range []string{"alpha__echo", "beta__echo"} {
		res, err := h.CallToolSync(name, []byte(`{"text":"via `+name+`"}`), core.CallOptions{})
		require.Nil(t, errOrNil(err))
		require.Equal(t, "via "+name, textOf(t, res))
	}
	_, err := h.CallToolSync("gamma__echo", []byte(`{}`), core.CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, core.StatusNotFound, err.Status)

	res, err := h.CallSync("beta", "tools/call", []byte(`{"name":"add","arguments":{"a":2,"b":3}}`), core.CallOptions{})
	require.Nil(t, errOrNil(err), "the generic per-server call")
	require.Contains(t, string(res), "5")
}

func TestHostToolPrefixModes(t *testing.T) {
	tests := []struct {
		mode      string
		wantNames []string
		collision string // the list error, for "never"
	}{
		{mode: "always", wantNames: []string{"a__echo", "b__echo", "a__crash", "b__add"}},
		{mode: "on_collision", wantNames: []string{"a__echo", "b__echo", "a__add", "b__add", "crash"}},
		{mode: "never", collision: `the tool "add" is offered by both "a" and "b"`},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			cfg := fmt.Sprintf(`{"tool_prefix":%q,"mcpServers":{"a":%s,"b":%s}}`, tc.mode, stdioServer(""), stdioServer(`"tools":{"allow":["echo","add"]}`))
			h, _ := newHost(t, cfg)
			require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
			if tc.collision != "" {
				_, err := h.ListTools()
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.collision)
				return
			}
			tools := listTools(t, h)
			for _, n := range tc.wantNames {
				require.Contains(t, tools, n)
			}
			if tc.mode == "on_collision" {
				require.NotContains(t, tools, "a__crash", "a name no other server offers stays as it is")
				res, err := h.CallToolSync("b__echo", []byte(`{"text":"b"}`), core.CallOptions{})
				require.Nil(t, errOrNil(err))
				require.Equal(t, "b", textOf(t, res))
				_, err = h.CallToolSync("echo", []byte(`{"text":"?"}`), core.CallOptions{})
				require.NotNil(t, err, "an unprefixed colliding name is ambiguous")
				require.Contains(t, err.Message, "offered by both")
			}
		})
	}
}

func TestHostToolFilters(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(`"tools":{"allow":["e*","c*","add"],"deny":["crash"]}`))
	h, _ := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	tools := listTools(t, h)
	require.Contains(t, tools, "a__echo")
	require.Contains(t, tools, "a__add")
	require.NotContains(t, tools, "a__crash", "denied")
	require.NotContains(t, tools, "a__slow", "not allowed")
	_, err := h.CallToolSync("a__crash", nil, core.CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, core.StatusPolicyDenied, err.Status)
}

func TestHostFailingSlowAndHealthyServers(t *testing.T) {
	before := fixtureProcesses()
	slow := fmt.Sprintf(`{"command":"/bin/sh","args":["-c","sleep 0.4; exec %s"],"timeouts":{"ready_ms":5000}}`, fixtureBin)
	broken := `{"command":"/nonexistent/mcp-server","restart":{"backoff_ms":1000,"max_restarts":2}}`
	mute := stdioServer(`"timeouts":{"ready_ms":300,"close_grace_ms":200},"restart":{"backoff_ms":50,"max_restarts":1}`, "-no-init")
	disabled := stdioServer(`"enabled":false`)
	cfg := fmt.Sprintf(`{"mcpServers":{"good":%s,"slow":%s,"broken":%s,"mute":%s,"off":%s}}`, stdioServer(""), slow, broken, mute, disabled)
	h, ev := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))

	rep := servers(t, h)
	require.Equal(t, "ready", rep["good"].State)
	require.Equal(t, "failed", rep["broken"].State)
	require.Contains(t, rep["broken"].LastError, "/nonexistent/mcp-server")
	require.Equal(t, "disabled", rep["off"].State)
	require.Eventually(t, func() bool { return servers(t, h)["slow"].State == "ready" }, 10*time.Second, 20*time.Millisecond)

	tools := listTools(t, h)
	require.Contains(t, tools, "good__echo")
	require.Contains(t, tools, "slow__echo")
	res, err := h.CallToolSync("good__echo", []byte(`{"text":"fine"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err), "a failing server never fails the others")
	require.Equal(t, "fine", textOf(t, res))

	// The broken one is not retried (it cannot start); the mute one gives
	// up after its restarts.
	require.Contains(t, rep["broken"].LastError, "not retried")
	require.Eventually(t, func() bool {
		return strings.Contains(servers(t, h)["mute"].LastError, "gave up")
	}, 10*time.Second, 20*time.Millisecond)
	rep = servers(t, h)
	require.Equal(t, "failed", rep["broken"].State, "never ready, not retried")
	require.Equal(t, 0, rep["broken"].Restarts)
	require.Equal(t, "failed", rep["mute"].State)
	// Events reach the handler after the state they report is visible.
	require.Eventually(t, func() bool { return ev.has("failed", `"server":"broken"`) }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return ev.has("closed", `"server":"mute"`) }, 5*time.Second, 10*time.Millisecond)
	require.False(t, ev.has("restarting", `"server":"broken"`))

	require.Nil(t, errOrNil(h.Close(5*time.Second)))
	require.Equal(t, before, fixtureProcesses(), "no orphan process")
}

func TestHostRestartsACrashedServer(t *testing.T) {
	before := fixtureProcesses()
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(""))
	h, ev := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	listTools(t, h)

	_, err := h.CallToolSync("a__crash", nil, core.CallOptions{})
	require.NotNil(t, err)
	require.Equal(t, core.StatusClosed, err.Status)
	require.Eventually(t, func() bool {
		return ev.has("ready", `"server":"a"`) && servers(t, h)["a"].State == "ready" && servers(t, h)["a"].Restarts == 1
	}, 10*time.Second, 20*time.Millisecond)
	require.True(t, ev.has("restarting", `"server":"a"`, `"attempt":1`, `"exit_code":3`))
	require.Equal(t, 0, servers(t, h)["b"].Restarts)

	res, err := h.CallToolSync("a__echo", []byte(`{"text":"back"}`), core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Equal(t, "back", textOf(t, res))
	require.Nil(t, errOrNil(h.Close(5*time.Second)))
	require.Equal(t, before, fixtureProcesses())
}

func TestHostListChangedRefreshes(t *testing.T) {
	for _, mode := range []string{"legacy", "modern"} {
		t.Run(mode, func(t *testing.T) {
			cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(`"protocol":{"mode":"`+mode+`"}`))
			h, ev := newHost(t, cfg)
			require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
			require.NotContains(t, listTools(t, h), "a__dynamic_1")
			_, err := h.CallToolSync("a__notify", nil, core.CallOptions{})
			require.Nil(t, errOrNil(err))
			if mode == "legacy" {
				// The notification arrives on its own; the host refetches and
				// says the aggregated list changed.
				require.Eventually(t, func() bool {
					return ev.has("list_changed", `"server":"a"`, `"list":"tools"`) && ev.has("notification", "tools/list_changed")
				}, 5*time.Second, 10*time.Millisecond)
			}
			// Both: refreshed on list_changed (modern: heard on the listen
			// stream; TestHostKeepsModernListsWithoutTTL).
			require.Eventually(t, func() bool { _, ok := listTools(t, h)["a__dynamic_1"]; return ok }, 5*time.Second, 20*time.Millisecond)
		})
	}
}

func TestAppRequestsCarryTheServerName(t *testing.T) {
	cfg := fmt.Sprintf(`{"defaults":{"handlers":{"elicitation":{}}},"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(""))
	h, err := host.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(err))
	defer h.Free()
	var mu sync.Mutex
	var seen []string
	h.SetAppRequestHandler(func(id uint64, kind string, payload []byte) {
		var p struct {
			Server string `json:"server"`
			Method string `json:"method"`
		}
		_ = json.Unmarshal(payload, &p)
		mu.Lock()
		seen = append(seen, kind+" "+p.Server+" "+p.Method)
		mu.Unlock()
		_ = h.Respond(id, core.StatusOK, []byte(`{"action":"accept","content":{"name":"`+p.Server+`"}}`))
	}, nil)
	require.Nil(t, errOrNil(h.Connect()))
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	res, cerr := h.CallToolSync("b__elicit", []byte(`{"message":"who?"}`), core.CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Contains(t, textOf(t, res), `"name":"b"`)
	mu.Lock()
	require.Equal(t, []string{"elicitation b elicitation/create"}, seen)
	mu.Unlock()
	require.Equal(t, core.StatusNotFound, h.Respond(999, core.StatusOK, []byte(`{}`)).Status)
	require.Nil(t, errOrNil(h.Close(5*time.Second)))
}

func TestHostPromptsAndResources(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(`"protocol":{"mode":"modern"}`))
	h, _ := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	for _, list := range []func() ([]byte, *core.Error){h.ListPrompts, h.ListResources} {
		raw, err := list()
		require.Nil(t, errOrNil(err))
		require.Contains(t, string(raw), `"server":"a"`)
		require.Contains(t, string(raw), `"server":"b"`)
	}
}

// TestHostOfFiftyServers measures a host of fifty stdio servers (figures
// are logged, never asserted).
func TestHostOfFiftyServers(t *testing.T) {
	before := fixtureProcesses()
	var entries []string
	for i := 0; i < 50; i++ {
		entries = append(entries, fmt.Sprintf(`"s%02d":%s`, i, stdioServer("")))
	}
	runtime.GC()
	g0, th0, rss0 := runtime.NumGoroutine(), procStatus("Threads"), procStatus("VmRSS")
	start := time.Now()
	h, _ := newHost(t, `{"mcpServers":{`+strings.Join(entries, ",")+`}}`)
	connected := time.Since(start)
	require.Nil(t, errOrNil(h.WaitReady(60*time.Second)))
	ready := time.Since(start)
	tools := listTools(t, h)
	listed := time.Since(start)
	for name, rep := range servers(t, h) {
		require.Equal(t, "ready", rep.State, name)
	}
	require.Contains(t, tools, "s49__echo")
	require.Equal(t, before+50, fixtureProcesses())
	runtime.GC()
	children := 0
	for _, pid := range fixturePIDs() {
		children += procStatusOf(pid, "VmRSS")
	}
	t.Logf("50 servers: connect returned in %s, all ready in %s, list_tools (%d tools) done at %s", connected.Round(time.Millisecond), ready.Round(time.Millisecond), len(tools), listed.Round(time.Millisecond))
	t.Logf("50 servers: host goroutines %d -> %d, OS threads %d -> %d, host RSS %d -> %d KiB, servers' RSS %d KiB in all",
		g0, runtime.NumGoroutine(), th0, procStatus("Threads"), rss0, procStatus("VmRSS"), children)
	start = time.Now()
	require.Nil(t, errOrNil(h.Close(10*time.Second)))
	t.Logf("50 servers: close took %s", time.Since(start).Round(time.Millisecond))
	require.Equal(t, before, fixtureProcesses())
}

func procStatus(field string) int { return procStatusOf(os.Getpid(), field) }

func procStatusOf(pid int, field string) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(strings.TrimPrefix(line, field+":"))
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

func TestHostProgressCarriesTheHostCallID(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(""))
	h, ev := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	// A few calls first, so host and client call ids differ.
	for i := 0; i < 3; i++ {
		_, err := h.CallToolSync("a__echo", []byte(`{"text":"x"}`), core.CallOptions{})
		require.Nil(t, errOrNil(err))
	}
	done := make(chan uint64, 1)
	id, err := h.CallTool("b__slow", []byte(`{"ms":60,"steps":3}`), core.CallOptions{Progress: true}, func(id uint64, _ core.Status, _ []byte) { done <- id })
	require.Nil(t, errOrNil(err))
	require.Equal(t, id, <-done)
	require.Eventually(t, func() bool { return ev.has("progress", `"server":"b"`, fmt.Sprintf(`"call_id":%d`, id)) }, 5*time.Second, 10*time.Millisecond)
}

func TestHostFreeReapsEveryServer(t *testing.T) {
	before := fixtureProcesses()
	h, err := host.Parse([]byte(fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(""))), "test")
	require.Nil(t, errOrNil(err))
	require.Nil(t, errOrNil(h.Connect()))
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	require.Equal(t, before+2, fixtureProcesses())
	h.Free() // without Close: never blocks, reaps in the background
	h.Free()
	require.Eventually(t, func() bool { return fixtureProcesses() == before }, 10*time.Second, 20*time.Millisecond)
	_, cerr := h.CallToolSync("a__echo", []byte(`{"text":"x"}`), core.CallOptions{})
	require.NotNil(t, cerr)
	require.Equal(t, core.StatusInvalidHandle, cerr.Status, cerr.Message)
	require.Contains(t, cerr.Message, "the host was freed")
}
