package httpclient

import (
	"net/http"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/redact"
)

// publicHeaders are the headers the library itself sets whose values are
// never secret (and so common that scrubbing them would garble any text).
var publicHeaders = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Content-Type": true, "Content-Length": true,
	"User-Agent": true, "Mcp-Protocol-Version": true, "Mcp-Method": true, "Mcp-Name": true,
	"Last-Event-Id": true, "Connection": true, "Host": true,
}

// minWordBytes: a word of a header value ("Bearer <token>") is scrubbed on
// its own when at least this long, so that an echo of the token alone is
// caught too.
const minWordBytes = 8

// Secrets returns the values of the headers req carried that may be secret:
// every header but a few the library sets itself (Authorization, DPoP,
// Mcp-Session-Id and every configured header included), with the long
// words of each value on their own. nil for a nil request.
func Secrets(req *http.Request) redact.Set {
	if req == nil {
		return nil
	}
	var out []string
	for name, values := range req.Header {
		if publicHeaders[name] || strings.HasPrefix(name, "Mcp-Param-") {
			continue
		}
		for _, v := range values {
			out = append(out, v)
			for _, w := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
				if len(w) >= minWordBytes && w != v {
					out = append(out, w)
				}
			}
		}
	}
	return redact.NewSet(out...)
}
