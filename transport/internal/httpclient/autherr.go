package httpclient

import (
	"errors"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// AuthError reports whether err (as returned by http.Client.Do) is the OAuth
// layer saying authorization could not be obtained, and if so returns it as
// a CodeAuthRequired error carrying the discovered metadata as data. The
// auth package's messages are already safe to show.
func AuthError(err error) (*transport.Error, bool) {
	var ae *auth.Error
	if !errors.As(err, &ae) {
		return nil, false
	}
	te := &transport.Error{Code: transport.CodeAuthRequired, Message: ae.Message}
	if len(ae.Metadata) > 0 {
		if data, merr := jsonx.Marshal(ae.Metadata); merr == nil {
			te.Data = data
		}
	}
	return te, true
}

// RequestError maps a failed http.Client.Do: an authorization failure as
// AuthError does, anything else as CodeTransport "<what> failed: <reason>".
func RequestError(err error, what string) *transport.Error {
	if te, ok := AuthError(err); ok {
		return te
	}
	return transport.Errorf(transport.CodeTransport, "%s failed: %s", what, Describe(err))
}
