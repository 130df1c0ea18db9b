package auth

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// blockingHost never finishes authorizing by itself.
type blockingHost struct {
	fakeHost
	started chan struct{}
}

func (h *blockingHost) Authorize(ctx context.Context, req *AuthorizationRequest) (*AuthorizationReply, error) {
	close(h.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCloseAbortsAuthorization(t *testing.T) {
	e := newEnv(t)
	h := &blockingHost{fakeHost: fakeHost{can: true}, started: make(chan struct{})}
	m, c := e.client(t, Config{}, h)
	errc := make(chan error, 1)
	go func() {
		_, _, err := post(c, e.mcpURL(), `{}`)
		errc <- err
	}()
	select {
	case <-h.started:
	case <-time.After(10 * time.Second):
		t.Fatal("authorization never started")
	}
	m.Close()
	select {
	case err := <-errc:
		ae := authErr(t, err)
		require.Contains(t, ae.Message, "closed")
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not abort the pending authorization")
	}
}
