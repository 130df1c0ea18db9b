package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPySDKFlag(t *testing.T) {
	cases := []struct {
		name, value string
		want        pySDK
		wantErr     string
	}{
		{"version and interpreter", "1.30.0=/v/bin/python", pySDK{"1.30.0", "/v/bin/python"}, ""},
		{"no interpreter", "1.30.0=", pySDK{}, "want VERSION=PYTHON"},
		{"no version", "=/v/bin/python", pySDK{}, "want VERSION=PYTHON"},
		{"no equals sign", "1.30.0", pySDK{}, "want VERSION=PYTHON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var f pySDKFlag
			err := f.Set(c.value)
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				require.Empty(t, f)
				return
			}
			require.NoError(t, err)
			require.Equal(t, pySDKFlag{c.want}, f)
		})
	}
}

func TestPySDKClients(t *testing.T) {
	o := options{pySDKs: pySDKFlag{{"1.30.0", "/a/python"}, {"2.3.0", "/b/python"}}, skip: map[string]bool{}}
	cs := pySDKClients(o)
	require.Len(t, cs, 2)
	require.Equal(t, "Python SDK mcp 1.30.0", cs[0].name)
	require.Equal(t, "/b/python", cs[1].argv[0])
	require.Equal(t, "anchor", cs[1].kind, "an anchor is never a best peer")
	o.skip["pysdk"] = true
	require.Empty(t, pySDKClients(o))
}

func TestPyAnchorTable(t *testing.T) {
	cs := []client{
		{name: "LemonMCP, Python sync", kind: "ours", py: true},
		{name: "Python SDK mcp 1.30.0", kind: "anchor"},
		{name: "Python SDK mcp 2.3.0", kind: "anchor"},
		{name: "go-sdk v1.8.0", kind: "peer"},
	}
	groups := []group{{transport: "stdio", server: "minimal server"}}
	round := func(p50, cps, rss, con float64) []figures {
		return []figures{{"p50_us": p50, "cps": cps, "rss_kb": rss, "connect_us": con}}
	}
	cases := []struct {
		name  string
		calls [][][]figures
		want  []string // substrings of the output, in order
	}{
		{
			"ratios to each release",
			[][][]figures{{round(50, 30000, 40000, 1000), round(100, 10000, 80000, 2000), round(200, 6000, 50000, 4000), round(60, 20000, 17000, 500)}},
			[]string{"| p50 ×mcp 1.30.0 | p50 ×mcp 2.3.0 | calls/s ×mcp 1.30.0 |",
				"| stdio, minimal server | LemonMCP, Python sync | 0.50× | 0.25× | 3.00× | 5.00× | 0.50× | 0.80× | 0.50× | 0.25× |"},
		},
		{
			"a failed anchor shows a dash",
			[][][]figures{{round(50, 30000, 40000, 1000), nil, round(200, 6000, 50000, 4000), nil}},
			[]string{"| LemonMCP, Python sync | – | 0.25× | – | 5.00× |"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			pyAnchorTable(&b, groups, cs, c.calls)
			out := b.String()
			at := 0
			for _, w := range c.want {
				i := strings.Index(out[at:], w)
				require.GreaterOrEqual(t, i, 0, "want %q in\n%s", w, out)
				at += i + len(w)
			}
		})
	}
	t.Run("no anchors: no section", func(t *testing.T) {
		var b strings.Builder
		pyAnchorTable(&b, groups, cs[:1], [][][]figures{{round(50, 30000, 40000, 1000)}})
		require.Empty(t, b.String())
	})
}
