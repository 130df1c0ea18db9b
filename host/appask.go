package host

import (
	"context"
	"fmt"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
)

// appAnswer is the application's answer to one of the host's own
// requests.
type appAnswer struct {
	status core.Status
	data   []byte
}

// askApp sends one of the host's own requests (the store's store_load and
// store_save with "pins": {"store": {"type": "app"}}) to the
// application's request handler and waits for its answer (Respond), ctx
// or the host's end. The application's own message is not repeated (it
// may echo a secret).
func (h *Host) askApp(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	hid := h.nextRequest.Add(1)
	ch := make(chan appAnswer, 1)
	h.mu.Lock()
	if h.freed {
		h.mu.Unlock()
		return nil, fmt.Errorf("the host was freed before %s", kind)
	}
	h.requests[hid] = pendingRequest{answer: ch}
	h.mu.Unlock()
	h.out.Push(func() {
		reg := h.handlers.Load()
		if reg == nil || reg.Handler == nil || !reg.Enter() {
			if h.takeRequest(hid) {
				ch <- appAnswer{core.StatusUnsupported, nil}
			}
			return
		}
		defer reg.Exit()
		reg.Handler(hid, kind, payload)
	}, callbackgate.Event)
	select {
	case a := <-ch:
		if a.status == core.StatusUnsupported && a.data == nil {
			return nil, fmt.Errorf(`"pins": {"store": {"type": "app"}} needs an app request handler to answer %s`, kind)
		}
		if a.status != core.StatusOK {
			return nil, fmt.Errorf("the application refused %s (%s)", kind, core.Status(a.status).String())
		}
		return a.data, nil
	case <-ctx.Done():
		h.takeRequest(hid)
		return nil, fmt.Errorf("the application did not answer %s in time (%s)", kind, ctx.Err())
	case <-h.gone:
		return nil, fmt.Errorf("the host was freed before the application answered %s", kind)
	}
}
