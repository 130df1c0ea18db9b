package toolsearch

import (
	"errors"
	"sort"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// maxParamDepth bounds how deep nested object parameters are read.
const maxParamDepth = 3

// ParseTool reads a tool object as tools/list gives it (with a host's
// "server" and "original_name" when present): the title is "title", else
// "annotations.title"; the parameters are the input schema's properties,
// nested objects and arrays of objects included (as parent.child), each
// with its title, description and enumerated values. Members of an
// unexpected type are ignored (a server's odd schema must not hide its
// tool); only a text that is not a JSON object is an error.
func ParseTool(raw []byte) (Tool, error) {
	var obj map[string]any
	if err := jsonx.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Tool{}, errors.New("a tool is not a JSON object")
	}
	return FromObject(obj), nil
}

// FromObject is ParseTool of a decoded tool object.
func FromObject(obj map[string]any) Tool {
	t := Tool{
		Name:         str(obj["name"]),
		OriginalName: str(obj["original_name"]),
		Server:       str(obj["server"]),
		Title:        str(obj["title"]),
		Description:  str(obj["description"]),
	}
	if t.Title == "" {
		if ann, ok := obj["annotations"].(map[string]any); ok {
			t.Title = str(ann["title"])
		}
	}
	if schema, ok := obj["inputSchema"].(map[string]any); ok {
		t.Params = appendParams(nil, "", schema, 0)
	}
	return t
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// appendParams adds the properties of an object schema, sorted by name.
func appendParams(out []Param, prefix string, schema map[string]any, depth int) []Param {
	props, _ := schema["properties"].(map[string]any)
	if depth >= maxParamDepth || len(props) == 0 {
		return out
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s, _ := props[n].(map[string]any)
		var desc strings.Builder
		desc.WriteString(str(s["title"]))
		if d := str(s["description"]); d != "" {
			desc.WriteByte(' ')
			desc.WriteString(d)
		}
		if enum, ok := s["enum"].([]any); ok {
			for _, v := range enum {
				if e := str(v); e != "" {
					desc.WriteByte(' ')
					desc.WriteString(e)
				}
			}
		}
		out = append(out, Param{Name: prefix + n, Description: desc.String()})
		nested := s
		if items, ok := s["items"].(map[string]any); ok && s["properties"] == nil {
			nested = items
		}
		out = appendParams(out, prefix+n+".", nested, depth+1)
	}
	return out
}
