package core

import (
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// serveRoots asks the host for its roots and checks the answer before the
// server sees it: {"roots":[{"uri":"file://…","name"?}]}.
func (c *Client) serveRoots(req *serverRequest) {
	c.askHost("roots", req, hostPayload(req), c.answerWith(req, checkRootsResult), c.expireWithError(req))
}

func checkRootsResult(data []byte) ([]byte, *Error) {
	var res struct {
		Roots *[]map[string]any `json:"roots"`
	}
	if err := jsonx.Unmarshal(orEmptyObject(data), &res); err != nil || res.Roots == nil {
		return nil, Errorf(StatusInvalidArgument, "a roots answer must be {\"roots\": [{\"uri\": \"file://...\"}]}")
	}
	for i, r := range *res.Roots {
		uri, ok := r["uri"].(string)
		if !ok || !strings.HasPrefix(uri, "file://") {
			return nil, Errorf(StatusInvalidArgument, "roots[%d].uri must be a file:// URI", i)
		}
		if name, has := r["name"]; has {
			if _, ok := name.(string); !ok {
				return nil, Errorf(StatusInvalidArgument, "roots[%d].name must be a string", i)
			}
		}
	}
	return data, nil
}
