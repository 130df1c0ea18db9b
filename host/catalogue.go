package host

import (
	"bytes"
	"sync"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/toolsearch"
)

// catalogue is the aggregated tool list as list_tools names it: every
// ready server's tools the guard chain let through, under the host's names, the routes of
// those names, and (built on the first search) the search index. It is
// built again only when a server's cached list or the set of ready servers
// changed (list_changed, a restart, an expired ttlMs all replace a cached
// list), so a search of an unchanged catalogue costs only the ranking.
type catalogue struct {
	sources []catalogueSource
	tools   []catalogueTool
	raws    []jsonx.RawMessage // tools[i].raw, as list_tools returns them
	routes  map[string]route

	indexOnce sync.Once
	index     *toolsearch.Index
}

// catalogueSource is one server's list a catalogue was built from.
type catalogueSource struct {
	srv   *server
	items []item
}

// catalogueTool is one tool of the catalogue.
type catalogueTool struct {
	name   string
	srv    *server
	raw    jsonx.RawMessage // with the host's "name", "server", "original_name"
	search toolsearch.Tool
}

// builtFrom reports whether c was built from these lists: the same
// servers and, for each, the same cached list or one with the same items
// (a list fetched again, after a short ttlMs or a gap in a listen stream,
// often has not changed: comparing bytes is much cheaper than building the
// catalogue and its index again).
func (c *catalogue) builtFrom(servers []*server, lists [][]item) bool {
	if len(c.sources) != len(servers) {
		return false
	}
	for i, src := range c.sources {
		if src.srv != servers[i] || !sameItems(src.items, lists[i]) {
			return false
		}
	}
	return true
}

func sameItems(a, b []item) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].raw, b[i].raw) {
			return false
		}
	}
	return true
}

// searchIndex is the catalogue's index, built once.
func (c *catalogue) searchIndex() *toolsearch.Index {
	c.indexOnce.Do(func() {
		docs := make([]toolsearch.Tool, len(c.tools))
		for i := range c.tools {
			docs[i] = c.tools[i].search
		}
		c.index = toolsearch.New(docs)
	})
	return c.index
}

// toolCatalogue returns the current catalogue (fetching stale lists, as
// list_tools does), with the servers whose list failed, and makes its
// names the ones tool calls route by.
func (h *Host) toolCatalogue() (*catalogue, map[string]string, *core.Error) {
	servers, lists, failed := h.gather(listTools)
	c := h.tools.Load()
	if c == nil || !c.builtFrom(servers, lists) {
		var err *core.Error
		if c, err = h.buildCatalogue(servers, lists); err != nil {
			return nil, nil, err
		}
		h.tools.Store(c)
	}
	h.mu.Lock()
	h.routes = c.routes
	h.mu.Unlock()
	return c, failed, nil
}

// buildCatalogue names the tools by the host's tool_prefix mode.
func (h *Host) buildCatalogue(servers []*server, lists [][]item) (*catalogue, *core.Error) {
	offeredBy := map[string][]string{}
	if h.cfg.Deferred != nil {
		// The host's own search tool takes its name: a server's tool of
		// that name is prefixed (on_collision) or a collision (never).
		offeredBy[SearchToolName] = []string{"(the host's own search tool)"}
	}
	for i, s := range servers {
		for _, it := range lists[i] {
			// Collisions are of the names the application sees.
			n := exposedName(it.name)
			offeredBy[n] = append(offeredBy[n], s.name)
		}
	}
	if h.cfg.ToolPrefix == PrefixNever {
		for _, name := range sortedKeys(offeredBy) {
			if by := offeredBy[name]; len(by) > 1 {
				return nil, core.Errorf(core.StatusInvalidState, "tool_prefix \"never\": the tool %s is offered by both %s and %s (use tool_prefix \"on_collision\" or \"always\", or tools.deny on one of them)", jsonQuote(name), jsonQuote(by[0]), jsonQuote(by[1]))
			}
		}
	}
	c := &catalogue{routes: map[string]route{}}
	for i, s := range servers {
		c.sources = append(c.sources, catalogueSource{srv: s, items: lists[i]})
		for _, it := range lists[i] {
			exposed := exposedName(it.name)
			if h.cfg.ToolPrefix == PrefixAlways || (h.cfg.ToolPrefix == PrefixOnCollision && len(offeredBy[exposed]) > 1) {
				exposed = s.name + Separator + exposed
			}
			exposed = boundedName(exposed)
			// Two names of one server that differ only in characters MCP
			// does not allow ("a b", "a_b") would meet: number the later.
			for n, base := 2, exposed; ; n++ {
				if _, taken := c.routes[exposed]; !taken {
					break
				}
				exposed = boundedName(base + "_" + itoa(n))
			}
			var obj map[string]any
			if jsonx.Unmarshal(it.raw, &obj) != nil {
				continue
			}
			obj["name"], obj["server"], obj["original_name"] = exposed, s.name, it.name
			raw := jsonx.RawMessage(jsonx.MustMarshal(obj))
			c.tools = append(c.tools, catalogueTool{name: exposed, srv: s, raw: raw, search: toolsearch.FromObject(obj)})
			c.raws = append(c.raws, raw)
			c.routes[exposed] = route{srv: s, tool: it.name}
		}
	}
	if c.raws == nil {
		c.raws = make([]jsonx.RawMessage, 0)
	}
	return c, nil
}
