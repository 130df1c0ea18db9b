package core

import "github.com/lemonmcp/lemonmcp/internal/hostvalidate"

// serveElicitation validates an elicitation/create request, asks the host,
// and checks the answer against the requested schema, filling in schema
// defaults for fields the host left out (SEP-1034). URL mode hands the URL
// to the host for consent; the library never fetches it.
func (c *Client) serveElicitation(req *serverRequest) {
	h := c.opts.Handlers
	e, msg := hostvalidate.ElicitationRequest(req.params, h.ElicitForm, h.ElicitURL)
	if msg != "" {
		c.replyError(req, codeInvalidParams, msg, nil)
		return
	}
	c.askHost("elicitation", req, hostPayload(req, "mode", e.Mode), c.answerWith(req, checkedAnswer(e.Answer)), c.expireWithError(req))
}
