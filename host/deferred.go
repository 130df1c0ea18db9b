package host

import (
	"path"
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
)

// Deferred tool exposure ("deferred_tools"): for an application that hands
// the host's tools to a model, list_tools offers only the tools named as
// always loaded plus one tool, search_tools, that the host answers itself
// with the definitions of the tools matching a query. The model loads what
// its task needs instead of paying, in context, for every tool of every
// server.

// SearchToolName is the name of the host's own search tool in a deferred
// list_tools.
const SearchToolName = "search_tools"

// Bounds of a search's number of results.
const (
	DefaultSearchLimit = 10 // lmcp_host_search_tools without "limit"
	DefaultDeferLimit  = 5  // a search_tools call without "limit"
	MaxSearchLimit     = 100
)

// DeferredConfig is the "deferred_tools" host option.
type DeferredConfig struct {
	// AlwaysLoaded are globs (path.Match) over the host's tool names:
	// the tools list_tools keeps offering.
	AlwaysLoaded []string
	// MaxResults is how many definitions a search_tools call returns
	// when the model gives no "limit".
	MaxResults int
}

// alwaysLoaded reports whether a tool named name stays in list_tools.
func (d *DeferredConfig) alwaysLoaded(name string) bool {
	for _, g := range d.AlwaysLoaded {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// parseDeferred validates "deferred_tools": {"always_loaded": [glob, ...],
// "max_results": n}.
func parseDeferred(v any) (*DeferredConfig, *core.Error) {
	const at = "config.deferred_tools"
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, `must be a JSON object ({"always_loaded": [tool names or globs], "max_results": n})`)
	}
	d := &DeferredConfig{MaxResults: DefaultDeferLimit}
	for k, fv := range m {
		switch k {
		case "always_loaded":
			list, ok := fv.([]any)
			if !ok {
				return nil, invalid(at+".always_loaded", "must be an array of tool names or globs")
			}
			for i, e := range list {
				g, ok := e.(string)
				if !ok || strings.TrimSpace(g) == "" {
					return nil, invalid(at+".always_loaded["+itoa(i)+"]", "must be a non-empty string")
				}
				if _, err := path.Match(g, ""); err != nil {
					return nil, invalid(at+".always_loaded["+itoa(i)+"]", "is not a valid glob: "+err.Error())
				}
				d.AlwaysLoaded = append(d.AlwaysLoaded, g)
			}
		case "max_results":
			n, ok := wholeNumber(fv)
			if !ok || n < 1 || n > MaxSearchLimit {
				return nil, invalid(at+".max_results", "must be an integer from 1 to "+itoa(MaxSearchLimit))
			}
			d.MaxResults = n
		default:
			return nil, invalid(at+"."+k, "is not a known field (known: always_loaded, max_results)")
		}
	}
	return d, nil
}

// wholeNumber reads a decoded JSON number that is an integer.
func wholeNumber(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		if n != float64(int(n)) {
			return 0, false
		}
		return int(n), true
	case int:
		return n, true
	case int64:
		return int(n), true
	}
	if num, ok := v.(interface{ Int64() (int64, error) }); ok {
		i, err := num.Int64()
		return int(i), err == nil
	}
	return 0, false
}
