package core

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cachingServer is a modern fake whose list and read results carry the
// given caching hints; every answer is numbered, so a test sees whether a
// result came from the server or from the cache.
func cachingServer(t *testing.T, ttl int, scope string) (*fakeServer, *atomic.Int64) {
	s := newModernServer(t)
	var n atomic.Int64
	hints := func(res map[string]any) map[string]any {
		res["ttlMs"], res["cacheScope"], res["resultType"] = ttl, scope, "complete"
		return res
	}
	s.handle("tools/list", func(*fakeServer, wireMsg) reply {
		return reply{result: hints(map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("t%d", n.Add(1)), "inputSchema": map[string]any{"type": "object"}}}})}
	})
	s.handle("resources/read", func(_ *fakeServer, m wireMsg) reply {
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return reply{result: hints(map[string]any{"contents": []any{map[string]any{"uri": p.URI, "text": fmt.Sprintf("v%d", n.Add(1))}}})}
	})
	return s, &n
}

func firstToolName(t *testing.T, res []byte) string {
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(res, &r))
	require.NotEmpty(t, r.Tools)
	return r.Tools[0].Name
}

// A fresh result is served without a round trip; no_cache, a list_changed
// notification and the TTL's end each send the request again.
func TestResultCacheFreshness(t *testing.T) {
	cases := []struct {
		name  string
		ttl   int
		scope string
		// between runs between the two calls; second is the second call's
		// options.
		between func(s *fakeServer)
		second  CallOptions
		want    string // the second call's tool name
	}{
		{name: "fresh public result", ttl: 60000, scope: "public", want: "t1"},
		{name: "fresh private result, same context", ttl: 60000, scope: "private", want: "t1"},
		{name: "ttl 0 is stale", ttl: 0, scope: "public", want: "t2"},
		{name: "unknown scope is not cached", ttl: 60000, scope: "shared", want: "t2"},
		{name: "no_cache bypasses", ttl: 60000, scope: "public", second: CallOptions{NoCache: true}, want: "t2"},
		{name: "expired", ttl: 30, scope: "public", between: func(*fakeServer) { time.Sleep(80 * time.Millisecond) }, want: "t2"},
		{name: "list_changed invalidates", ttl: 60000, scope: "public", between: func(s *fakeServer) {
			s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
		}, want: "t2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := cachingServer(t, tc.ttl, tc.scope)
			c, err := connectWith(t, s, modernOptions(ModeModern), nil)
			require.Nil(t, errOrNil(err))
			ev := recordEvents(c)
			res, cerr := c.CallSync("tools/list", nil, CallOptions{})
			require.Nil(t, errOrNil(cerr))
			require.Equal(t, "t1", firstToolName(t, res))
			if tc.between != nil {
				tc.between(s)
				if tc.name == "list_changed invalidates" {
					_, ok := ev.wait("notification")
					require.True(t, ok)
				}
			}
			res, cerr = c.CallSync("tools/list", nil, tc.second)
			require.Nil(t, errOrNil(cerr))
			require.Equal(t, tc.want, firstToolName(t, res))
			wantSent := 1
			if tc.want == "t2" {
				wantSent = 2
			}
			require.Len(t, s.requests("tools/list"), wantSent)
		})
	}
}

// The cache key is the method and the params: another uri is another
// entry, _meta (a progress token) is not part of the key, and
// resources/updated drops only the entry of its uri.
func TestResultCacheKeyAndUpdated(t *testing.T) {
	s, _ := cachingServer(t, 60000, "public")
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	ev := recordEvents(c)
	read := func(uri string, opts CallOptions) string {
		res, cerr := c.CallSync("resources/read", []byte(`{"uri":"`+uri+`"}`), opts)
		require.Nil(t, errOrNil(cerr))
		var r struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		require.NoError(t, json.Unmarshal(res, &r))
		return r.Contents[0].Text
	}
	a1, b1 := read("file:///a", CallOptions{}), read("file:///b", CallOptions{})
	require.NotEqual(t, a1, b1)
	require.Equal(t, a1, read("file:///a", CallOptions{Progress: true}), "_meta is not part of the key")
	s.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{"uri": "file:///a"}})
	_, ok := ev.wait("notification")
	require.True(t, ok)
	require.NotEqual(t, a1, read("file:///a", CallOptions{}), "the updated uri is fetched again")
	require.Equal(t, b1, read("file:///b", CallOptions{}), "another uri stays cached")
	require.Len(t, s.requests("resources/read"), 3)
}

// A private result is never served to another authorization context, and
// a result fetched under one context is not stored once the context
// changed; public results are shared.
func TestResultCachePrivateScope(t *testing.T) {
	for _, scope := range []string{"private", "public"} {
		t.Run(scope, func(t *testing.T) {
			s, _ := cachingServer(t, 60000, scope)
			var token atomic.Value
			token.Store("alice")
			opts := modernOptions(ModeModern)
			opts.AuthContext = func() string { return token.Load().(string) }
			c, err := connectWith(t, s, opts, nil)
			require.Nil(t, errOrNil(err))
			list := func() string {
				res, cerr := c.CallSync("tools/list", nil, CallOptions{})
				require.Nil(t, errOrNil(cerr))
				return firstToolName(t, res)
			}
			require.Equal(t, "t1", list())
			token.Store("bob")
			bob := list()
			token.Store("alice")
			alice := list()
			if scope == "private" {
				require.Equal(t, "t2", bob, "bob never sees alice's private result")
				require.Equal(t, "t1", alice, "alice's entry is still hers")
			} else {
				require.Equal(t, "t1", bob)
				require.Equal(t, "t1", alice)
			}
		})
	}
}

// Parallel calls on a cached method all get a whole, correct result, and
// an invalidation racing with them never leaves a stale entry (run with
// -race).
func TestResultCacheParallel(t *testing.T) {
	s, n := cachingServer(t, 60000, "public")
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	_, cerr := c.CallSync("tools/list", nil, CallOptions{})
	require.Nil(t, errOrNil(cerr))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%16 == 0 {
				c.cacheInvalidate("notifications/tools/list_changed", nil)
			}
			res, cerr := c.CallSync("tools/list", nil, CallOptions{})
			if cerr != nil {
				errs <- cerr
				return
			}
			var r struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			if jerr := json.Unmarshal(res, &r); jerr != nil || len(r.Tools) != 1 {
				errs <- fmt.Errorf("bad result %s", res)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		require.NoError(t, e)
	}
	require.Less(t, n.Load(), int64(65), "some calls were served from the cache")
	c.cacheInvalidate("notifications/tools/list_changed", nil)
	res, cerr := c.CallSync("tools/list", nil, CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Equal(t, fmt.Sprintf("t%d", n.Load()), firstToolName(t, res), "after an invalidation the result is the server's newest")
}

// The handshake's server/discover answers a host's server/discover while
// fresh; the process-wide counters see hits and misses.
func TestResultCacheDiscoverAndStats(t *testing.T) {
	s := newModernServer(t)
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	hits0, _ := CacheStats()
	res, cerr := c.CallSync("server/discover", nil, CallOptions{})
	require.Nil(t, errOrNil(cerr))
	require.Contains(t, string(res), "supportedVersions")
	require.Len(t, s.requests("server/discover"), 1, "no second round trip")
	hits1, _ := CacheStats()
	require.Greater(t, hits1, hits0)
}

// An MRTR retry's result is never cached: it depends on inputs outside
// the key.
func TestResultCacheSkipsMRTR(t *testing.T) {
	s := newModernServer(t)
	var n atomic.Int64
	s.handle("resources/read", func(_ *fakeServer, m wireMsg) reply {
		if _, ok := params(t, m)["requestState"]; !ok {
			return reply{result: map[string]any{"resultType": "input_required", "requestState": "s1"}}
		}
		return reply{result: map[string]any{"resultType": "complete", "ttlMs": 60000, "cacheScope": "public", "contents": []any{map[string]any{"uri": "x", "text": fmt.Sprint(n.Add(1))}}}}
	})
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	for i := 0; i < 2; i++ {
		_, cerr := c.CallSync("resources/read", []byte(`{"uri":"x"}`), CallOptions{})
		require.Nil(t, errOrNil(cerr))
	}
	require.Len(t, s.requests("resources/read"), 4)
}
