package streamablehttp

import (
	"bytes"
	"io"
	"net/http"

	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/internal/httpclient"
	"github.com/lemonmcp/lemonmcp/transport/internal/rpcpeek"
)

// maxErrorBody bounds how much of an error status's body is read to look
// for a JSON-RPC error. Such bodies are small; a large one is not an error
// object worth the memory.
const maxErrorBody = 64 << 10

// modernStatusError maps an HTTP error status of a 2026-07-28 request. A
// modern server explains its 400 (-32022, -32021, -32020, -32602) or 404
// (-32601) with a JSON-RPC error body: that object travels to the core in
// Error.RPCError, and the core decides whether it proves the server modern
// (during the probe) or is simply the call's error. Anything else is the
// usual status error.
func modernStatusError(resp *http.Response, limit int) *transport.Error {
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden ||
		httpclient.MediaType(resp.Header) != mediaJSON {
		return httpclient.StatusError(resp)
	}
	if limit > maxErrorBody {
		limit = maxErrorBody
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	resp.Body.Close()
	if len(raw) <= limit {
		if obj, ok := rpcpeek.ErrorObject(raw); ok {
			e := transport.Errorf(transport.CodeTransport, "the server refused the request (%s)", httpclient.Status(resp.StatusCode))
			e.RPCError = httpclient.Secrets(resp.Request).ScrubJSON(obj)
			return e
		}
	}
	// StatusError reads the body for its excerpt: hand it what was read.
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return httpclient.StatusError(resp)
}
