package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

func TestParseDeferredTools(t *testing.T) {
	const server = `"mcpServers":{"a":{"command":"x"}}`
	cases := []struct {
		name, field string
		want        *DeferredConfig
		errPart     string
	}{
		{"absent: every tool is listed", ``, nil, ""},
		{"empty object: defaults", `,"deferred_tools":{}`, &DeferredConfig{MaxResults: DefaultDeferLimit}, ""},
		{"names and globs", `,"deferred_tools":{"always_loaded":["a__echo","b__*"],"max_results":3}`, &DeferredConfig{AlwaysLoaded: []string{"a__echo", "b__*"}, MaxResults: 3}, ""},
		{"not an object", `,"deferred_tools":true`, nil, "config.deferred_tools: must be a JSON object"},
		{"unknown field", `,"deferred_tools":{"alwaysLoaded":[]}`, nil, "config.deferred_tools.alwaysLoaded: is not a known field"},
		{"always_loaded not an array", `,"deferred_tools":{"always_loaded":"a__echo"}`, nil, "config.deferred_tools.always_loaded: must be an array"},
		{"empty name", `,"deferred_tools":{"always_loaded":["a","  "]}`, nil, "config.deferred_tools.always_loaded[1]: must be a non-empty string"},
		{"bad glob", `,"deferred_tools":{"always_loaded":["a__["]}`, nil, "config.deferred_tools.always_loaded[0]: is not a valid glob"},
		{"max_results zero", `,"deferred_tools":{"max_results":0}`, nil, "config.deferred_tools.max_results: must be an integer from 1 to 100"},
		{"max_results fraction", `,"deferred_tools":{"max_results":2.5}`, nil, "config.deferred_tools.max_results: must be an integer"},
		{"max_results too large", `,"deferred_tools":{"max_results":101}`, nil, "must be an integer from 1 to 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(`{` + server + c.field + `}`))
			if c.errPart != "" {
				require.NotNil(t, err)
				require.Equal(t, core.StatusInvalidArgument, err.Status)
				require.Contains(t, err.Message, c.errPart)
				return
			}
			require.Nil(t, err)
			require.Equal(t, c.want, cfg.Deferred)
		})
	}
}

func TestAlwaysLoaded(t *testing.T) {
	d := &DeferredConfig{AlwaysLoaded: []string{"fs__read_file", "git__*"}}
	cases := []struct {
		name string
		want bool
	}{
		{"fs__read_file", true},
		{"fs__write_file", false},
		{"git__status", true},
		{"github__create_issue", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, d.alwaysLoaded(c.name))
		})
	}
}

func TestParseSearchOptions(t *testing.T) {
	h, err := Parse([]byte(`{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	cases := []struct {
		name, raw string
		want      SearchOptions
		status    core.Status
		errPart   string
	}{
		{"absent", ``, SearchOptions{Limit: DefaultSearchLimit}, core.StatusOK, ""},
		{"empty object", `{}`, SearchOptions{Limit: DefaultSearchLimit}, core.StatusOK, ""},
		{"limit and servers", `{"limit":3,"servers":["b"]}`, SearchOptions{Limit: 3, Servers: []string{"b"}}, core.StatusOK, ""},
		{"not an object", `[1]`, SearchOptions{}, core.StatusInvalidArgument, "options: must be a JSON object"},
		{"bad limit", `{"limit":0}`, SearchOptions{}, core.StatusInvalidArgument, "options.limit: must be an integer from 1 to 100"},
		{"servers not an array", `{"servers":"a"}`, SearchOptions{}, core.StatusInvalidArgument, "options.servers: must be an array"},
		{"unknown server", `{"servers":["c"]}`, SearchOptions{}, core.StatusNotFound, `no server named "c" in the host (servers: a, b)`},
		{"unknown field", `{"top_k":3}`, SearchOptions{}, core.StatusInvalidArgument, "options.top_k: is not a known field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := h.ParseSearchOptions([]byte(c.raw))
			if c.errPart != "" {
				require.NotNil(t, err)
				require.Equal(t, c.status, err.Status)
				require.Contains(t, err.Message, c.errPart)
				return
			}
			require.Nil(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestSearchQueryChecks(t *testing.T) {
	h, err := Parse([]byte(`{"mcpServers":{"a":{"command":"x"}}}`), "test")
	require.Nil(t, err)
	t.Cleanup(h.Free)
	long := make([]byte, maxQueryBytes+1)
	for i := range long {
		long[i] = 'a'
	}
	cases := []struct{ name, query, errPart string }{
		{"empty", "", "the search query is empty"},
		{"blank", "  \t", "the search query is empty"},
		{"only common words", "the of and", "has no word to search for"},
		{"too long", string(long), "bytes long (at most 4096)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.SearchTools(c.query, SearchOptions{Limit: 5})
			require.NotNil(t, err)
			require.Equal(t, core.StatusInvalidArgument, err.Status)
			require.Contains(t, err.Message, c.errPart)
		})
	}
	t.Run("no ready server: no results", func(t *testing.T) {
		res, err := h.SearchTools("echo", SearchOptions{Limit: 5})
		require.Nil(t, err)
		require.JSONEq(t, `{"results":[]}`, string(res))
	})
}

func TestSameItems(t *testing.T) {
	a := []item{{name: "x", raw: []byte(`{"name":"x"}`)}, {name: "y", raw: []byte(`{"name":"y"}`)}}
	refetched := []item{{name: "x", raw: []byte(`{"name":"x"}`)}, {name: "y", raw: []byte(`{"name":"y"}`)}}
	cases := []struct {
		name string
		b    []item
		want bool
	}{
		{"the same slice", a, true},
		{"a refetch with the same items", refetched, true},
		{"a changed description", []item{a[0], {name: "y", raw: []byte(`{"name":"y","description":"new"}`)}}, false},
		{"a tool fewer", a[:1], false},
		{"reordered", []item{a[1], a[0]}, false},
		{"an empty list", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, sameItems(a, c.b))
		})
	}
	require.True(t, sameItems(nil, []item{}))
}
