package hostvalidate

import (
	"fmt"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// RootsAnswer validates the host's roots:
// {"roots":[{"uri":"file://…","name"?}]}. It returns a message naming the
// problem, or "".
func RootsAnswer(data []byte) string {
	var res struct {
		Roots *[]map[string]any `json:"roots"`
	}
	if err := jsonx.Unmarshal(orEmptyObject(data), &res); err != nil || res.Roots == nil {
		return "a roots answer must be {\"roots\": [{\"uri\": \"file://...\"}]}"
	}
	for i, r := range *res.Roots {
		uri, ok := r["uri"].(string)
		if !ok || !strings.HasPrefix(uri, "file://") {
			return fmt.Sprintf("roots[%d].uri must be a file:// URI", i)
		}
		if name, has := r["name"]; has {
			if _, ok := name.(string); !ok {
				return fmt.Sprintf("roots[%d].name must be a string", i)
			}
		}
	}
	return ""
}
