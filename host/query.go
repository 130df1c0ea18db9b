package host

import (
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// The host's queries are the questions it answers itself, from its
// servers' cached lists: the aggregated lists and the tool search. Each
// has a blocking form (ListTools, SearchTools, ...), which waits while a
// stale list is fetched, and StartQuery, which returns at once and
// completes like a call: on the host's delivery goroutine, in order with
// its events, and within Free's guarantees. A binding waits for it where
// it waits for calls (a completion queue), so the wait can be interrupted
// and never blocks an event loop.

// Query names one of the host's queries; the values are the C ABI's
// LMCP_QUERY_* (never renumbered).
type Query int32

const (
	QueryListTools     Query = 0 // ListTools
	QueryListPrompts   Query = 1 // ListPrompts
	QueryListResources Query = 2 // ListResources
	QuerySearchTools   Query = 3 // SearchTools; args {"query", "limit"?, "servers"?}
)

// StartQuery starts q and returns its host-wide call id at once; done then
// runs exactly once with what q's blocking form returns (its result, or
// its error as a completion's error JSON), or StatusCancelled when the host
// is freed first. args are q's JSON arguments: only QuerySearchTools takes
// any, and they are checked here, so a bad query fails the call instead of
// its completion. A query cannot be cancelled (Cancel answers NotFound):
// it waits for no server call of its own, only for the lists the host
// shares between every caller.
func (h *Host) StartQuery(q Query, args []byte, done DoneFunc) (uint64, *core.Error) {
	var answer func() ([]byte, *core.Error)
	switch q {
	case QueryListTools:
		answer = h.ListTools
	case QueryListPrompts:
		answer = h.ListPrompts
	case QueryListResources:
		answer = h.ListResources
	case QuerySearchTools:
		query, opts, err := h.parseSearchArgs(args)
		if err != nil {
			return 0, err
		}
		answer = func() ([]byte, *core.Error) { return h.SearchTools(query, opts) }
	default:
		return 0, core.Errorf(core.StatusInvalidArgument, "query %d is not one of the host's queries (LMCP_QUERY_LIST_TOOLS ... LMCP_QUERY_SEARCH_TOOLS)", q)
	}
	if q != QuerySearchTools && len(strings.TrimSpace(string(args))) > 0 {
		return 0, core.Errorf(core.StatusInvalidArgument, "the list queries take no arguments")
	}
	return h.answerLater("a host query", false, done, answer)
}

// parseSearchArgs reads QuerySearchTools' arguments: {"query": text} with
// the options of ParseSearchOptions beside it.
func (h *Host) parseSearchArgs(args []byte) (string, SearchOptions, *core.Error) {
	var m map[string]jsonx.RawMessage
	if jsonx.Unmarshal(args, &m) != nil || m == nil {
		return "", SearchOptions{}, invalid("args", `must be a JSON object ({"query": text, "limit"?: n, "servers"?: [...]})`)
	}
	var query string
	if raw, ok := m["query"]; !ok || jsonx.Unmarshal(raw, &query) != nil {
		return "", SearchOptions{}, invalid("args.query", "must be a string: a few words saying what the tool should do")
	}
	delete(m, "query")
	if err := checkQuery(query); err != nil {
		return "", SearchOptions{}, err
	}
	var rest []byte
	if len(m) > 0 {
		rest = jsonx.MustMarshal(m)
	}
	opts, err := h.ParseSearchOptions(rest)
	return query, opts, err
}

// answerLater gives answer a host-wide call id and runs it on a goroutine
// Free waits for; done receives its outcome as a call's completion: through
// the host's gate, in order with its events (unless inline: a blocking
// wrapper's own completion, which runs where answer ends). A panic in
// answer poisons the host and completes the call with StatusInternal; a
// host freed before answer returns completes it with StatusCancelled, as
// Free promises of every accepted call. where names the work in a panic's
// report.
func (h *Host) answerLater(where string, inline bool, done DoneFunc, answer func() ([]byte, *core.Error)) (uint64, *core.Error) {
	if done == nil {
		return 0, core.Errorf(core.StatusInvalidArgument, "a completion callback is required")
	}
	id := h.nextCall.Add(1)
	h.mu.Lock()
	if h.freed {
		h.mu.Unlock()
		return 0, errHostFreed()
	}
	if !inline {
		h.out.Owe() // Free waits until the completion is delivered
	}
	h.bg.Add(1) // under mu: Free marks the host freed before it waits
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		data, err := func() (data []byte, err *core.Error) {
			defer func() {
				if r := recover(); r != nil {
					h.Recovered(r, where)
					data, err = nil, h.Poisoned()
				}
			}()
			return answer()
		}()
		h.mu.Lock()
		if h.freed {
			err = core.Errorf(core.StatusCancelled, "the host was freed")
		}
		h.mu.Unlock()
		st := core.StatusOK
		if err != nil {
			st, data = err.Status, err.JSON()
		}
		if inline {
			done(id, st, data)
			return
		}
		h.out.Push(func() { done(id, st, data) }, callbackgate.Completion)
	}()
	return id, nil
}
