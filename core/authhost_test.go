package core

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/store"
	"github.com/stretchr/testify/require"
)

// The OAuth layer's host boundary: the library's own questions ("authorize",
// "store_load", "store_save") go to the app-request handler and the
// calling goroutine waits for the answer.
func TestAuthHost(t *testing.T) {
	rig := newHostRig(t, func(o *Options) {
		o.Handlers.Authorization = true
		o.AuthAppTokenStore = true
		o.AuthorizationTimeout = 300 * time.Millisecond
		o.Timeouts.AppRequest = 300 * time.Millisecond
	})
	h := authHost{rig.c}
	require.True(t, h.CanAuthorize())
	ctx := context.Background()

	type result struct {
		v   any
		err error
	}
	async := func(f func() (any, error)) chan result {
		ch := make(chan result, 1)
		go func() { v, err := f(); ch <- result{v, err} }()
		return ch
	}
	wait := func(ch chan result) result {
		select {
		case r := <-ch:
			return r
		case <-time.After(3 * time.Second):
			t.Fatal("the auth host call did not return")
			return result{}
		}
	}

	t.Run("authorize: payload and answer", func(t *testing.T) {
		req := &auth.AuthorizationRequest{AuthorizationURL: "https://as/authorize?x=1", State: "st", CodeChallengeMethod: "S256"}
		ch := async(func() (any, error) { return h.Authorize(ctx, req) })
		hc := rig.nextHost(t)
		require.Equal(t, "authorize", hc.kind)
		var got map[string]any
		require.NoError(t, json.Unmarshal(hc.payload, &got))
		require.Equal(t, "https://as/authorize?x=1", got["authorization_url"])
		require.Equal(t, "st", got["state"])
		require.Nil(t, errOrNil(rig.c.Respond(hc.id, StatusOK, []byte(`{"redirect_url":"http://127.0.0.1/cb?code=c&state=st"}`))))
		r := wait(ch)
		require.NoError(t, r.err)
		require.Equal(t, "http://127.0.0.1/cb?code=c&state=st", r.v.(*auth.AuthorizationReply).RedirectURL)
	})

	t.Run("authorize: the host refuses", func(t *testing.T) {
		ch := async(func() (any, error) { return h.Authorize(ctx, &auth.AuthorizationRequest{}) })
		hc := rig.nextHost(t)
		require.Nil(t, errOrNil(rig.c.Respond(hc.id, StatusPolicyDenied, []byte(`{"message":"user said no: hunter2"}`))))
		r := wait(ch)
		require.Error(t, r.err)
		require.Equal(t, StatusPolicyDenied, AsError(r.err).Status)
		require.NotContains(t, r.err.Error(), "hunter2", "the host's own message is not repeated")
	})

	t.Run("authorize: the host never answers", func(t *testing.T) {
		ch := async(func() (any, error) { return h.Authorize(ctx, &auth.AuthorizationRequest{}) })
		hc := rig.nextHost(t)
		r := wait(ch)
		require.Equal(t, StatusTimeout, AsError(r.err).Status)
		require.Contains(t, r.err.Error(), `"authorize" within 300 ms`)
		require.Equal(t, StatusNotFound, rig.c.Respond(hc.id, StatusOK, []byte(`{}`)).Status, "a late answer is refused")
	})

	t.Run("authorize: the caller gives up", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		ch := async(func() (any, error) { return h.Authorize(cctx, &auth.AuthorizationRequest{}) })
		hc := rig.nextHost(t)
		cancel()
		r := wait(ch)
		require.Error(t, r.err)
		require.Equal(t, StatusNotFound, rig.c.Respond(hc.id, StatusOK, []byte(`{}`)).Status)
	})

	t.Run("store_load and store_save: the application's store", func(t *testing.T) {
		grants := tokenstore.Grants{Store: store.NewApp(h.AskStore)}
		ch := async(func() (any, error) {
			rec, _, err := grants.Load(ctx, "g")
			return rec, err
		})
		hc := rig.nextHost(t)
		require.Equal(t, "store_load", hc.kind)
		require.JSONEq(t, `{"collection":"grants","key":"g"}`, string(hc.payload))
		require.Nil(t, errOrNil(rig.c.Respond(hc.id, StatusOK, []byte(`{"version":0}`))))
		r := wait(ch)
		require.NoError(t, r.err)
		require.Nil(t, r.v.(*tokenstore.Record))

		// The record carries the DPoP key both ways.
		rec := &tokenstore.Record{RefreshToken: "rt", Generation: 2, DPoPJKT: "jkt", DPoPKey: "-----BEGIN PRIVATE KEY-----\nk\n-----END PRIVATE KEY-----\n"}
		ch = async(func() (any, error) {
			v, _, err := grants.CompareAndSave(ctx, "g", 1, rec)
			return v, err
		})
		hc = rig.nextHost(t)
		require.Equal(t, "store_save", hc.kind)
		var saved struct {
			Collection      string          `json:"collection"`
			Key             string          `json:"key"`
			ExpectedVersion int64           `json:"expected_version"`
			Document        json.RawMessage `json:"document"`
		}
		require.NoError(t, json.Unmarshal(hc.payload, &saved))
		require.Equal(t, "grants", saved.Collection)
		require.Equal(t, int64(1), saved.ExpectedVersion)
		require.Contains(t, string(saved.Document), "jkt")
		require.Nil(t, errOrNil(rig.c.Respond(hc.id, StatusOK, []byte(`{"version": 2}`))))
		r = wait(ch)
		require.NoError(t, r.err)
		require.Equal(t, tokenstore.Version(2), r.v)

		ch = async(func() (any, error) {
			got, _, err := grants.Load(ctx, "g")
			return got, err
		})
		hc = rig.nextHost(t)
		answer, _ := json.Marshal(map[string]any{"version": 2, "document": saved.Document})
		require.Nil(t, errOrNil(rig.c.Respond(hc.id, StatusOK, answer)))
		r = wait(ch)
		require.NoError(t, r.err)
		require.Equal(t, rec, r.v.(*tokenstore.Record))
	})

	t.Run("the client is freed while the host thinks", func(t *testing.T) {
		ch := async(func() (any, error) { return h.Authorize(ctx, &auth.AuthorizationRequest{}) })
		rig.nextHost(t)
		rig.c.Free()
		r := wait(ch)
		require.Equal(t, StatusCancelled, AsError(r.err).Status)
		_, err := h.AskStore(ctx, "store_load", []byte(`{}`))
		require.Error(t, err, "no question is put to a freed client")
	})
}

func TestAuthHostWithoutHandlers(t *testing.T) {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	c := s.client(testOptions())
	defer c.Free()
	h := authHost{c}
	require.False(t, h.CanAuthorize())
	_, err := h.Authorize(context.Background(), &auth.AuthorizationRequest{})
	require.Contains(t, err.Error(), "handlers.authorization is not configured")
	_, err = h.AskStore(context.Background(), "store_load", []byte(`{}`))
	require.Contains(t, err.Error(), "no app-request handler")
}
