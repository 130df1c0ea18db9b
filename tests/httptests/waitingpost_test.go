package httptests

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/core"
)

// holdPosts serves h, except that a POST whose body names the tool "hold"
// gets no answer until the client gives up on it (or the test ends).
func holdPosts(t *testing.T, h http.Handler) (http.Handler, <-chan struct{}) {
	ended := make(chan struct{}, 8)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"name":"hold"`)) {
				select {
				case <-r.Context().Done(): // the client closed the POST's connection
					ended <- struct{}{}
				case <-stop:
				}
				return
			}
		}
		h.ServeHTTP(w, r)
	}), ended
}

// TestWaitingPostEndsWithItsCall: over legacy HTTP+SSE a blocking call's
// POST is made on the caller's goroutine (a C caller's thread: the route
// core.SyncPostThenWait). A server that never answers that POST holds the
// caller no longer than the call's timeout: the call fails with
// StatusTimeout, the POST's connection is closed (the server sees it
// end), and the next call is answered.
func TestWaitingPostEndsWithItsCall(t *testing.T) {
	for _, kind := range []string{"sse", "http"} {
		t.Run(kind, func(t *testing.T) {
			h, ended := holdPosts(t, legacySSE())
			srv := serve(t, h)
			c := connect(t, kind, srv.URL+"/sse", "")
			require.Equal(t, "hi", c.toolText(t, "echo", map[string]any{"text": "hi"}))

			returned := make(chan *core.Error, 1)
			go func() {
				_, err := c.try("tools/call", map[string]any{"name": "hold", "arguments": map[string]any{}},
					core.CallOptions{Timeout: 200 * time.Millisecond, TimeoutSet: true})
				returned <- err
			}()
			select {
			case err := <-returned:
				require.NotNil(t, err)
				require.Equal(t, core.StatusTimeout, err.Status, "%s", err.Message)
			case <-time.After(wait):
				t.Fatalf("the blocking call was still held by its POST %s after its 200 ms timeout", wait)
			}
			select {
			case <-ended:
			case <-time.After(wait):
				t.Fatalf("the server's POST was still open %s after the call timed out", wait)
			}
			require.Equal(t, "after", c.toolText(t, "echo", map[string]any{"text": "after"}))
		})
	}
}
