package gatewaytests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
)

// coreFront is LemonMCP's own client as a front client, answering
// sampling like an application.
func coreFront(t *testing.T, transportJSON, mode string) *core.Client {
	t.Helper()
	cfg := `{"transport":` + transportJSON + `,"protocol":{"mode":"` + mode + `"},"handlers":{"sampling":{},"roots":{}},
	  "timeouts":{"ready_ms":20000,"call_ms":20000,"close_grace_ms":2000}}`
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, perr)
	c := core.New(p.Options, p.Transport)
	require.Nil(t, c.SetAppRequestHandler(func(id uint64, kind string, _ []byte) {
		switch kind {
		case "sampling":
			_ = c.Respond(id, core.StatusOK, []byte(`{"model":"core-front","role":"assistant","content":{"type":"text","text":"sampled by the core client"}}`))
		case "roots":
			_ = c.Respond(id, core.StatusOK, []byte(`{"roots":[{"uri":"file:///core/front","name":"core"}]}`))
		default:
			_ = c.Respond(id, core.StatusUnsupported, nil)
		}
	}, nil))
	require.Nil(t, c.Connect())
	require.Nil(t, c.WaitReady(20*time.Second))
	return c
}

func coreToolText(t *testing.T, c *core.Client, name string, args string) string {
	t.Helper()
	data, err := c.CallSync("tools/call", []byte(`{"name":"`+name+`","arguments":`+args+`}`), core.CallOptions{})
	require.Nil(t, err)
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(data, &res))
	require.False(t, res.IsError, string(data))
	require.NotEmpty(t, res.Content)
	return res.Content[0].Text
}

// TestCoreClientThroughGatewayProcess: LemonMCP's own client runs the
// gateway as a stdio server process, in both eras, in front of servers
// of both eras; closing it (stdin) ends the gateway and leaves no
// process behind.
func TestCoreClientThroughGatewayProcess(t *testing.T) {
	gw, remove, err := fixturebin.Build("../fixtures/gwserve")
	require.NoError(t, err)
	defer remove()
	for _, fe := range []string{"legacy", "modern"} {
		for _, se := range []era{legacy, modern} {
			t.Run("front-"+fe+"/server-"+string(se), func(t *testing.T) {
				pidFile := filepath.Join(t.TempDir(), "gw.pid")
				hostCfg := `{"mcpServers": {"fx": {"command": "` + fixtureBin + `", "protocol": {"mode": "` + string(se) + `"}}}, "tool_prefix": "never",
				  "defaults": {"handlers": {"sampling": {}, "roots": {}}}}`
				tr := `{"type":"stdio","command":"sh","args":["-c","echo $$ > ` + pidFile + `; exec ` + gw + ` \"$0\"",` + strconv.Quote(hostCfg) + `]}`
				c := coreFront(t, tr, fe)
				require.Contains(t, coreToolText(t, c, "echo", `{"text":"via core"}`), "via core")
				require.Contains(t, coreToolText(t, c, "sample", `{"prompt":"p","max_tokens":5}`), "sampled by the core client")
				require.Contains(t, coreToolText(t, c, "roots", `{}`), "file:///core/front")
				b, rerr := os.ReadFile(pidFile)
				require.NoError(t, rerr)
				pid := strings.TrimSpace(string(b))
				require.Nil(t, c.Close(10*time.Second))
				c.Free()
				require.Eventually(t, func() bool {
					_, err := os.Stat("/proc/" + pid)
					return os.IsNotExist(err) || zombie(pid)
				}, 15*time.Second, 20*time.Millisecond, "the gateway process outlived its closed stdin")
				require.Eventually(t, func() bool { return len(fixtureChildren()) == 0 }, 15*time.Second, 20*time.Millisecond, "a server process outlived the gateway")
			})
		}
	}
}

// TestCoreClientOverHTTP: LemonMCP's own client through the HTTP front,
// both eras.
func TestCoreClientOverHTTP(t *testing.T) {
	for _, fe := range []string{"legacy", "modern"} {
		t.Run("front-"+fe, func(t *testing.T) {
			h := newHost(t, legacy)
			g := newGateway(t, h, "")
			url := httpFront(t, g)
			c := coreFront(t, `{"type":"streamable_http","url":"`+url+`"}`, fe)
			defer func() {
				_ = c.Close(5 * time.Second)
				c.Free()
			}()
			require.Contains(t, coreToolText(t, c, "echo", `{"text":"over http"}`), "over http")
			require.Contains(t, coreToolText(t, c, "sample", `{"prompt":"p","max_tokens":5}`), "sampled by the core client")
		})
	}
}

func zombie(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// fixtureChildren are the live fixture processes of this test binary's
// build (their executable is this run's fixture).
func fixtureChildren() []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err == nil && exe == fixtureBin && !zombie(e.Name()) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
