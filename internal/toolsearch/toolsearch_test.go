package toolsearch

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWords(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"snake_case", "read_text_file", []string{"read", "text", "fil"}},
		{"camelCase", "readMultipleFiles", []string{"read", "multipl", "fil"}},
		{"kebab-case", "list-pull-requests", []string{"list", "pull", "request"}},
		{"acronym hump", "getHTTPServerStatus", []string{"get", "http", "server", "status"}},
		{"digits", "s3Bucket v2", []string{"s", "3", "bucket", "v", "2"}},
		{"prefixed host name", "github__create_issue", []string{"github", "creat", "issu"}},
		{"stop words dropped", "Search for the files in a directory", []string{"search", "fil", "directory"}},
		{"plural -ies", "Directories and repositories", []string{"directory", "repository"}},
		{"-ing and -ed meet the stem", "creating created create", []string{"creat", "creat", "creat"}},
		{"doubled consonant", "running", []string{"run"}},
		{"non-ASCII kept whole", "Größe ändern", []string{"größe", "ändern"}},
		{"only punctuation", "-- __ !?", nil},
		{"empty", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, Words(c.in))
		})
	}
}

func catalogue() []Tool {
	return []Tool{
		{Name: "fs__read_file", OriginalName: "read_file", Server: "fs", Description: "Read the complete contents of a file from the file system.", Params: []Param{{"path", "Path of the file"}}},
		{Name: "fs__write_file", OriginalName: "write_file", Server: "fs", Description: "Create a new file or overwrite an existing file with new content.", Params: []Param{{"path", ""}, {"content", "Text to write"}}},
		{Name: "fs__list_directory", OriginalName: "list_directory", Server: "fs", Description: "Get a detailed listing of all files and directories in a specified path."},
		{Name: "github__create_issue", OriginalName: "create_issue", Server: "github", Description: "Create a new issue in a GitHub repository", Params: []Param{{"owner", "Repository owner"}, {"repo", "Repository name"}, {"title", "Issue title"}}},
		{Name: "github__search_repositories", OriginalName: "search_repositories", Server: "github", Description: "Search for GitHub repositories", Params: []Param{{"query", "Search query"}}},
		{Name: "time__get_current_time", OriginalName: "get_current_time", Server: "time", Description: "Get current time in a specific timezone", Params: []Param{{"timezone", "IANA timezone name"}}},
		{Name: "time__convert_time", OriginalName: "convert_time", Server: "time", Description: "Convert time between timezones"},
	}
}

func TestSearchRanks(t *testing.T) {
	tools := catalogue()
	ix := New(tools)
	cases := []struct {
		name, query string
		top         string
	}{
		{"name words", "read file", "fs__read_file"},
		{"description words", "overwrite existing content", "fs__write_file"},
		{"stemmed plural", "open an issue on a repository", "github__create_issue"},
		{"camelCase query meets snake_case name", "listDirectory", "fs__list_directory"},
		{"parameter names", "timezone", "time__get_current_time"},
		{"server name", "github repositories", "github__search_repositories"},
		{"converting", "converting time between zones", "time__convert_time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits := ix.Search(c.query, 3)
			require.NotEmpty(t, hits)
			require.Equal(t, c.top, tools[hits[0].Tool].Name, "hits: %v", hits)
			for i := 1; i < len(hits); i++ {
				require.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score)
			}
		})
	}
}

func TestSearchEdges(t *testing.T) {
	ix := New(catalogue())
	cases := []struct {
		name, query string
		limit, want int
	}{
		{"no common word", "kubernetes pod", 5, 0},
		{"only stop words", "the of and", 5, 0},
		{"empty", "", 5, 0},
		{"limit cuts", "file", 1, 1},
		{"zero limit", "file", 0, 0},
		{"limit above matches", "file", 100, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Len(t, ix.Search(c.query, c.limit), c.want)
		})
	}
	t.Run("empty index", func(t *testing.T) {
		require.Empty(t, New(nil).Search("file", 5))
	})
}

func TestSearchTiesByName(t *testing.T) {
	// Three tools identical but for their names: equal scores, so the
	// order is by name, whatever the catalogue's order.
	tools := []Tool{
		{Name: "c__echo", OriginalName: "echo", Server: "c", Description: "Echo the message back"},
		{Name: "a__echo", OriginalName: "echo", Server: "a", Description: "Echo the message back"},
		{Name: "b__echo", OriginalName: "echo", Server: "b", Description: "Echo the message back"},
	}
	ix := New(tools)
	hits := ix.Search("echo message", 10)
	require.Len(t, hits, 3)
	var names []string
	for _, h := range hits {
		names = append(names, tools[h.Tool].Name)
	}
	require.Equal(t, []string{"a__echo", "b__echo", "c__echo"}, names)
	require.Equal(t, hits[0].Score, hits[2].Score)
}

func TestSearchDeterministic(t *testing.T) {
	tools := synthetic(300)
	want := New(tools).Search("create record in table with filter", 20)
	require.NotEmpty(t, want)
	for i := 0; i < 5; i++ {
		// A fresh index each time: map iteration order must not matter.
		require.Equal(t, want, New(tools).Search("filter table record in create with", 20))
	}
}

func TestParseTool(t *testing.T) {
	cases := []struct {
		name, raw string
		want      Tool
		err       bool
	}{
		{
			name: "full tool",
			raw: `{"name":"h__q","original_name":"q","server":"h","description":"Run a query","annotations":{"title":"Query"},
				"inputSchema":{"type":"object","properties":{"sql":{"type":"string","description":"The SQL"},
				"mode":{"enum":["read","write"]},"opts":{"type":"object","properties":{"limit":{"description":"Most rows"}}},
				"rows":{"type":"array","items":{"type":"object","properties":{"id":{}}}}}}}`,
			want: Tool{Name: "h__q", OriginalName: "q", Server: "h", Title: "Query", Description: "Run a query", Params: []Param{
				{"mode", " read write"}, {"opts", ""}, {"opts.limit", " Most rows"}, {"rows", ""}, {"rows.id", ""}, {"sql", " The SQL"},
			}},
		},
		{name: "title wins over annotations", raw: `{"name":"t","title":"A","annotations":{"title":"B"}}`, want: Tool{Name: "t", Title: "A"}},
		{name: "odd member types are ignored", raw: `{"name":"t","description":5,"inputSchema":{"properties":{"x":true}}}`, want: Tool{Name: "t", Params: []Param{{"x", ""}}}},
		{name: "not an object", raw: `[1]`, err: true},
		{name: "not JSON", raw: `{`, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTool([]byte(c.raw))
			if c.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

// synthetic builds n distinct tools of a plausible shape: 20 servers, verbs
// over nouns, descriptions of a dozen words, three parameters.
func synthetic(n int) []Tool {
	verbs := []string{"create", "get", "list", "update", "delete", "search", "read", "write", "move", "export", "import", "run"}
	nouns := []string{"issue", "file", "record", "table", "message", "channel", "page", "user", "commit", "branch", "event", "document", "image", "query", "bucket", "secret", "job", "invoice", "ticket", "note"}
	words := []string{"with", "filter", "optional", "returns", "matching", "items", "the", "given", "identifier", "for", "current", "account", "in", "workspace", "sorted", "by", "date", "limit"}
	tools := make([]Tool, n)
	for i := range tools {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		server := fmt.Sprintf("server%02d", i%20)
		desc := fmt.Sprintf("%s a %s", v, o)
		for j := 0; j < 12; j++ {
			desc += " " + words[(i*7+j*3)%len(words)]
		}
		tools[i] = Tool{
			Name: fmt.Sprintf("%s__%s_%s_%d", server, v, o, i), OriginalName: fmt.Sprintf("%s_%s_%d", v, o, i), Server: server,
			Description: desc,
			Params:      []Param{{"id", "the " + o + " identifier"}, {"limit", "most results"}, {"filter", "a " + words[i%len(words)] + " expression"}},
		}
	}
	return tools
}

// BenchmarkSearch1000 is one query against 1,000 tools (the bound:
// under 1 ms; measured here, never asserted).
func BenchmarkSearch1000(b *testing.B) {
	ix := New(synthetic(1000))
	queries := []string{"create a ticket", "search records in the table with a filter", "list files", "export the invoice for the current account sorted by date", "delete"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = ix.Search(queries[i%len(queries)], 10)
	}
}

// BenchmarkIndex1000 is building the index of 1,000 tools (done once per
// change of the catalogue).
func BenchmarkIndex1000(b *testing.B) {
	tools := synthetic(1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = New(tools)
	}
}
