package host

import (
	"math"
	"strconv"
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/internal/toolsearch"
)

// maxQueryBytes bounds a search query: a query is a few words, and the
// bound keeps every search's cost bounded.
const maxQueryBytes = 4096

// SearchOptions are lmcp_host_search_tools' options.
type SearchOptions struct {
	Limit   int      // how many results at most [DefaultSearchLimit]
	Servers []string // only these servers' tools (empty: every server)
}

// ParseSearchOptions validates {"limit": n, "servers": [name, ...]} (empty
// or absent: the defaults).
func (h *Host) ParseSearchOptions(raw []byte) (SearchOptions, *core.Error) {
	opts := SearchOptions{Limit: DefaultSearchLimit}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return opts, nil
	}
	var m map[string]any
	if jsonx.Unmarshal(raw, &m) != nil || m == nil {
		return opts, invalid("options", "must be a JSON object")
	}
	for k, v := range m {
		switch k {
		case "limit":
			n, ok := wholeNumber(v)
			if !ok || n < 1 || n > MaxSearchLimit {
				return opts, invalid("options.limit", "must be an integer from 1 to "+itoa(MaxSearchLimit))
			}
			opts.Limit = n
		case "servers":
			list, ok := v.([]any)
			if !ok {
				return opts, invalid("options.servers", "must be an array of server names")
			}
			for _, e := range list {
				name, _ := e.(string)
				if h.byName[name] == nil {
					return opts, core.Errorf(core.StatusNotFound, "options.servers: no server named %s in the host (servers: %s)", jsonQuote(name), strings.Join(h.ServerNames(), ", "))
				}
				opts.Servers = append(opts.Servers, name)
			}
		default:
			return opts, invalid("options."+k, "is not a known field (known: limit, servers)")
		}
	}
	return opts, nil
}

// SearchTools ranks the aggregated, filtered catalogue (the tools
// list_tools gives without deferred_tools) against a free-text query:
// {"results": [{"name", "server", "score", "tool"}], "errors"?: {server:
// message}}, best first, equal scores by name. The names route tool calls
// (also under deferred_tools).
func (h *Host) SearchTools(query string, opts SearchOptions) ([]byte, *core.Error) {
	if err := checkQuery(query); err != nil {
		return nil, err
	}
	c, failed, err := h.toolCatalogue()
	if err != nil {
		return nil, err
	}
	hits := c.search(query, opts)
	results := make([]jsonx.RawMessage, len(hits))
	for i, hit := range hits {
		t := &c.tools[hit.Tool]
		results[i] = searchResult(t, hit.Score)
	}
	return rawDoc("results", results, failed), nil
}

// searchResult is {"name", "server", "score", "tool"}, built around the
// tool's JSON as the catalogue holds it (see rawDoc).
func searchResult(t *catalogueTool, score float64) jsonx.RawMessage {
	buf := make([]byte, 0, len(t.raw)+len(t.name)+len(t.srv.name)+48)
	buf = append(buf, `{"name":`...)
	buf = jsonx.AppendString(buf, t.name)
	buf = append(buf, `,"server":`...)
	buf = jsonx.AppendString(buf, t.srv.name)
	buf = append(buf, `,"score":`...)
	buf = strconv.AppendFloat(buf, roundScore(score), 'f', -1, 64)
	buf = append(buf, `,"tool":`...)
	buf = append(buf, t.raw...)
	return append(buf, '}')
}

func checkQuery(query string) *core.Error {
	switch {
	case strings.TrimSpace(query) == "":
		return core.Errorf(core.StatusInvalidArgument, "the search query is empty")
	case len(query) > maxQueryBytes:
		return core.Errorf(core.StatusInvalidArgument, "the search query is %d bytes long (at most %d)", len(query), maxQueryBytes)
	case len(toolsearch.Words(query)) == 0:
		return core.Errorf(core.StatusInvalidArgument, "the search query %s has no word to search for (only punctuation or common words such as \"the\")", jsonQuote(query))
	}
	return nil
}

// search ranks the catalogue, keeping opts.Servers' tools only.
func (c *catalogue) search(query string, opts SearchOptions) []toolsearch.Hit {
	ix := c.searchIndex()
	if len(opts.Servers) == 0 {
		return ix.Search(query, opts.Limit)
	}
	all := ix.Search(query, ix.Len())
	out := all[:0]
	for _, hit := range all {
		for _, s := range opts.Servers {
			if c.tools[hit.Tool].srv.name == s {
				out = append(out, hit)
				break
			}
		}
		if len(out) == opts.Limit {
			break
		}
	}
	return out
}

// roundScore keeps four decimals: enough to compare, short to read (the
// order was decided on the exact scores).
func roundScore(s float64) float64 { return math.Round(s*1e4) / 1e4 }

// deferredTools is list_tools under deferred_tools: the tools always
// loaded, then the host's search tool.
func (h *Host) deferredTools(c *catalogue) []jsonx.RawMessage {
	out := make([]jsonx.RawMessage, 0, 8)
	servers := map[string]bool{}
	deferred := 0
	for i := range c.tools {
		t := &c.tools[i]
		if h.cfg.Deferred.alwaysLoaded(t.name) {
			out = append(out, t.raw)
			continue
		}
		deferred++
		servers[t.srv.name] = true
	}
	return append(out, searchToolDefinition(deferred, sortedKeys(servers), h.cfg.Deferred.MaxResults))
}

// searchToolDefinition is the host's search tool as list_tools offers it:
// it tells the model how many tools wait behind it, and of which servers.
func searchToolDefinition(deferred int, servers []string, defaultLimit int) jsonx.RawMessage {
	desc := "Find tools for a task. " + itoa(deferred) + " more tools are available but not listed"
	if len(servers) > 0 {
		desc += " (servers: " + strings.Join(servers, ", ") + ")"
	}
	desc += ". Describe in a few words what you need to do; the result holds the definitions of the best matching tools, which you can then call by their name."
	def := map[string]any{
		"name":        SearchToolName,
		"title":       "Search tools",
		"description": desc,
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "What the tool should do, in a few words (for example: create a GitHub issue)"},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxSearchLimit, "description": "How many tools to return (default " + itoa(defaultLimit) + ")"},
			},
			"required":             []string{"query"},
			"additionalProperties": false,
		},
		"annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false},
	}
	return jsonx.MustMarshal(def)
}

// callSearchTool answers a call of the host's search tool locally, as a
// server would answer tools/call: the matching tools' definitions in
// structuredContent and, as JSON text, in content. A bad query is a tool
// error (isError), which a model can correct. The completion runs on a
// library goroutine (through the gate unless opts.Inline), never inside
// this call, like any other call's; the call cannot be cancelled (it
// needs no server, only the lists the host caches).
func (h *Host) callSearchTool(arguments []byte, opts core.CallOptions, done DoneFunc) (uint64, *core.Error) {
	var args map[string]any
	if len(arguments) > 0 {
		if jsonx.Unmarshal(arguments, &args) != nil || args == nil {
			return 0, core.Errorf(core.StatusInvalidArgument, "the tool arguments must be a JSON object")
		}
	}
	return h.answerLater("the search_tools call", opts.Inline, done, func() ([]byte, *core.Error) {
		return h.searchToolResult(args), nil
	})
}

// searchToolResult is the tools/call result of the host's search tool.
func (h *Host) searchToolResult(args map[string]any) []byte {
	for _, k := range sortedKeys(args) {
		if k != "query" && k != "limit" {
			return toolError(`search_tools takes "query" and "limit"; ` + jsonQuote(k) + ` is not one of them`)
		}
	}
	query, ok := args["query"].(string)
	if !ok {
		return toolError(`search_tools needs "query": a few words saying what the tool should do`)
	}
	limit := h.cfg.Deferred.MaxResults
	if v, given := args["limit"]; given {
		n, ok := wholeNumber(v)
		if !ok || n < 1 || n > MaxSearchLimit {
			return toolError(`"limit" must be an integer from 1 to ` + itoa(MaxSearchLimit))
		}
		limit = n
	}
	if err := checkQuery(query); err != nil {
		return toolError(err.Message)
	}
	c, _, err := h.toolCatalogue()
	if err != nil {
		return toolError(err.Message)
	}
	hits := c.search(query, SearchOptions{Limit: limit})
	tools := make([]jsonx.RawMessage, 0, len(hits))
	for _, hit := range hits {
		tools = append(tools, c.tools[hit.Tool].raw)
	}
	structured := rawDoc("tools", tools, nil)
	text := string(structured)
	if len(tools) == 0 {
		text = "No tool matches " + jsonQuote(query) + "; try other words."
	}
	// {"content":[{"type":"text","text":text}],"structuredContent":...},
	// built by hand for rawDoc's reason.
	buf := make([]byte, 0, 2*len(structured)+64)
	buf = append(buf, `{"content":[{"type":"text","text":`...)
	buf = jsonx.AppendString(buf, text)
	buf = append(buf, `}],"structuredContent":`...)
	buf = append(buf, structured...)
	return append(buf, '}')
}

func toolError(message string) []byte {
	return jsonx.MustMarshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": message}},
		"isError": true,
	})
}
