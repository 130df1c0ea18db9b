package core

import "github.com/lemonmcp/lemonmcp/internal/hostvalidate"

// serveRoots asks the host for its roots and checks the answer before the
// server sees it: {"roots":[{"uri":"file://…","name"?}]}.
func (c *Client) serveRoots(req *serverRequest) {
	c.askHost("roots", req, hostPayload(req), c.answerWith(req, passedAnswer(hostvalidate.RootsAnswer)), c.expireWithError(req))
}

// checkedAnswer adapts a hostvalidate check that rewrites the answer to
// answerWith: a refused answer is the host's invalid argument.
func checkedAnswer(check func([]byte) ([]byte, string)) func([]byte) ([]byte, *Error) {
	return func(data []byte) ([]byte, *Error) {
		out, msg := check(data)
		if msg != "" {
			return nil, Errorf(StatusInvalidArgument, "%s", msg)
		}
		return out, nil
	}
}

// passedAnswer adapts a hostvalidate check that passes a valid answer on
// unchanged.
func passedAnswer(check func([]byte) string) func([]byte) ([]byte, *Error) {
	return func(data []byte) ([]byte, *Error) {
		if msg := check(data); msg != "" {
			return nil, Errorf(StatusInvalidArgument, "%s", msg)
		}
		return data, nil
	}
}
