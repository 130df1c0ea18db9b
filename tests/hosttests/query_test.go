package hosttests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

// queryOutcome is one completion of StartQuery.
type queryOutcome struct {
	id     uint64
	status core.Status
	data   []byte
}

// startQuery starts q and returns its id and where its completion arrives.
func startQuery(t *testing.T, h *host.Host, q host.Query, args string) (uint64, <-chan queryOutcome) {
	t.Helper()
	ch := make(chan queryOutcome, 1)
	var a []byte
	if args != "" {
		a = []byte(args)
	}
	id, err := h.StartQuery(q, a, func(id uint64, st core.Status, data []byte) { ch <- queryOutcome{id, st, data} })
	require.Nil(t, errOrNil(err))
	require.NotZero(t, id)
	return id, ch
}

// TestHostQueriesAnswerAsTheBlockingForms: each query completes, through
// the host's gate, with what its blocking form returns.
func TestHostQueriesAnswerAsTheBlockingForms(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer("")))
	require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
	searchOpts, perr := h.ParseSearchOptions([]byte(`{"limit":2}`))
	require.Nil(t, errOrNil(perr))
	cases := []struct {
		name     string
		query    host.Query
		args     string
		blocking func() ([]byte, *core.Error)
	}{
		{"list_tools", host.QueryListTools, "", h.ListTools},
		{"list_prompts", host.QueryListPrompts, "", h.ListPrompts},
		{"list_resources", host.QueryListResources, "", h.ListResources},
		{"search_tools", host.QuerySearchTools, `{"query":"adds two numbers","limit":2}`, func() ([]byte, *core.Error) { return h.SearchTools("adds two numbers", searchOpts) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.blocking()
			require.Nil(t, errOrNil(err))
			id, ch := startQuery(t, h, c.query, c.args)
			select {
			case o := <-ch:
				require.Equal(t, id, o.id)
				require.Equal(t, core.StatusOK, o.status, string(o.data))
				require.JSONEq(t, string(want), string(o.data))
			case <-time.After(30 * time.Second):
				t.Fatal("the query never completed")
			}
			require.Equal(t, core.StatusNotFound, h.Cancel(id).Status, "a query cannot be cancelled")
		})
	}
}

// TestHostQueryArgumentsAreChecked: a bad query fails StartQuery, naming
// the problem, and nothing completes.
func TestHostQueryArgumentsAreChecked(t *testing.T) {
	h, _ := newHost(t, fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer("")))
	cases := []struct {
		name   string
		query  host.Query
		args   string
		status core.Status
		says   string
	}{
		{"unknown query", host.Query(9), "", core.StatusInvalidArgument, "query 9"},
		{"a list with arguments", host.QueryListTools, `{"query":"x"}`, core.StatusInvalidArgument, "take no arguments"},
		{"search without arguments", host.QuerySearchTools, "", core.StatusInvalidArgument, "args"},
		{"search without a query", host.QuerySearchTools, `{"limit":3}`, core.StatusInvalidArgument, "args.query"},
		{"search of common words", host.QuerySearchTools, `{"query":"the"}`, core.StatusInvalidArgument, "no word"},
		{"search of an unknown server", host.QuerySearchTools, `{"query":"add","servers":["zz"]}`, core.StatusNotFound, `"zz"`},
		{"search with a bad limit", host.QuerySearchTools, `{"query":"add","limit":0}`, core.StatusInvalidArgument, "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args []byte
			if c.args != "" {
				args = []byte(c.args)
			}
			called := make(chan struct{}, 1)
			_, err := h.StartQuery(c.query, args, func(uint64, core.Status, []byte) { called <- struct{}{} })
			require.NotNil(t, err)
			require.Equal(t, c.status, err.Status, err.Message)
			require.Contains(t, err.Message, c.says)
			require.Empty(t, called)
		})
	}
	t.Run("no completion callback", func(t *testing.T) {
		_, err := h.StartQuery(host.QueryListTools, nil, nil)
		require.NotNil(t, err)
		require.Equal(t, core.StatusInvalidArgument, err.Status)
	})
}

// TestHostQueryAndFree: a query in flight when the host is freed (its
// server answers lists only after a minute) completes with
// StatusCancelled before Free returns, and Free does not wait for the
// server; a completion callback may free its own host; a freed host
// refuses new queries.
func TestHostQueryAndFree(t *testing.T) {
	t.Run("a query in flight completes with cancelled", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "stdin.log")
		slow := fmt.Sprintf(`{"mcpServers":{"slow":%s}}`, stdioServer("", "-list-delay-ms", "60000", "-log-file", log))
		h, err := host.Parse([]byte(slow), "test")
		require.Nil(t, errOrNil(err))
		require.Nil(t, errOrNil(h.Connect()))
		require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
		_, ch := startQuery(t, h, host.QueryListTools, "")
		require.Eventually(t, func() bool {
			b, _ := os.ReadFile(log)
			return strings.Contains(string(b), `"tools/list"`)
		}, 30*time.Second, 10*time.Millisecond, "the list never reached the server")
		h.Free()
		select {
		case o := <-ch:
			require.Equal(t, core.StatusCancelled, o.status, string(o.data))
			var e struct {
				Message string `json:"message"`
			}
			require.NoError(t, json.Unmarshal(o.data, &e))
			require.Contains(t, e.Message, "freed")
		default:
			t.Fatal("Free returned before the query completed")
		}
		_, qerr := h.StartQuery(host.QueryListTools, nil, func(uint64, core.Status, []byte) {})
		require.NotNil(t, qerr)
		require.Equal(t, core.StatusInvalidHandle, qerr.Status)
	})
	t.Run("free from inside the completion", func(t *testing.T) {
		h, err := host.Parse([]byte(fmt.Sprintf(`{"mcpServers":{"a":%s}}`, stdioServer(""))), "test")
		require.Nil(t, errOrNil(err))
		require.Nil(t, errOrNil(h.Connect()))
		require.Nil(t, errOrNil(h.WaitReady(10*time.Second)))
		freed := make(chan core.Status, 1)
		_, qerr := h.StartQuery(host.QueryListTools, nil, func(_ uint64, st core.Status, _ []byte) {
			h.FreeFrom(core.FreeCaller{Callbacks: 1, Delivering: true})
			freed <- st
		})
		require.Nil(t, errOrNil(qerr))
		select {
		case st := <-freed:
			require.Equal(t, core.StatusOK, st)
		case <-time.After(30 * time.Second):
			t.Fatal("the completion that frees its host never returned")
		}
	})
}
