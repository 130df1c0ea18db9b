package toolsearch

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSearch feeds arbitrary tool JSON and queries through parsing,
// indexing and ranking: nothing panics, every term is lower case and
// non-empty, hits are bounded, positive and in order.
func FuzzSearch(f *testing.F) {
	f.Add(`{"name":"read_file","description":"Read a file","inputSchema":{"properties":{"path":{"description":"p"}}}}`, "read file")
	f.Add(`{"name":"getHTTPServer2Status","annotations":{"title":"Größe"}}`, "http server status")
	f.Add(`{"name":5,"inputSchema":{"properties":{"a":{"properties":{"b":{"items":{"properties":{"c":{}}}}}}}}}`, "a b c")
	f.Add(`[`, "")
	f.Fuzz(func(t *testing.T, toolJSON, query string) {
		var tools []Tool
		if tl, err := ParseTool([]byte(toolJSON)); err == nil {
			tools = append(tools, tl, Tool{Name: "other", Description: query})
		}
		for _, w := range Words(query) {
			if w == "" || (utf8.ValidString(w) && strings.ToLower(w) != w) {
				t.Fatalf("term %q of %q", w, query)
			}
		}
		hits := New(tools).Search(query, 3)
		if len(hits) > 3 {
			t.Fatalf("%d hits for limit 3", len(hits))
		}
		for i, h := range hits {
			if h.Score <= 0 || h.Tool < 0 || h.Tool >= len(tools) {
				t.Fatalf("hit %+v", h)
			}
			if i > 0 && hits[i-1].Score < h.Score {
				t.Fatalf("hits out of order: %+v", hits)
			}
		}
	})
}
