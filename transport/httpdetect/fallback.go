package httpdetect

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
	"github.com/lemonmcp/lemonmcp/transport/legacysse"
)

// abandonTimeout bounds closing the Streamable HTTP side after a fallback.
// It holds no session, so there is nothing to DELETE.
const abandonTimeout = 2 * time.Second

// refused is the Streamable HTTP transport's InitializeRefused hook. The
// statuses that mean "no Streamable HTTP here" are the ones the 2025-11-25
// specification names: 400, 404 and 405.
func (d *Transport) refused(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
	default:
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mode != undecided || d.closed || d.initMsg == nil {
		return false
	}
	d.mode = fallingBack
	d.wg.Add(1)
	go d.fallback(status)
	return true
}

// fallback starts legacy SSE and re-sends the initialize request there.
func (d *Transport) fallback(status int) {
	defer d.wg.Done()
	defer transport.Recover(d.sink, "the legacy fallback", nil)
	d.sink.Log(transport.LogLine{Level: "info", Source: "transport",
		Text: "the server refused Streamable HTTP (" + httpclient.Status(status) + "); trying the legacy HTTP+SSE transport"})

	lt, err := legacysse.New(d.legacyCfg) // checked by New, so this succeeds
	if err == nil {
		err = lt.Start(d.ctx, fromLegacy{d})
	}
	d.mu.Lock()
	initMsg, initID := d.initMsg, d.initID
	if err != nil {
		d.mode = streamable
		d.mu.Unlock()
		e := asError(err)
		d.sink.RequestFailed(initID, transport.Errorf(e.Code,
			"the server refused Streamable HTTP (%s) and the legacy HTTP+SSE transport failed too: %s", httpclient.Status(status), e.Message))
		return
	}
	if d.closed {
		// Close is under way and will close Streamable HTTP, whose Closed
		// the sink gets; this one's must not reach it.
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), abandonTimeout)
		defer cancel()
		_ = lt.Close(ctx)
		return
	}
	d.legacy, d.mode = lt, legacy
	early := d.legacyClosed
	d.mu.Unlock()
	if early != nil {
		d.deliverClosed(early)
	}

	ctx, cancel := context.WithTimeout(context.Background(), abandonTimeout)
	_ = d.streamable.Close(ctx) // its Closed is swallowed: legacy is in use
	cancel()
	if err := lt.Send(d.ctx, transport.Outbound{Data: initMsg, Kind: transport.KindRequest, Method: "initialize", ID: initID}); err != nil {
		d.sink.RequestFailed(initID, asError(err))
	}
}

func asError(err error) *transport.Error {
	var te *transport.Error
	if errors.As(err, &te) {
		return te
	}
	return transport.Errorf(transport.CodeTransport, "%s", err.Error())
}
