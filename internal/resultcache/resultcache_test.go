package resultcache

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

func mustKey(t *testing.T, method, params string) (string, string) {
	t.Helper()
	key, uri, ok := Key(method, []byte(params))
	require.True(t, ok, "%s %s is cacheable", method, params)
	return key, uri
}

func TestKey(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		a, b     string // two params
		same     bool   // whether a and b have one key
		wantURI  string // of a
		notCache bool   // a is not cacheable
	}{
		{"_meta aside", "tools/list", `{"cursor":"c","_meta":{"x":1}}`, `{"cursor":"c"}`, true, "", false},
		{"member order aside", "resources/read", `{"uri":"u:1","x":{"b":1,"a":2}}`, `{"x":{"a":2,"b":1},"uri":"u:1"}`, true, "u:1", false},
		{"no params is the empty object", "server/discover", ``, `{}`, true, "", false},
		{"other params, other key", "tools/list", `{"cursor":"a"}`, `{"cursor":"b"}`, false, "", false},
		{"a method without hints", "tools/call", `{}`, `{}`, false, "", true},
		{"params that are not an object", "tools/list", `[1]`, `{}`, false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, uri, ok := Key(tt.method, []byte(tt.a))
			require.Equal(t, !tt.notCache, ok)
			if tt.notCache {
				return
			}
			require.Equal(t, tt.wantURI, uri)
			kb, _ := mustKey(t, tt.method, tt.b)
			require.Equal(t, tt.same, ka == kb, "%q vs %q", ka, kb)
		})
	}
}

func result(ttl any, scope string) []byte {
	return []byte(fmt.Sprintf(`{"tools":[],"ttlMs":%v,"cacheScope":%q}`, ttl, scope))
}

func TestStoreAndGet(t *testing.T) {
	tests := []struct {
		name      string
		stored    []byte
		storeAuth string // the authorization context when the response arrives
		getAuth   string // of the later request
		at        time.Duration
		fresh     bool
	}{
		{"public, fresh", result(1000, "public"), "a", "b", 999 * time.Millisecond, true},
		{"public, expired", result(1000, "public"), "a", "a", time.Second, false},
		{"private, same context", result(1000, "private"), "a", "a", 0, true},
		{"private, another context", result(1000, "private"), "a", "b", 0, false},
		{"private, credentials changed while out", result(1000, "private"), "a2", "a", 0, false},
		{"no ttl", []byte(`{"tools":[],"cacheScope":"public"}`), "a", "a", 0, false},
		{"zero ttl", result(0, "public"), "a", "a", 0, false},
		{"negative ttl", result(-5, "public"), "a", "a", 0, false},
		{"unknown scope", result(1000, "shared"), "a", "a", 0, false},
		{"no scope", []byte(`{"tools":[],"ttlMs":1000}`), "a", "a", 0, false},
		{"not JSON", []byte(`{"ttlMs":`), "a", "a", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Cache
			key, uri := mustKey(t, "tools/list", `{}`)
			_, fresh, lk := c.Get(key, uri, "a", t0)
			require.False(t, fresh, "an empty cache has nothing")
			c.Store(lk, tt.storeAuth, "tools/list", tt.stored, t0)
			got, fresh, _ := c.Get(key, uri, tt.getAuth, t0.Add(tt.at))
			require.Equal(t, tt.fresh, fresh)
			if tt.fresh {
				require.Equal(t, string(tt.stored), string(got))
			}
		})
	}
}

func TestStoreCopiesTheResult(t *testing.T) {
	var c Cache
	key, uri := mustKey(t, "tools/list", `{}`)
	_, _, lk := c.Get(key, uri, "", t0)
	res := result(1000, "public")
	c.Store(lk, "", "tools/list", res, t0)
	res[2] = 'X'
	got, fresh, _ := c.Get(key, uri, "", t0)
	require.True(t, fresh)
	require.Equal(t, string(result(1000, "public")), string(got))
}

func TestInvalidate(t *testing.T) {
	type req struct{ method, params string }
	all := []req{
		{"tools/list", `{}`},
		{"prompts/list", `{}`},
		{"resources/list", `{}`},
		{"resources/templates/list", `{}`},
		{"resources/read", `{"uri":"u:1"}`},
		{"resources/read", `{"uri":"u:2"}`},
	}
	tests := []struct {
		notification, params string
		stale                []int // indexes into all
	}{
		{"notifications/tools/list_changed", ``, []int{0}},
		{"notifications/prompts/list_changed", ``, []int{1}},
		{"notifications/resources/list_changed", ``, []int{2, 3}},
		{"notifications/resources/updated", `{"uri":"u:2"}`, []int{5}},
		{"notifications/resources/updated", `not json`, nil},
		{"notifications/message", `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.notification+" "+tt.params, func(t *testing.T) {
			var c Cache
			for _, r := range all {
				key, uri := mustKey(t, r.method, r.params)
				_, _, lk := c.Get(key, uri, "", t0)
				c.Store(lk, "", r.method, result(1000, "public"), t0)
			}
			c.Invalidate(tt.notification, []byte(tt.params))
			for i, r := range all {
				key, uri := mustKey(t, r.method, r.params)
				_, fresh, _ := c.Get(key, uri, "", t0)
				require.Equal(t, !slices.Contains(tt.stale, i), fresh, "%s %s", r.method, r.params)
			}
		})
	}
}

// A response to a request sent before an invalidation is not stored after
// it: it may predate the change.
func TestGenerationRefusesAStaleResponse(t *testing.T) {
	var c Cache
	key, uri := mustKey(t, "tools/list", `{}`)
	_, _, lk := c.Get(key, uri, "", t0)
	c.Invalidate("notifications/prompts/list_changed", nil) // any invalidation
	c.Store(lk, "", "tools/list", result(1000, "public"), t0)
	_, fresh, _ := c.Get(key, uri, "", t0)
	require.False(t, fresh)
}

func TestMaxEntries(t *testing.T) {
	var c Cache
	fill := func(n int, at time.Time, ttl int) {
		for i := range n {
			key, uri := mustKey(t, "resources/read", fmt.Sprintf(`{"uri":"u:%d-%d"}`, at.UnixNano(), i))
			_, _, lk := c.Get(key, uri, "", at)
			c.Store(lk, "", "resources/read", result(ttl, "public"), at)
		}
	}
	fill(MaxEntries, t0, 1000)
	key, uri := mustKey(t, "tools/list", `{}`)
	_, _, lk := c.Get(key, uri, "", t0)
	c.Store(lk, "", "tools/list", result(1000, "public"), t0)
	_, fresh, _ := c.Get(key, uri, "", t0)
	require.False(t, fresh, "a full cache of fresh entries takes nothing more")

	later := t0.Add(time.Second) // every entry above has expired
	_, _, lk = c.Get(key, uri, "", later)
	c.Store(lk, "", "tools/list", result(1000, "public"), later)
	_, fresh, _ = c.Get(key, uri, "", later)
	require.True(t, fresh, "expired entries make room")
}

func TestStoreDiscover(t *testing.T) {
	var c Cache
	c.StoreDiscover("a", []byte(`{"ttlMs":1000,"cacheScope":"private"}`), t0)
	key, uri := mustKey(t, "server/discover", ``)
	_, fresh, _ := c.Get(key, uri, "a", t0)
	require.True(t, fresh, "a server/discover without params is answered")
	_, fresh, _ = c.Get(key, uri, "b", t0)
	require.False(t, fresh, "but not under another authorization context")
}
