package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/store"
	"github.com/lemonmcp/lemonmcp/store/storetest"
)

// strictAS makes env's authorization server strict about refresh tokens
// (RFC 9700 §4.14.2): each is redeemed once; presenting a redeemed one
// again revokes the whole grant, unless within grace of its redemption,
// when the same answer is returned again. Its counters are read under
// env's lock.
type strictAS struct {
	e           *env
	live        map[string]bool           // redeemable refresh tokens
	redeemed    map[string]map[string]any // refresh token → the answer it got
	redeemedAt  map[string]time.Time
	grace       time.Duration
	redemptions int
	reuses      int
	revoked     bool
	// onRedeem, when set, runs (under env's lock) before a redemption is
	// answered; drop makes the answer get lost (the connection closes).
	onRedeem func(rt string) (drop bool)
	seq      int
}

func newStrictAS(t *testing.T, e *env, initial string) *strictAS {
	s := &strictAS{e: e, live: map[string]bool{initial: true}, redeemed: map[string]map[string]any{}, redeemedAt: map[string]time.Time{}}
	e.set(func(e *env) {
		e.tokenFn = s.token
	})
	return s
}

// token answers the token endpoint (called under env's lock).
func (s *strictAS) token(form url.Values, _ http.Header) (int, map[string]any) {
	if form.Get("grant_type") != "refresh_token" {
		return 400, map[string]any{"error": "unsupported_grant_type"}
	}
	rt := form.Get("refresh_token")
	if ans, ok := s.redeemed[rt]; ok && !s.revoked {
		if s.grace > 0 && time.Since(s.redeemedAt[rt]) < s.grace {
			return 200, ans
		}
		s.reuses++
		s.revoked = true
		s.live = map[string]bool{}
		s.e.tokens = map[string][]string{}
	}
	if s.revoked || !s.live[rt] {
		return 400, map[string]any{"error": "invalid_grant", "error_description": "refresh token " + rt + " is not valid"}
	}
	delete(s.live, rt)
	s.redemptions++
	s.seq++
	ans := map[string]any{"access_token": fmt.Sprintf("at-%d", s.seq), "token_type": "Bearer", "refresh_token": fmt.Sprintf("rt-%d", s.seq)}
	s.live[ans["refresh_token"].(string)] = true
	s.redeemed[rt] = ans
	s.redeemedAt[rt] = time.Now()
	if s.onRedeem != nil && s.onRedeem(rt) {
		s.e.tokens[ans["access_token"].(string)] = nil
		return 0, nil // dropped: see dropConn
	}
	return 200, ans
}

func (s *strictAS) counts() (redemptions, reuses int, revoked bool) {
	defer s.e.lock()()
	return s.redemptions, s.reuses, s.revoked
}

// dropLost wraps the AS so that a status 0 answer closes the connection:
// the client never learns whether its refresh token was redeemed.
func dropLost(e *env) {
	inner := e.as.Config.Handler
	e.as.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &lossyWriter{ResponseWriter: w}
		inner.ServeHTTP(rw, r)
	})
}

type lossyWriter struct {
	http.ResponseWriter
	lost bool
}

func (w *lossyWriter) WriteHeader(code int) {
	if code == 0 {
		w.lost = true
		if hj, ok := w.ResponseWriter.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
		}
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *lossyWriter) Write(b []byte) (int, error) {
	if w.lost {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// sharedStores open the grants of each store backend, as each process
// would open its own handle (the memory store is one for all: it is one
// process's); the sealed file store too.
func sharedStores(t *testing.T) map[string]func() tokenstore.Grants {
	path := filepath.Join(t.TempDir(), "tokens.json")
	sealedPath := filepath.Join(t.TempDir(), "tokens-sealed.json")
	t.Setenv("LEMONMCP_TEST_GRANTS_KEY", storetest.NewKey())
	mem := store.NewMemory()
	open := func(spec store.Spec) func() tokenstore.Grants {
		return func() tokenstore.Grants {
			s, err := store.Open(spec, nil)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			return tokenstore.Grants{Store: s}
		}
	}
	out := map[string]func() tokenstore.Grants{
		"memory":      func() tokenstore.Grants { return tokenstore.Grants{Store: mem} },
		"file":        open(store.Spec{Type: "file", Path: path}),
		"file+sealed": open(store.Spec{Type: "file", Path: sealedPath, Encryption: &store.Encryption{KeyEnv: "LEMONMCP_TEST_GRANTS_KEY"}}),
	}
	// The server stores join when make test-tokenstores runs them.
	for typ, env := range map[string]string{"postgres": "LEMONMCP_TEST_POSTGRES_URL", "redis": "LEMONMCP_TEST_REDIS_URL"} {
		if u := os.Getenv(env); u != "" {
			out[typ] = open(store.Spec{Type: typ, URL: u})
		}
	}
	return out
}

func memGrants() tokenstore.Grants { return tokenstore.Grants{Store: store.NewMemory()} }

// TestSharedGrantManyManagers: managers that share a store (as processes
// do), each with many requests in flight, meet every token expiry at
// once: one redemption per expiry, no reuse, no revocation, every request
// succeeds. Without the store each manager redeems the same refresh
// token, and the server revokes the grant.
func TestSharedGrantManyManagers(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			as := newStrictAS(t, e, "rt-0")
			store := open()
			key := fmt.Sprintf("%s %d", t.Name(), time.Now().UnixNano())
			const managers, perManager, rounds = 6, 4, 4
			var clients []*http.Client
			for i := 0; i < managers; i++ {
				// Each manager gets its own store handle, as a process would.
				s := store
				if name != "memory" {
					s = open()
				}
				_, c := e.client(t, Config{ClientID: "c", RefreshToken: "rt-0", TokenStore: s.Store, TokenStoreKey: key}, &fakeHost{})
				clients = append(clients, c)
			}
			for round := 0; round < rounds; round++ {
				var wg sync.WaitGroup
				errs := make(chan error, managers*perManager)
				for _, c := range clients {
					for j := 0; j < perManager; j++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							st, _, err := post(c, e.mcpURL(), `{}`)
							if err == nil && st != 200 {
								err = fmt.Errorf("status %d", st)
							}
							errs <- err
						}()
					}
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err, "round %d", round)
				}
				// Every access token expires at once.
				e.set(func(e *env) { e.tokens = map[string][]string{} })
			}
			redemptions, reuses, revoked := as.counts()
			require.Zero(t, reuses)
			require.False(t, revoked)
			require.Equal(t, rounds, redemptions, "one redemption per expiry")
		})
	}
}

// TestSharedGrantInvalidGrant: a refused refresh token marks the record
// needs_reauth, never deletes it, and no other process presents it again.
func TestSharedGrantInvalidGrant(t *testing.T) {
	e := newEnv(t)
	as := newStrictAS(t, e, "rt-valid")
	store := memGrants()
	key := defaultStoreKey(e.mcpURL(), "c")
	_, _, err := store.CompareAndSave(context.Background(), key, 0, &tokenstore.Record{RefreshToken: "rt-dead", Generation: 7, State: tokenstore.StateOK})
	require.NoError(t, err)
	h := &fakeHost{}
	_, c := e.client(t, Config{ClientID: "c", TokenStore: store.Store}, h)
	_, _, err = post(c, e.mcpURL(), `{}`)
	ae := authErr(t, err)
	require.NotContains(t, ae.Message, "rt-dead")
	for _, l := range h.snapshot().logs {
		require.NotContains(t, l, "rt-dead")
	}
	rec, _, err := store.Load(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, tokenstore.StateNeedsReauth, rec.State)
	require.Equal(t, "rt-dead", rec.RefreshToken, "never deleted")
	require.Nil(t, rec.Lease)

	// Another process sharing the store does not redeem it again.
	_, c2 := e.client(t, Config{ClientID: "c", TokenStore: store.Store}, &fakeHost{})
	_, _, err = post(c2, e.mcpURL(), `{}`)
	authErr(t, err)
	require.Len(t, e.seen().tokenReqs, 1)
	redemptions, reuses, _ := as.counts()
	require.Zero(t, redemptions+reuses)
}

// TestSharedGrantAdoptsRotatedAfterInvalidGrant: when the refused refresh
// token was already replaced in the store (a slow holder's lease expired
// and another process redeemed), the new record is adopted.
func TestSharedGrantAdoptsRotatedAfterInvalidGrant(t *testing.T) {
	e := newEnv(t)
	newStrictAS(t, e, "rt-x")
	store := memGrants()
	key := defaultStoreKey(e.mcpURL(), "c")
	ctx := context.Background()
	_, _, err := store.CompareAndSave(ctx, key, 0, &tokenstore.Record{RefreshToken: "rt-old", Generation: 1})
	require.NoError(t, err)
	e.set(func(e *env) {
		inner := e.tokenFn
		e.tokenFn = func(form url.Values, h http.Header) (int, map[string]any) {
			// Another process wins while this request is in flight.
			_, ver, _ := store.Load(ctx, key)
			e.tokens["at-other"] = nil
			_, _, _ = store.CompareAndSave(ctx, key, ver, &tokenstore.Record{AccessToken: "at-other", RefreshToken: "rt-other", Generation: 2, State: tokenstore.StateOK})
			return inner(form, h)
		}
	})
	_, c := e.client(t, Config{ClientID: "c", TokenStore: store.Store}, &fakeHost{})
	st, _, err := post(c, e.mcpURL(), `{}`)
	require.NoError(t, err)
	require.Equal(t, 200, st)
	s := e.seen()
	require.Equal(t, "Bearer at-other", s.mcpReqs[len(s.mcpReqs)-1].header.Get("Authorization"))
	rec, _, err := store.Load(ctx, key)
	require.NoError(t, err)
	require.Equal(t, tokenstore.StateOK, rec.State)
	require.Equal(t, "rt-other", rec.RefreshToken)
}

// TestSharedGrantLeaseOfDeadHolder: a lease whose holder died is waited
// out, then the same refresh token is redeemed (it never was).
func TestSharedGrantLeaseOfDeadHolder(t *testing.T) {
	e := newEnv(t)
	as := newStrictAS(t, e, "rt-0")
	store := memGrants()
	key := defaultStoreKey(e.mcpURL(), "c")
	ctx := context.Background()
	until := time.Now().Add(300 * time.Millisecond).UnixMilli()
	_, _, err := store.CompareAndSave(ctx, key, 0, &tokenstore.Record{RefreshToken: "rt-0", Generation: 1, Lease: &tokenstore.Lease{Owner: "dead", Until: until}})
	require.NoError(t, err)
	var leaseAtRedeem *tokenstore.Lease
	e.set(func(e *env) {
		as.onRedeem = func(string) bool {
			rec, _, _ := store.Load(ctx, key)
			leaseAtRedeem = rec.Lease
			return false
		}
	})
	_, c := e.client(t, Config{ClientID: "c", TokenStore: store.Store, TokenStoreLease: time.Second}, &fakeHost{})
	st, _, err := post(c, e.mcpURL(), `{}`)
	require.NoError(t, err)
	require.Equal(t, 200, st)
	redemptions, reuses, _ := as.counts()
	require.Equal(t, 1, redemptions)
	require.Zero(t, reuses)
	e.set(func(*env) {})
	require.NotNil(t, leaseAtRedeem)
	require.NotEqual(t, "dead", leaseAtRedeem.Owner, "redeemed under its own lease only")
	require.GreaterOrEqual(t, leaseAtRedeem.Until-time.Second.Milliseconds(), until, "claimed only once the dead holder's lease expired")
}

// TestSharedGrantLostResponse: the answer to a redemption is lost. The
// refresh token is presented again only after the lease expired, and the
// server's reuse grace answers it: no revocation.
func TestSharedGrantLostResponse(t *testing.T) {
	e := newEnv(t)
	as := newStrictAS(t, e, "rt-0")
	dropLost(e)
	store := memGrants()
	var leases []*tokenstore.Lease // the lease at each presentation
	key := defaultStoreKey(e.mcpURL(), "c")
	e.set(func(e *env) {
		as.grace = time.Minute
		inner := e.tokenFn
		e.tokenFn = func(form url.Values, h http.Header) (int, map[string]any) {
			rec, _, _ := store.Load(context.Background(), key)
			leases = append(leases, rec.Lease)
			return inner(form, h)
		}
		as.loseFirstAnswer()
	})
	failThenSucceed(t, e, store)
	redemptions, reuses, revoked := as.counts()
	require.Equal(t, 1, redemptions)
	require.Zero(t, reuses)
	require.False(t, revoked)
	rec, _, err := store.Load(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, "rt-1", rec.RefreshToken)
	e.set(func(*env) {})
	require.Len(t, leases, 2)
	require.NotNil(t, leases[0])
	require.NotNil(t, leases[1])
	claimedAt := leases[1].Until - (400 * time.Millisecond).Milliseconds()
	require.GreaterOrEqual(t, claimedAt, leases[0].Until, "presented again only once the first lease expired")
}

// TestSharedGrantSeedsOnlyAnEmptyStore: the stored record wins over a
// configured refresh token.
func TestSharedGrantSeedsOnlyAnEmptyStore(t *testing.T) {
	e := newEnv(t)
	as := newStrictAS(t, e, "rt-stored")
	store := memGrants()
	key := defaultStoreKey(e.mcpURL(), "c")
	_, _, err := store.CompareAndSave(context.Background(), key, 0, &tokenstore.Record{RefreshToken: "rt-stored", Generation: 4})
	require.NoError(t, err)
	_, c := e.client(t, Config{ClientID: "c", RefreshToken: "rt-configured", TokenStore: store.Store}, &fakeHost{})
	st, _, err := post(c, e.mcpURL(), `{}`)
	require.NoError(t, err)
	require.Equal(t, 200, st)
	require.Equal(t, "rt-stored", e.seen().tokenReqs[0].form.Get("refresh_token"))
	redemptions, _, _ := as.counts()
	require.Equal(t, 1, redemptions)
	rec, _, err := store.Load(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, uint64(5), rec.Generation)
}

// TestSharedGrantInteractiveOnce: with no usable grant, one manager runs
// the browser step while the others wait for its record.
func TestSharedGrantInteractiveOnce(t *testing.T) {
	e := newEnv(t)
	store := memGrants()
	const managers = 4
	var hosts []*fakeHost
	var clients []*http.Client
	for i := 0; i < managers; i++ {
		h := &fakeHost{can: true}
		_, c := e.client(t, Config{ClientID: "c", TokenStore: store.Store}, h)
		hosts, clients = append(hosts, h), append(clients, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, managers)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := post(c, e.mcpURL(), `{}`)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	authorizations := 0
	for _, h := range hosts {
		authorizations += len(h.snapshot().authReqs)
	}
	require.Equal(t, 1, authorizations)
}

func TestSharedGrantConfig(t *testing.T) {
	// A generated DPoP key is shared through the store with the grant
	// (shareddpop_test.go).
	_, err := New(Config{TokenStore: memGrants().Store, DPoP: &DPoPConfig{}}, "https://mcp.example.com/mcp")
	require.NoError(t, err)
	_, err = New(Config{TokenStore: memGrants().Store, TokenStoreLease: -1}, "https://mcp.example.com/mcp")
	require.ErrorContains(t, err, "lease_ms")
	require.True(t, strings.HasPrefix(defaultStoreKey("https://a/mcp", "c"), "https://a/mcp"))
}

// TestSharedGrantGraceAnswerExpired: the server's grace answer to a
// retried refresh token carries the access token of the first, lost
// redemption, which has expired meanwhile; the request refreshes once
// more (with the new refresh token) instead of failing.
func TestSharedGrantGraceAnswerExpired(t *testing.T) {
	e := newEnv(t)
	as := newStrictAS(t, e, "rt-0")
	dropLost(e)
	e.set(func(e *env) {
		as.grace = time.Minute
		as.loseFirstAnswer()
		e.rsFn = func(r *http.Request, _ []string, ok bool) (int, string) {
			if !ok || r.Header.Get("Authorization") == "Bearer at-1" {
				return 401, ""
			}
			return 200, ""
		}
	})
	failThenSucceed(t, e, memGrants())
	redemptions, reuses, revoked := as.counts()
	require.Equal(t, 2, redemptions)
	require.Zero(t, reuses)
	require.False(t, revoked)
}

// refusingStore is a host whose application refuses its store requests.
type refusingStore struct{ *fakeHost }

func (refusingStore) AskStore(_ context.Context, kind string, _ []byte) ([]byte, error) {
	return nil, fmt.Errorf("the host refused %q (internal error)", kind)
}

// TestAppStoreFailureRedeemsNothing: {"type": "app"} with an application
// whose store fails fails the grant instead of refreshing uncoordinated.
func TestAppStoreFailureRedeemsNothing(t *testing.T) {
	e := newEnv(t)
	as := newStrictAS(t, e, "rt-0")
	_, c := e.client(t, Config{ClientID: "c", RefreshToken: "rt-0", TokenStoreSpec: &store.Spec{Type: "app"}}, refusingStore{&fakeHost{}})
	_, _, err := post(c, e.mcpURL(), `{}`)
	ae := authErr(t, err)
	require.Contains(t, ae.Message, "store_load")
	redemptions, _, _ := as.counts()
	require.Zero(t, redemptions)
}

// loseFirstAnswer makes the strict server's first redemption answer get
// lost (called under env's lock).
func (s *strictAS) loseFirstAnswer() {
	lost := false
	s.onRedeem = func(string) bool {
		if lost {
			return false
		}
		lost = true
		return true
	}
}

// failThenSucceed: the first request meets the lost answer (its outcome is
// unknown, so it fails), the next one succeeds once the lease expired.
func failThenSucceed(t *testing.T, e *env, store tokenstore.Grants) {
	t.Helper()
	_, c := e.client(t, Config{ClientID: "c", RefreshToken: "rt-0", TokenStore: store.Store, TokenStoreLease: 400 * time.Millisecond}, &fakeHost{})
	_, _, err := post(c, e.mcpURL(), `{}`)
	require.Error(t, err, "the outcome is unknown")
	require.NotContains(t, err.Error(), "rt-0")
	st, _, err := post(c, e.mcpURL(), `{}`)
	require.NoError(t, err)
	require.Equal(t, 200, st)
}

// TestSharedGrantOtherIssuer: a stored grant of another authorization
// server is never presented to this one.
func TestSharedGrantOtherIssuer(t *testing.T) {
	e := newEnv(t)
	as := newStrictAS(t, e, "rt-0")
	store := memGrants()
	key := defaultStoreKey(e.mcpURL(), "c")
	_, _, err := store.CompareAndSave(context.Background(), key, 0, &tokenstore.Record{RefreshToken: "rt-0", Generation: 1, Issuer: "https://other.example.com"})
	require.NoError(t, err)
	_, c := e.client(t, Config{ClientID: "c", TokenStore: store.Store}, &fakeHost{})
	_, _, err = post(c, e.mcpURL(), `{}`)
	authErr(t, err)
	require.Empty(t, e.seen().tokenReqs)
	redemptions, _, _ := as.counts()
	require.Zero(t, redemptions)
}

// TestSharedGrantDPoP: a DPoP-bound grant is shared by the processes
// holding its key; one configured with another key neither uses its
// tokens nor presents its refresh token.
func TestSharedGrantDPoP(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	e := newEnv(t)
	e.set(func(e *env) {
		e.tokenFn = func(form url.Values, _ http.Header) (int, map[string]any) {
			e.seq++
			return 200, map[string]any{"access_token": fmt.Sprintf("dpop-at-%d", e.seq), "token_type": "DPoP", "refresh_token": fmt.Sprintf("rt-%d", e.seq)}
		}
		e.rsFn = func(r *http.Request, _ []string, _ bool) (int, string) {
			scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if _, ok := e.tokens[tok]; !ok || scheme != "DPoP" || r.Header.Get("DPoP") == "" {
				return 401, ""
			}
			return 200, ""
		}
	})
	store := memGrants()
	client := func(k *ecdsa.PrivateKey) *http.Client {
		_, c := e.client(t, Config{ClientID: "c", RefreshToken: "rt-0", TokenStore: store.Store, DPoP: &DPoPConfig{KeyPEM: pemOf(t, k)}}, &fakeHost{})
		return c
	}
	for i, k := range []*ecdsa.PrivateKey{key, key} {
		st, _, err := post(client(k), e.mcpURL(), `{}`)
		require.NoError(t, err, "process %d", i)
		require.Equal(t, 200, st)
	}
	require.Len(t, e.seen().tokenReqs, 1, "the second process adopted the bound token")

	_, _, err := post(client(other), e.mcpURL(), `{}`)
	require.Contains(t, authErr(t, err).Message, "bound to a DPoP key this process does not hold")
	require.Len(t, e.seen().tokenReqs, 1, "its refresh token was not presented with another key")
	rec, _, err := store.Load(context.Background(), defaultStoreKey(e.mcpURL(), "c"))
	require.NoError(t, err)
	require.Equal(t, tokenstore.StateOK, rec.State)
	require.NotEmpty(t, rec.DPoPJKT)
}
