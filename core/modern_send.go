package core

import (
	"encoding/base64"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// HTTP header names of the 2026-07-28 Streamable HTTP transport (SEP-2243).
const (
	headerProtocolVersion = "MCP-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
)

// sendModernRequest sends a request of the 2026-07-28 era: params carry
// the era's _meta (and, on an MRTR retry, the inputs), and an HTTP
// transport gets the standard headers computed here, where the tool
// schemas are known.
func (c *Client) sendModernRequest(cl *call, reqID int64, params []byte) *Error {
	if c.cacheServe(cl, reqID, params) {
		return nil
	}
	full, err := modernParams(params, cl.mod.meta, cl.mod.retry)
	if err != nil {
		return err
	}
	var headers []transport.Header
	if c.headers {
		headers = c.modernHeaders(cl)
	}
	bp := bufPool.Get().(*[]byte)
	buf := appendRequest((*bp)[:0], reqID, cl.method, full)
	serr := c.tr.Send(c.sendCtxFor(cl), transport.Outbound{Data: buf, Kind: transport.KindRequest, Method: cl.method, ID: reqID, Headers: headers})
	*bp = buf
	bufPool.Put(bp)
	if serr != nil {
		return AsError(serr)
	}
	return nil
}

// modernHeaders are a request's standard headers: MCP-Protocol-Version
// (equal to _meta's), Mcp-Method, Mcp-Name for the named methods, and
// Mcp-Param-* for the tool parameters annotated with x-mcp-header.
func (c *Client) modernHeaders(cl *call) []transport.Header {
	h := make([]transport.Header, 0, 4)
	h = append(h, transport.Header{Name: headerProtocolVersion, Value: cl.mod.version}, transport.Header{Name: headerMethod, Value: cl.method})
	var nameKey string
	switch cl.method {
	case "tools/call", "prompts/get":
		nameKey = "name"
	case "resources/read":
		nameKey = "uri"
	default:
		return h
	}
	var p struct {
		Name      *string          `json:"name"`
		URI       *string          `json:"uri"`
		Arguments jsonx.RawMessage `json:"arguments"`
	}
	if len(cl.params) > 0 && jsonx.Unmarshal(cl.params, &p) != nil {
		return h
	}
	name := p.Name
	if nameKey == "uri" {
		name = p.URI
	}
	if name != nil {
		h = append(h, transport.Header{Name: headerName, Value: encodeHeaderValue(*name)})
	}
	if cl.method == "tools/call" && name != nil {
		h = c.appendParamHeaders(h, *name, p.Arguments)
	}
	return h
}

const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// encodeHeaderValue returns s as a header value: as it is when it is plain
// visible ASCII with inner spaces, else (non-ASCII, control characters,
// leading or trailing whitespace, a value that looks like the sentinel
// itself, or empty, which some servers cannot tell from a missing header)
// as =?base64?<standard base64 of the UTF-8>?=.
func encodeHeaderValue(s string) string {
	if !needsBase64(s) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

func needsBase64(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	if strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			return true
		}
	}
	return false
}
