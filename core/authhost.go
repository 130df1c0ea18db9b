package core

import (
	"context"
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// authHost is the OAuth layer's host boundary (auth.Host), over host
// requests: "authorize" (the browser step of the authorization code flow)
// and "store_load" / "store_save" (the application's store). Unlike the
// server's requests these are the library's own questions, asked from the
// HTTP transport's goroutine, which blocks until the host answers.
type authHost struct{ c *Client }

var _ auth.Host = authHost{}

// CanAuthorize reports whether the host declared handlers.authorization.
func (h authHost) CanAuthorize() bool { return h.c.opts.Handlers.Authorization }

// Authorize asks the host to run the authorization request.
func (h authHost) Authorize(ctx context.Context, req *auth.AuthorizationRequest) (*auth.AuthorizationReply, error) {
	if !h.c.opts.Handlers.Authorization {
		return nil, Errorf(StatusInvalidState, "handlers.authorization is not configured")
	}
	timeout := h.c.opts.AuthorizationTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	data, err := h.c.askHostSync(ctx, "authorize", jsonx.MustMarshal(req), timeout)
	if err != nil {
		return nil, err
	}
	var reply auth.AuthorizationReply
	if jsonx.Unmarshal(orEmptyObject(data), &reply) != nil {
		return nil, Errorf(StatusInvalidArgument, "the host's answer to \"authorize\" is not an authorization reply object")
	}
	return &reply, nil
}

// AskStore puts the application's store request (store_load,
// store_save) to the host: the store of auth.token_store {"type": "app"}.
func (h authHost) AskStore(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	data, err := h.c.askHostSync(ctx, kind, payload, h.c.opts.Timeouts.AppRequest)
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Log reports the OAuth layer's diagnostics as "log" events.
func (h authHost) Log(level, message string) { h.c.logf(level, "oauth: %s", message) }

// hostAnswer is what a synchronous app request ends with.
type hostAnswer struct {
	status Status
	data   []byte
}

// askHostSync puts one of the library's own questions to the host and
// waits for the answer, the timeout, ctx, or the client being freed. A
// non-OK status from the host becomes an error naming the request (the
// host's own message is not repeated: it may echo a secret).
func (c *Client) askHostSync(ctx context.Context, kind string, payload []byte, timeout time.Duration) ([]byte, *Error) {
	reg := c.hosts.Load()
	if reg == nil || reg.Handler == nil {
		return nil, Errorf(StatusInvalidState, "no app-request handler is registered to answer %q", kind)
	}
	answers := make(chan hostAnswer, 1)
	hr := &appRequest{
		id:   c.nextHostID.Add(1),
		kind: kind,
		onAnswer: func(status Status, data []byte) *Error {
			answers <- hostAnswer{status: status, data: data}
			return nil
		},
		onExpire: func() { answers <- hostAnswer{status: StatusTimeout} },
		onDrop:   func() { answers <- hostAnswer{status: StatusCancelled} },
	}
	c.mu.Lock()
	if c.freed {
		c.mu.Unlock()
		return nil, Errorf(StatusCancelled, "the client was freed")
	}
	c.appReqs[hr.id] = hr
	hr.timer = time.AfterFunc(timeout, func() { c.expireAppRequest(hr) })
	c.mu.Unlock()
	go func() {
		defer c.recoverPanic("a app request callback")
		if !c.callHost(reg, hr.id, kind, payload) {
			if c.takeAppRequest(hr.id) != nil {
				answers <- hostAnswer{status: StatusCancelled}
			}
		}
	}()
	select {
	case a := <-answers:
		switch a.status {
		case StatusOK:
			return a.data, nil
		case StatusTimeout:
			return nil, Errorf(StatusTimeout, "the host did not answer %q within %s", kind, formatMS(timeout))
		case StatusCancelled:
			return nil, Errorf(StatusCancelled, "the client was freed while %q was pending", kind)
		default:
			return nil, Errorf(a.status, "the host refused %q (%s)", kind, a.status.String())
		}
	case <-ctx.Done():
		c.takeAppRequest(hr.id) // a late answer gets LMCP_E_NOT_FOUND
		return nil, Errorf(StatusTimeout, "gave up waiting for the host to answer %q: %s", kind, ctx.Err())
	}
}
