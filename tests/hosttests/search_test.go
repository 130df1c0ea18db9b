package hosttests

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

type searchHit struct {
	Name   string          `json:"name"`
	Server string          `json:"server"`
	Score  float64         `json:"score"`
	Tool   json.RawMessage `json:"tool"`
}

func search(t *testing.T, h *host.Host, query, options string) []searchHit {
	t.Helper()
	opts, err := h.ParseSearchOptions([]byte(options))
	require.Nil(t, errOrNil(err))
	raw, err := h.SearchTools(query, opts)
	require.Nil(t, errOrNil(err))
	var doc struct {
		Results []searchHit `json:"results"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	return doc.Results
}

func hitNames(hits []searchHit) []string {
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Name
	}
	return names
}

// TestHostSearchTools ranks the aggregated catalogue of two servers: the
// results carry the host's names (which route calls), the server, a score
// and the whole tool; ties go by name; options filter and bound them.
func TestHostSearchTools(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s}}`, stdioServer(""), stdioServer(`"tools":{"deny":["pid"]}`))
	h, _ := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))

	cases := []struct {
		name, query, options string
		want                 []string
	}{
		{"equal tools tie by name", "adds", `{"limit":2}`, []string{"a__add", "b__add"}},
		{"a server's denied tool is not in the catalogue", "process id", `{"limit":1}`, []string{"a__pid"}},
		{"servers filter", "returns text", `{"servers":["b"],"limit":1}`, []string{"b__echo"}},
		{"no match", "kubernetes deployment", ``, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, hitNames(search(t, h, c.query, c.options)))
		})
	}
	t.Run("a result is the whole tool", func(t *testing.T) {
		hits := search(t, h, "add", `{"limit":1}`)
		require.Len(t, hits, 1)
		require.Equal(t, "a", hits[0].Server)
		require.Greater(t, hits[0].Score, 0.0)
		var tool map[string]any
		require.NoError(t, json.Unmarshal(hits[0].Tool, &tool))
		require.Equal(t, "a__add", tool["name"])
		require.Equal(t, "add", tool["original_name"])
		require.Contains(t, tool, "inputSchema")
		res, err := h.CallToolSync(hits[0].Name, []byte(`{"a":2,"b":3}`), core.CallOptions{})
		require.Nil(t, errOrNil(err))
		require.Equal(t, "5", textOf(t, res))
	})
	t.Run("deterministic", func(t *testing.T) {
		first := search(t, h, "returns text message", "")
		for i := 0; i < 3; i++ {
			require.Equal(t, first, search(t, h, "message text returns", ""))
		}
	})
}

// TestHostSearchFollowsTheServers: the index follows list_changed (a tool
// added is found) and restarts (the restarted server's tools are found
// again, and route).
func TestHostSearchFollowsTheServers(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(`"protocol":{"mode":"legacy"}`))
	h, ev := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	found := func() bool {
		return slices.Contains(hitNames(search(t, h, "dynamic tool added by notify", "")), "a__dynamic_1")
	}
	require.False(t, found())

	_, err := h.CallToolSync("a__notify", nil, core.CallOptions{})
	require.Nil(t, errOrNil(err))
	require.Eventually(t, found, 5*time.Second, 20*time.Millisecond, "list_changed reaches the index")

	_, err = h.CallToolSync("a__crash", nil, core.CallOptions{})
	require.NotNil(t, err)
	require.Eventually(t, func() bool { return ev.count("ready", `"server":"a"`) == 2 }, 10*time.Second, 20*time.Millisecond)
	// The restarted fixture starts without the dynamic tool.
	require.Eventually(t, func() bool { return !found() }, 5*time.Second, 20*time.Millisecond, "the restart reaches the index")
	hits := search(t, h, "process id", `{"limit":1}`)
	require.Equal(t, []string{"a__pid"}, hitNames(hits))
	_, err = h.CallToolSync("a__pid", nil, core.CallOptions{})
	require.Nil(t, errOrNil(err))
}

// TestHostDeferredTools: with deferred_tools, list_tools offers the tools
// always loaded and search_tools, which the host answers itself with the
// matching tools' definitions; those are then called by name.
func TestHostDeferredTools(t *testing.T) {
	cfg := fmt.Sprintf(`{"mcpServers":{"a":%s,"b":%s},"deferred_tools":{"always_loaded":["a__echo"],"max_results":2}}`, stdioServer(""), stdioServer(""))
	h, _ := newHost(t, cfg)
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))

	listed := listTools(t, h)
	require.Len(t, listed, 2)
	require.Contains(t, listed, "a__echo")
	require.Contains(t, listed, host.SearchToolName)

	type searchToolResult struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent struct {
			Tools []map[string]any `json:"tools"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	callSearch := func(args string) searchToolResult {
		t.Helper()
		raw, err := h.CallToolSync(host.SearchToolName, []byte(args), core.CallOptions{})
		require.Nil(t, errOrNil(err))
		var r searchToolResult
		require.NoError(t, json.Unmarshal(raw, &r))
		require.NotEmpty(t, r.Content)
		return r
	}
	cases := []struct {
		name, args string
		tools      []string
		errPart    string
	}{
		{"max_results bounds the answer", `{"query":"adds"}`, []string{"a__add", "b__add"}, ""},
		{"limit", `{"query":"process id","limit":1}`, []string{"a__pid"}, ""},
		{"no match", `{"query":"kubernetes"}`, []string{}, ""},
		{"no query", `{}`, nil, `needs "query"`},
		{"query of common words", `{"query":"the of"}`, nil, "has no word to search for"},
		{"bad limit", `{"query":"add","limit":0}`, nil, `"limit" must be an integer from 1 to 100`},
		{"unknown argument", `{"query":"add","server":"a"}`, nil, `"server" is not one of them`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := callSearch(c.args)
			if c.errPart != "" {
				require.True(t, r.IsError)
				require.Contains(t, r.Content[0].Text, c.errPart)
				return
			}
			require.False(t, r.IsError)
			names := []string{}
			for _, tool := range r.StructuredContent.Tools {
				names = append(names, tool["name"].(string))
				require.Contains(t, tool, "inputSchema")
			}
			require.Equal(t, c.tools, names)
		})
	}
	t.Run("a found tool is called by its name", func(t *testing.T) {
		res, err := h.CallToolSync("b__add", []byte(`{"a":1,"b":1}`), core.CallOptions{})
		require.Nil(t, errOrNil(err))
		require.Equal(t, "2", textOf(t, res))
	})
	t.Run("asynchronous call completes through the host", func(t *testing.T) {
		done := make(chan string, 1)
		id, err := h.CallTool(host.SearchToolName, []byte(`{"query":"process id","limit":1}`), core.CallOptions{}, func(_ uint64, st core.Status, data []byte) {
			done <- fmt.Sprintf("%d %s", st, data)
		})
		require.Nil(t, errOrNil(err))
		require.NotZero(t, id)
		select {
		case got := <-done:
			require.Contains(t, got, `"a__pid"`)
			require.Regexp(t, `^0 `, got)
		case <-time.After(10 * time.Second):
			t.Fatal("the search_tools call never completed")
		}
	})
	t.Run("arguments must be an object", func(t *testing.T) {
		_, err := h.CallToolSync(host.SearchToolName, []byte(`[1]`), core.CallOptions{})
		require.NotNil(t, err)
		require.Equal(t, core.StatusInvalidArgument, err.Status)
	})
}
