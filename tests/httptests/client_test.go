package httptests

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// wait bounds every wait in these tests.
const wait = 15 * time.Second

// client is our client under test, with what its event handler saw.
type client struct {
	*core.Client
	mu     sync.Mutex
	events []event
}

type event struct {
	Kind    string
	Payload string
}

// connect builds a client from a configuration, as a host does, and waits
// until it is ready. extra is spliced into the configuration object.
func connect(t *testing.T, kind, url, extra string) *client {
	t.Helper()
	return connectConfig(t, fmt.Sprintf(`{"transport":{"type":%q,"url":%q},"handlers":{"roots":{}},"timeouts":{"ready_ms":10000,"call_ms":10000,"close_grace_ms":500}%s}`, kind, url, extra))
}

// connectHeaders is connect with configured HTTP headers (a JSON object).
func connectHeaders(t *testing.T, kind, url, headers string) *client {
	t.Helper()
	return connectConfig(t, fmt.Sprintf(`{"transport":{"type":%q,"url":%q,"headers":%s},"timeouts":{"ready_ms":10000,"call_ms":10000,"close_grace_ms":500}}`, kind, url, headers))
}

// connectConfig builds a client from a whole configuration.
func connectConfig(t *testing.T, cfg string) *client {
	t.Helper()
	p, perr := config.Parse([]byte(cfg), "test")
	require.Nil(t, errOrNil(perr))
	c := &client{Client: core.New(p.Options, p.Transport)}
	c.SetEventHandler(func(kind string, payload []byte) {
		c.mu.Lock()
		c.events = append(c.events, event{kind, string(payload)})
		c.mu.Unlock()
	}, nil)
	require.Nil(t, errOrNil(c.SetAppRequestHandler(func(id uint64, kind string, _ []byte) {
		switch kind {
		case "roots":
			c.Respond(id, core.StatusOK, []byte(`{"roots":[{"uri":"file:///work","name":"work"}]}`))
			return
		case "elicitation":
			c.Respond(id, core.StatusOK, []byte(`{"action":"accept","content":{}}`))
			return
		}
		c.Respond(id, core.StatusUnsupported, nil)
	}, nil)))
	require.Nil(t, errOrNil(c.Connect()))
	t.Cleanup(func() {
		c.Close(5 * time.Second)
		c.Free()
	})
	require.Nil(t, errOrNil(c.WaitReady(wait)))
	return c
}

// call makes a call and decodes its result.
func (c *client) call(t *testing.T, method string, params any, opts core.CallOptions) map[string]any {
	t.Helper()
	res, err := c.try(method, params, opts)
	require.Nil(t, errOrNil(err), "%s", method)
	return res
}

func (c *client) try(method string, params any, opts core.CallOptions) (map[string]any, *core.Error) {
	var raw []byte
	if params != nil {
		raw, _ = json.Marshal(params)
	}
	if !opts.TimeoutSet {
		opts.Timeout, opts.TimeoutSet = wait, true
	}
	data, err := c.CallSync(method, raw, opts)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if jerr := json.Unmarshal(data, &out); jerr != nil {
		return nil, core.Errorf(core.StatusInternal, "result is not JSON: %v", jerr)
	}
	return out, nil
}

// toolText calls a tool and returns its first text content.
func (c *client) toolText(t *testing.T, name string, args any) string {
	t.Helper()
	res := c.call(t, "tools/call", map[string]any{"name": name, "arguments": args}, core.CallOptions{})
	require.NotEqual(t, true, res["isError"], "%v", res)
	return firstText(t, res)
}

func firstText(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	require.NotEmpty(t, content, "%v", res)
	item, _ := content[0].(map[string]any)
	s, _ := item["text"].(string)
	return s
}

func (c *client) eventsOf(kind string) []event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []event
	for _, e := range c.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// waitEvent waits for an event of kind whose payload contains text.
func (c *client) waitEvent(t *testing.T, kind, text string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		for _, e := range c.eventsOf(kind) {
			if contains(e.Payload, text) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.FailNow(t, "event did not arrive", "%s containing %q; got %v", kind, text, c.eventsOf(kind))
}

func (c *client) serverInfo(t *testing.T) map[string]any {
	t.Helper()
	raw, err := c.ServerInfo()
	require.Nil(t, errOrNil(err))
	var info map[string]any
	require.NoError(t, json.Unmarshal(raw, &info))
	return info
}

func contains(s, sub string) bool { return len(sub) == 0 || indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func errOrNil(e *core.Error) error {
	if e == nil {
		return nil
	}
	return e
}
