package host

import (
	"fmt"
	"sync"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/callbackgate"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// pinAppTimeout bounds the application's answer to pins_load and
// pins_save: it reads or writes its own storage, no person is asked.
const pinAppTimeout = 30 * time.Second

// appAnswer is the application's answer to one of the host's own
// requests.
type appAnswer struct {
	status core.Status
	data   []byte
}

// pinApp is the "store": "app" pin store: the application keeps the
// document, as the token store "app" keeps tokens. load asks "pins_load"
// (answer: the document, or {} when nothing is stored); update asks
// pins_load, changes the document, then "pins_save" {"pins": document}
// (answer: {}), one update at a time in this host. The application's
// callback must answer without waiting for lmcp_host_pins or
// lmcp_host_approve of the same host (they wait for the answer).
type pinApp struct {
	h  *Host
	mu sync.Mutex // one update at a time
}

func (a *pinApp) errorf(format string, args ...any) error {
	return fmt.Errorf("the application's pin store (pins_load) %s", fmt.Sprintf(format, args...))
}

func (a *pinApp) load() (*pinDoc, error) {
	data, err := a.h.askApp("pins_load", []byte("{}"))
	if err != nil {
		return nil, err
	}
	var probe map[string]jsonx.RawMessage
	if jsonx.Unmarshal(data, &probe) == nil && len(probe) == 0 {
		return &pinDoc{Version: pinFileVersion, Servers: map[string]*pinServer{}}, nil // nothing stored yet
	}
	return decodePinDoc(data, a.errorf)
}

func (a *pinApp) update(fn func(*pinDoc) (bool, error)) (*pinDoc, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	doc, err := a.load()
	if err != nil {
		return nil, err
	}
	changed, err := fn(doc)
	if err != nil || !changed {
		return doc, err
	}
	doc.Version = pinFileVersion
	if _, err := a.h.askApp("pins_save", jsonx.MustMarshal(map[string]any{"pins": doc})); err != nil {
		return nil, err
	}
	return doc, nil
}

// askApp sends one of the host's own requests to the application's request
// handler (kind, payload) and waits for its answer (Respond), within
// pinAppTimeout.
func (h *Host) askApp(kind string, payload []byte) ([]byte, error) {
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
	timer := time.NewTimer(pinAppTimeout)
	defer timer.Stop()
	select {
	case a := <-ch:
		if a.status == core.StatusUnsupported && a.data == nil {
			return nil, fmt.Errorf("\"pins\": {\"store\": \"app\"} needs an app request handler to answer %s", kind)
		}
		if a.status != core.StatusOK {
			var e struct {
				Message string `json:"message"`
			}
			_ = jsonx.Unmarshal(a.data, &e)
			return nil, fmt.Errorf("the application refused %s (%s): %s", kind, core.Status(a.status).String(), e.Message)
		}
		return a.data, nil
	case <-timer.C:
		h.takeRequest(hid)
		return nil, fmt.Errorf("the application did not answer %s within %d s", kind, int(pinAppTimeout.Seconds()))
	case <-h.gone:
		return nil, fmt.Errorf("the host was freed before the application answered %s", kind)
	}
}
