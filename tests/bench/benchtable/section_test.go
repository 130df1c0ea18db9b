package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReplaceSection(t *testing.T) {
	full := "# table\n\nrows\n"
	cases := []struct {
		name, doc, title, body, want string
	}{
		{"appended to the table", full, "S", "## S\nv1\n",
			full + "\n<!-- section: S -->\n## S\nv1\n<!-- end section: S -->\n"},
		{"replaced in place", "a\n<!-- section: S -->\nold\n<!-- end section: S -->\nb\n", "S", "new",
			"a\n<!-- section: S -->\nnew\n<!-- end section: S -->\nb\n"},
		{"another title is kept", "<!-- section: T -->\nt\n<!-- end section: T -->\n", "S", "s",
			"<!-- section: T -->\nt\n<!-- end section: T -->\n\n<!-- section: S -->\ns\n<!-- end section: S -->\n"},
		{"into an empty file", "", "S", "s", "<!-- section: S -->\ns\n<!-- end section: S -->\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, replaceSection(c.doc, c.title, c.body))
		})
	}
}

// TestFullRunKeepsSections: what make bench rewrites keeps the sections
// other targets wrote.
func TestFullRunKeepsSections(t *testing.T) {
	old := replaceSection("# old table\n", "Token stores", "## Token stores\nrow\n")
	kept := keptSections(old)
	require.Equal(t, "\n<!-- section: Token stores -->\n## Token stores\nrow\n<!-- end section: Token stores -->\n", kept)
	require.Empty(t, keptSections("# no sections\n"))
}

func TestGoBenchTable(t *testing.T) {
	out := `goos: linux
BenchmarkRefreshCycle/memory-2         	     300	      1000 ns/op
BenchmarkRefreshCycle/file-2           	     300	    500000 ns/op
BenchmarkRefreshCycle/memory-2         	     300	      3000 ns/op
BenchmarkRefreshCycle/file-2           	     300	    700000 ns/op
BenchmarkRefreshCycle/file-2           	     300	    600000.5 ns/op
PASS
`
	runs, order, err := goBenchRuns(strings.NewReader(out))
	require.NoError(t, err)
	require.Equal(t, []string{"BenchmarkRefreshCycle/memory", "BenchmarkRefreshCycle/file"}, order)
	require.Equal(t, []float64{500000, 700000, 600000.5}, runs["BenchmarkRefreshCycle/file"])
	table := goBenchTable("Token stores", "note.", runs, order, time.Unix(0, 0))
	require.Contains(t, table, "| RefreshCycle/memory | 2 | 0.002 | 0.000 |")
	require.Contains(t, table, "| RefreshCycle/file | 3 | 0.600 | 0.598 | 0.500 | 0.700 | 0.500 | 0.700 |")
	require.Contains(t, table, " note. ")
}
