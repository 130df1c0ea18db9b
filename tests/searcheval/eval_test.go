package searcheval

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/tests/internal/fixturebin"
)

var replayBin, fixtureBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "searcheval")
	if err == nil {
		replayBin, err = BuildReplayServer(dir)
	}
	var remove func()
	if err == nil {
		fixtureBin, remove, err = fixturebin.Build("../fixtures/mcpfixture")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	remove()
	os.RemoveAll(dir)
	os.Exit(code)
}

func startHost(tb testing.TB, cfg []byte, err error) *host.Host {
	tb.Helper()
	require.NoError(tb, err)
	h, closeHost, err := Start(cfg)
	require.NoError(tb, err)
	tb.Cleanup(closeHost)
	return h
}

// TestSearchOnRealCatalogues keeps the figures make bench reports from
// regressing: every tool the query set names exists in the catalogue,
// recall at 5 stays above its floor (0.938 when the set was written), and
// the deferred list is a small fraction of the full one.
func TestSearchOnRealCatalogues(t *testing.T) {
	qs, err := LoadQueries()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(qs), 50)
	cfg, err := RealConfig(replayBin, fixtureBin, false)
	h := startHost(t, cfg, err)

	raw, cerr := h.ListTools()
	require.Nil(t, cerr)
	var doc struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	names := map[string]bool{}
	for _, tl := range doc.Tools {
		names[tl.Name] = true
	}
	require.Greater(t, len(names), 100)
	for _, q := range qs {
		t.Run(q.Query, func(t *testing.T) {
			require.NotEmpty(t, q.Want)
			for _, w := range q.Want {
				require.True(t, names[w], "the query set names %s, which no server offers", w)
			}
		})
	}

	outs, err := Rank(h, qs)
	require.NoError(t, err)
	s := Summarize(outs)
	require.GreaterOrEqual(t, s.Recall[2], 0.9, "recall at 5")
	require.GreaterOrEqual(t, s.Hit[2], 0.9, "hit at 5")
	require.LessOrEqual(t, s.Recall[0], s.Recall[1])
	require.LessOrEqual(t, s.Recall[1], s.Recall[2])

	full, _, err := ListBytes(h)
	require.NoError(t, err)
	cfg, err = RealConfig(replayBin, fixtureBin, true)
	deferred, n, err := ListBytes(startHost(t, cfg, err))
	require.NoError(t, err)
	require.Equal(t, 1, n, "only search_tools")
	require.Less(t, deferred*10, full)
}

// BenchmarkHostSearchTools1000 is one lmcp_host_search_tools-equivalent
// search (host.SearchTools: catalogue check, ranking, result JSON) of a
// 1,000-tool catalogue made of real tools; the bound is 1 ms,
// measured here, never asserted.
func BenchmarkHostSearchTools1000(b *testing.B) {
	qs, err := LoadQueries()
	require.NoError(b, err)
	cfg, err := ThousandConfig(replayBin, false)
	h := startHost(b, cfg, err)
	_, cerr := h.SearchTools("warm up", host.SearchOptions{Limit: 5})
	require.Nil(b, cerr)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, cerr := h.SearchTools(qs[i%len(qs)].Query, host.SearchOptions{Limit: 5}); cerr != nil {
			b.Fatal(cerr.Message)
		}
	}
}
