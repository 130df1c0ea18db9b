package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// marshalledResult is a search result as it was marshalled.
type marshalledResult struct {
	Name   string           `json:"name"`
	Server string           `json:"server"`
	Score  float64          `json:"score"`
	Tool   jsonx.RawMessage `json:"tool"`
}

// The documents built by hand around the catalogue's JSON are byte for
// byte what marshalling them gave.
func TestRawDocsAsMarshalled(t *testing.T) {
	tool := jsonx.RawMessage(`{"name":"a__read","server":"a","description":"Reads \"files\" <here>"}`)
	cases := []struct {
		name   string
		got    []byte
		marshd any
	}{
		{"empty list", rawDoc("tools", nil, nil), map[string]any{"tools": []jsonx.RawMessage{}}},
		{"entries", rawDoc("tools", []jsonx.RawMessage{tool, tool}, nil), map[string]any{"tools": []jsonx.RawMessage{tool, tool}}},
		{"with errors", rawDoc("results", []jsonx.RawMessage{tool}, map[string]string{"b": "down \"now\"", "a": "x"}),
			map[string]any{"results": []jsonx.RawMessage{tool}, "errors": map[string]string{"b": "down \"now\"", "a": "x"}}},
		{"search result", searchResult(&catalogueTool{name: "a__read", srv: &server{name: "a"}, raw: tool}, 1.234567),
			marshalledResult{"a__read", "a", 1.2346, tool}},
		{"zero score", searchResult(&catalogueTool{name: "b", srv: &server{name: "s"}, raw: tool}, 0),
			marshalledResult{"b", "s", 0, tool}},
		{"large score", searchResult(&catalogueTool{name: "b", srv: &server{name: "s"}, raw: tool}, 123.45678),
			marshalledResult{"b", "s", 123.4568, tool}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, string(jsonx.MustMarshal(c.marshd)), string(c.got))
		})
	}
}
