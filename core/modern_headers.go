package core

import (
	"math"
	"strconv"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/transport"
)

// headerBinding is one tool parameter annotated with x-mcp-header: the
// chain of properties keys leading to it, and the header's name part.
type headerBinding struct {
	path   []string
	header string
}

// maxSafeInteger bounds the integers a header may carry (JavaScript's safe
// range, as SEP-2243 requires).
const maxSafeInteger = 1<<53 - 1

// filterToolsList checks the x-mcp-header annotations of a tools/list
// result (or page) and remembers each valid tool's bindings for tools/call.
// A tool whose annotations break the rules is dropped from what the host
// gets, with a warning (spec 2026-07-28, Streamable HTTP, x-mcp-header).
// The result's bytes are kept as they are when nothing is dropped.
func (c *Client) filterToolsList(result []byte) []byte {
	var res map[string]jsonx.RawMessage
	if jsonx.Unmarshal(result, &res) != nil {
		return result
	}
	var tools []jsonx.RawMessage
	if raw, ok := res["tools"]; !ok || jsonx.Unmarshal(raw, &tools) != nil {
		return result
	}
	kept := make([]jsonx.RawMessage, 0, len(tools))
	found := map[string][]headerBinding{}
	for _, raw := range tools {
		var tool struct {
			Name        string `json:"name"`
			InputSchema any    `json:"inputSchema"`
		}
		if jsonx.Unmarshal(raw, &tool) != nil {
			kept = append(kept, raw)
			continue
		}
		bindings, why := headerBindings(tool.InputSchema)
		if why != "" {
			c.logf("warning", "dropped tool %q from tools/list: its x-mcp-header annotations are invalid (%s)", tool.Name, why)
			continue
		}
		found[tool.Name] = bindings
		kept = append(kept, raw)
	}
	c.thMu.Lock()
	if c.toolHeaders == nil {
		c.toolHeaders = map[string][]headerBinding{}
	}
	for name, b := range found {
		if len(b) == 0 {
			delete(c.toolHeaders, name)
		} else {
			c.toolHeaders[name] = b
		}
	}
	c.thMu.Unlock()
	if len(kept) == len(tools) {
		return result
	}
	res["tools"] = jsonx.MustMarshal(kept)
	return jsonx.MustMarshal(res)
}

// headerBindings walks a tool's inputSchema. An annotation is valid on a
// string, integer or boolean property reached from the root through
// properties keys only; its value is a non-empty HTTP token, unique
// case-insensitively. Anywhere else (under items, oneOf, $defs, ...) it
// makes the tool invalid. It returns the bindings, or why the tool is
// invalid.
func headerBindings(schema any) ([]headerBinding, string) {
	w := &bindingWalk{seen: map[string]bool{}}
	w.walk(schema, nil, true, false)
	return w.out, w.why
}

type bindingWalk struct {
	out  []headerBinding
	seen map[string]bool
	why  string
}

// schemaDataKeys hold instance data, not schemas: an "x-mcp-header" key
// inside them is a value, not an annotation.
var schemaDataKeys = map[string]bool{"default": true, "const": true, "enum": true, "examples": true}

func (w *bindingWalk) walk(node any, path []string, reachable, isProperty bool) {
	if w.why != "" {
		return
	}
	switch n := node.(type) {
	case []any:
		for _, item := range n {
			w.walk(item, path, false, false)
		}
	case map[string]any:
		if v, has := n["x-mcp-header"]; has {
			w.annotation(n, v, path, reachable && isProperty)
			if w.why != "" {
				return
			}
		}
		for key, child := range n {
			switch {
			case key == "properties":
				props, ok := child.(map[string]any)
				if !ok {
					continue
				}
				for name, prop := range props {
					w.walk(prop, append(append([]string(nil), path...), name), reachable, true)
				}
			case schemaDataKeys[key]:
			default:
				w.walk(child, path, false, false)
			}
		}
	}
}

func (w *bindingWalk) annotation(prop map[string]any, v any, path []string, reachable bool) {
	where := "the schema root"
	if len(path) > 0 {
		where = "property " + strings.Join(path, ".")
	}
	name, ok := v.(string)
	switch {
	case !reachable:
		w.why = "an annotation on " + where + " is not reachable through properties alone"
	case !ok || name == "":
		w.why = where + ": x-mcp-header must be a non-empty string"
	case !isToken(name):
		w.why = where + ": x-mcp-header " + strconv.Quote(name) + " is not an HTTP token"
	case w.seen[strings.ToLower(name)]:
		w.why = where + ": x-mcp-header " + strconv.Quote(name) + " is used twice (case-insensitively)"
	}
	if w.why != "" {
		return
	}
	switch t, _ := prop["type"].(string); t {
	case "string", "integer", "boolean":
	default:
		w.why = where + ": x-mcp-header applies to string, integer or boolean properties only"
		return
	}
	w.seen[strings.ToLower(name)] = true
	w.out = append(w.out, headerBinding{path: path, header: name})
}

// isToken: RFC 9110 tchar.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= '0' && ch <= '9', ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0:
		default:
			return false
		}
	}
	return true
}

// appendParamHeaders mirrors the annotated arguments of a tools/call into
// Mcp-Param-{Name}: strings as they are, integers in decimal, booleans as
// true/false, encoded like Mcp-Name; null, absent or other values send
// nothing. Tools never listed have no bindings.
func (c *Client) appendParamHeaders(h []transport.Header, tool string, args []byte) []transport.Header {
	c.thMu.Lock()
	bindings := c.toolHeaders[tool]
	c.thMu.Unlock()
	if len(bindings) == 0 || len(args) == 0 {
		return h
	}
	var decoded any
	if jsonx.Unmarshal(args, &decoded) != nil {
		return h
	}
	for _, b := range bindings {
		v, ok := lookupPath(decoded, b.path)
		if !ok {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case bool:
			s = strconv.FormatBool(x)
		case jsonx.Number:
			f, err := x.Float64()
			if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
				continue
			}
			s = strconv.FormatInt(int64(f), 10)
		default:
			continue
		}
		h = append(h, transport.Header{Name: headerParamPrefix + b.header, Value: encodeHeaderValue(s)})
	}
	return h
}

func lookupPath(v any, path []string) (any, bool) {
	for _, key := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[key]; !ok {
			return nil, false
		}
	}
	return v, v != nil
}
