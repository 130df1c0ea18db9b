package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LemonMCP's core, configured exactly as a host configures it.
type lemonClient struct{ c *core.Client }

func connectLemon(tg target) (caller, error) {
	tr := map[string]any{"type": "streamable_http", "url": tg.url}
	if tg.sse() {
		tr["type"] = "sse"
	}
	if tg.stdio {
		tr = map[string]any{"type": "stdio", "command": tg.cmd[0], "args": tg.cmd[1:]}
	}
	cfg, _ := json.Marshal(map[string]any{"transport": tr,
		"protocol": map[string]any{"mode": "legacy", "versions": []string{pinnedVersion}}})
	p, perr := config.Parse(cfg, "bench")
	if perr != nil {
		return nil, perr
	}
	c := core.New(p.Options, p.Transport)
	if err := c.Connect(); err != nil {
		c.Free()
		return nil, err
	}
	if err := c.WaitReady(30 * time.Second); err != nil {
		c.Close(5 * time.Second)
		c.Free()
		return nil, err
	}
	return &lemonClient{c}, nil
}

var (
	lemonEcho  = []byte(echoParams)
	lemonLarge = []byte(largeParams)
)

func (l *lemonClient) echo() error {
	_, err := l.c.CallSync("tools/call", lemonEcho, core.CallOptions{})
	if err != nil {
		return err
	}
	return nil
}

func (l *lemonClient) large() error {
	_, err := l.c.CallSync("tools/call", lemonLarge, core.CallOptions{})
	if err != nil {
		return err
	}
	return nil
}

func (l *lemonClient) close() {
	l.c.Close(5 * time.Second)
	l.c.Free()
}

// The official go-sdk client.
type goSDKClient struct{ cs *mcp.ClientSession }

func connectGoSDK(tg target) (caller, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	var t mcp.Transport
	if tg.stdio {
		t = &mcp.CommandTransport{Command: exec.Command(tg.cmd[0], tg.cmd[1:]...)}
	} else if tg.sse() {
		t = &mcp.SSEClientTransport{Endpoint: tg.url}
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: tg.url}
	}
	cs, err := client.Connect(context.Background(), t, &mcp.ClientSessionOptions{ProtocolVersion: pinnedVersion})
	if err != nil {
		return nil, err
	}
	return &goSDKClient{cs}, nil
}

func (g *goSDKClient) call(name string, args map[string]any) error {
	res, err := g.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool error")
	}
	return nil
}

var (
	echoArgs  = map[string]any{"text": "hello"}
	largeArgs = map[string]any{"bytes": largeBytes}
)

func (g *goSDKClient) echo() error  { return g.call("echo", echoArgs) }
func (g *goSDKClient) large() error { return g.call("large", largeArgs) }
func (g *goSDKClient) close()       { g.cs.Close() }

// The mark3labs/mcp-go client.
type mcpGoClient struct{ c *mcpgoclient.Client }

func connectMCPGo(tg target) (caller, error) {
	var c *mcpgoclient.Client
	var err error
	ctx := context.Background()
	if tg.stdio {
		c, err = mcpgoclient.NewStdioMCPClient(tg.cmd[0], nil, tg.cmd[1:]...)
	} else if tg.sse() {
		c, err = mcpgoclient.NewSSEMCPClient(tg.url)
		if err == nil {
			err = c.Start(ctx)
		}
	} else {
		c, err = mcpgoclient.NewStreamableHttpClient(tg.url)
		if err == nil {
			err = c.Start(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = pinnedVersion
	req.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, err
	}
	return &mcpGoClient{c}, nil
}

func (m *mcpGoClient) call(name string, args map[string]any) error {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := m.c.CallTool(context.Background(), req)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool error")
	}
	return nil
}

func (m *mcpGoClient) echo() error  { return m.call("echo", echoArgs) }
func (m *mcpGoClient) large() error { return m.call("large", largeArgs) }
func (m *mcpGoClient) close()       { m.c.Close() }
