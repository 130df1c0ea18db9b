package core

import (
	"context"
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// authHost is the OAuth layer's host boundary (auth.Host), over host
// requests: "authorize" (the browser step of the authorization code flow)
// and "token_load" / "token_save" (the host's token store). Unlike the
// server's requests these are the library's own questions, asked from the
// HTTP transport's goroutine, which blocks until the host answers.
type authHost struct{ c *Client }

var (
	_ auth.Host               = authHost{}
	_ auth.VersionedTokenHost = authHost{}
)

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

// LoadToken asks the host for the stored token record.
func (h authHost) LoadToken(ctx context.Context, key auth.TokenKey) (*auth.StoredToken, error) {
	data, err := h.c.askHostSync(ctx, "token_load", jsonx.MustMarshal(key), h.c.opts.Timeouts.AppRequest)
	if err != nil {
		return nil, err
	}
	var tok auth.StoredToken
	if jsonx.Unmarshal(orEmptyObject(data), &tok) != nil {
		return nil, Errorf(StatusInvalidArgument, "the host's answer to \"token_load\" is not a token record")
	}
	if tok.AccessToken == "" && tok.RefreshToken == "" {
		return nil, nil // nothing stored
	}
	return &tok, nil
}

// SaveToken hands the host a token record to persist.
func (h authHost) SaveToken(ctx context.Context, tok *auth.StoredToken) error {
	_, err := h.c.askHostSync(ctx, "token_save", jsonx.MustMarshal(tok), h.c.opts.Timeouts.AppRequest)
	if err != nil {
		return err
	}
	return nil
}

// versionedSave is the "token_save" payload of the versioned form: the
// record's fields (a single-process host that stores the payload as it is
// and answers it to "token_load" keeps working), the key, and the version
// the save expects.
type versionedSave struct {
	*tokenstore.Record
	Key             string             `json:"key"`
	ExpectedVersion tokenstore.Version `json:"expected_version"`
}

// versionedAnswer is a versioned host's answer: to "token_load"
// {"version", "record"?}; to "token_save" {"version"} when saved, or
// {"conflict": true, "version", "record"} when another save won.
type versionedAnswer struct {
	Version  *tokenstore.Version `json:"version"`
	Record   *tokenstore.Record  `json:"record"`
	Conflict bool                `json:"conflict"`
}

// LoadTokenVersioned asks the host for the record under key.Key and its
// version. A host answering the single-process form (a flat record, or
// {}) is accepted: its record's version is the one it was saved at.
func (h authHost) LoadTokenVersioned(ctx context.Context, key auth.TokenKey) (*tokenstore.Record, tokenstore.Version, error) {
	data, err := h.c.askHostSync(ctx, "token_load", jsonx.MustMarshal(key), h.c.opts.Timeouts.AppRequest)
	if err != nil {
		return nil, 0, err
	}
	data = orEmptyObject(data)
	var ans versionedAnswer
	if jsonx.Unmarshal(data, &ans) != nil {
		return nil, 0, Errorf(StatusInvalidArgument, "the host's answer to \"token_load\" is not a token record")
	}
	if ans.Version != nil {
		if ans.Record == nil || *ans.Version <= 0 {
			return nil, 0, nil
		}
		return ans.Record, *ans.Version, nil
	}
	var flat struct {
		tokenstore.Record
		ExpectedVersion tokenstore.Version `json:"expected_version"`
	}
	if jsonx.Unmarshal(data, &flat) != nil {
		return nil, 0, Errorf(StatusInvalidArgument, "the host's answer to \"token_load\" is not a token record")
	}
	if flat.AccessToken == "" && flat.RefreshToken == "" && flat.Generation == 0 {
		return nil, 0, nil
	}
	return &flat.Record, flat.ExpectedVersion + 1, nil
}

// CompareAndSaveToken asks the host to save rec if key.Key is still at
// version expected. A single-process host's {} means saved.
func (h authHost) CompareAndSaveToken(ctx context.Context, key auth.TokenKey, expected tokenstore.Version, rec *tokenstore.Record) (tokenstore.Version, *tokenstore.Record, error) {
	payload := jsonx.MustMarshal(versionedSave{Record: rec, Key: key.Key, ExpectedVersion: expected})
	data, err := h.c.askHostSync(ctx, "token_save", payload, h.c.opts.Timeouts.AppRequest)
	if err != nil {
		return 0, nil, err
	}
	var ans versionedAnswer
	if jsonx.Unmarshal(orEmptyObject(data), &ans) != nil {
		return 0, nil, Errorf(StatusInvalidArgument, "the host's answer to \"token_save\" is not {\"version\"} or {\"conflict\", \"version\", \"record\"}")
	}
	switch {
	case ans.Conflict && ans.Version != nil:
		return *ans.Version, ans.Record, nil
	case ans.Conflict:
		return 0, nil, Errorf(StatusInvalidArgument, "the host's \"token_save\" conflict answer has no version")
	case ans.Version != nil:
		if *ans.Version <= expected {
			return 0, nil, Errorf(StatusInvalidArgument, "the host's \"token_save\" answer must give a version above expected_version")
		}
		return *ans.Version, nil, nil
	}
	return expected + 1, nil, nil // the single-process form: {}
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
