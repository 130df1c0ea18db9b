package hostvalidate

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Elicitation is a checked elicitation/create request: its mode and, in
// form mode, the requested schema its answer is checked against.
type Elicitation struct {
	Mode   string // "form" or "url"
	schema *formSchema
}

// ElicitationRequest checks elicitation/create params (raw JSON) against
// the modes the client declared. It returns the request, or a message for
// a -32602 error.
func ElicitationRequest(raw []byte, formDeclared, urlDeclared bool) (*Elicitation, string) {
	params, ok := decodeObject(raw)
	if !ok {
		return nil, "elicitation/create params must be a JSON object"
	}
	mode := "form"
	if m, has := params["mode"]; has {
		s, ok := asString(m)
		if !ok || (s != "form" && s != "url") {
			return nil, `elicitation mode must be "form" or "url"`
		}
		mode = s
	}
	if (mode == "form" && !formDeclared) || (mode == "url" && !urlDeclared) {
		return nil, "the client did not declare elicitation mode \"" + mode + "\""
	}
	if _, ok := asString(params["message"]); !ok {
		return nil, "elicitation/create needs a string message"
	}
	e := &Elicitation{Mode: mode}
	if mode == "form" {
		var err string
		if e.schema, err = parseFormSchema(params["requestedSchema"]); err != "" {
			return nil, "invalid requestedSchema: " + err
		}
	} else if err := checkURLParams(params); err != "" {
		return nil, err
	}
	return e, ""
}

// checkURLParams checks the url-mode members: an absolute url and an
// elicitationId.
func checkURLParams(params map[string]any) string {
	raw, ok := asString(params["url"])
	if !ok {
		return "url-mode elicitation needs a string url"
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "url-mode elicitation needs an absolute url"
	}
	if _, ok := asString(params["elicitationId"]); !ok {
		return "url-mode elicitation needs a string elicitationId"
	}
	return ""
}

// formSchema is a requested schema: an object of primitive properties.
type formSchema struct {
	props    map[string]*fieldSchema
	required []string
}

// fieldSchema is one primitive property.
type fieldSchema struct {
	kind       string   // "string", "number", "integer", "boolean", "array"
	options    []string // allowed values (single- or multi-select enums)
	minLen     *int64
	maxLen     *int64
	format     string
	minimum    *float64
	maximum    *float64
	minItems   *int64
	maxItems   *int64
	def        any
	hasDefault bool
}

func parseFormSchema(v any) (*formSchema, string) {
	obj, ok := asObject(v)
	if !ok {
		return nil, "it must be a JSON object"
	}
	if t, _ := asString(obj["type"]); t != "object" {
		return nil, `its type must be "object"`
	}
	props, ok := asObject(obj["properties"])
	if !ok {
		return nil, "it needs a properties object"
	}
	fs := &formSchema{props: map[string]*fieldSchema{}}
	for name, p := range props {
		f, err := parseField(p)
		if err != "" {
			return nil, "property " + name + ": " + err
		}
		fs.props[name] = f
	}
	if r, has := obj["required"]; has {
		arr, ok := asArray(r)
		if !ok {
			return nil, "required must be an array of property names"
		}
		for _, item := range arr {
			s, ok := asString(item)
			if !ok || fs.props[s] == nil {
				return nil, "required names a property that is not defined"
			}
			fs.required = append(fs.required, s)
		}
	}
	return fs, ""
}

func parseField(v any) (*fieldSchema, string) {
	obj, ok := asObject(v)
	if !ok {
		return nil, "must be a JSON object"
	}
	f := &fieldSchema{}
	f.kind, _ = asString(obj["type"])
	switch f.kind {
	case "string":
		if opts, err := stringOptions(obj); err != "" {
			return nil, err
		} else {
			f.options = opts
		}
		f.format, _ = asString(obj["format"])
		f.minLen, f.maxLen = optInt(obj["minLength"]), optInt(obj["maxLength"])
	case "number", "integer":
		f.minimum, f.maximum = optNum(obj["minimum"]), optNum(obj["maximum"])
	case "boolean":
	case "array":
		items, ok := asObject(obj["items"])
		if !ok {
			return nil, "a multi-select needs an items object"
		}
		opts, err := stringOptions(items)
		if err != "" || len(opts) == 0 {
			return nil, "a multi-select's items need enum or anyOf options"
		}
		f.options = opts
		f.minItems, f.maxItems = optInt(obj["minItems"]), optInt(obj["maxItems"])
	default:
		return nil, "type must be string, number, integer, boolean or array (nested objects are not allowed)"
	}
	if d, has := obj["default"]; has {
		f.def, f.hasDefault = d, true
		if err := f.check(d); err != "" {
			return nil, "its default is invalid: " + err
		}
	}
	return f, ""
}

// stringOptions reads the allowed values of every enum form (SEP-1330):
// enum (with or without legacy enumNames), oneOf / anyOf of {const, title}.
func stringOptions(obj map[string]any) ([]string, string) {
	var out []string
	if e, has := obj["enum"]; has {
		arr, ok := asArray(e)
		if !ok {
			return nil, "enum must be an array of strings"
		}
		for _, item := range arr {
			s, ok := asString(item)
			if !ok {
				return nil, "enum must be an array of strings"
			}
			out = append(out, s)
		}
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		alts, has := obj[key]
		if !has {
			continue
		}
		arr, ok := asArray(alts)
		if !ok {
			return nil, key + " must be an array of {const, title}"
		}
		for _, alt := range arr {
			a, ok := asObject(alt)
			s, isStr := asString(a["const"])
			if !ok || !isStr {
				return nil, key + " entries need a string const"
			}
			out = append(out, s)
		}
	}
	return out, ""
}

func optInt(v any) *int64 {
	if n, ok := asInteger(v); ok {
		return &n
	}
	return nil
}

func optNum(v any) *float64 {
	if n, ok := asNumber(v); ok {
		return &n
	}
	return nil
}

// check validates one value against the field.
func (f *fieldSchema) check(v any) string {
	switch f.kind {
	case "string":
		s, ok := asString(v)
		if !ok {
			return "must be a string"
		}
		n := int64(utf8.RuneCountInString(s))
		if f.minLen != nil && n < *f.minLen {
			return "is shorter than minLength"
		}
		if f.maxLen != nil && n > *f.maxLen {
			return "is longer than maxLength"
		}
		if len(f.options) > 0 && !slices.Contains(f.options, s) {
			return "is not one of the allowed values"
		}
		return checkFormat(f.format, s)
	case "number", "integer":
		n, ok := asNumber(v)
		if !ok {
			return "must be a number"
		}
		if f.kind == "integer" && n != float64(int64(n)) {
			return "must be an integer"
		}
		if f.minimum != nil && n < *f.minimum {
			return "is below minimum"
		}
		if f.maximum != nil && n > *f.maximum {
			return "is above maximum"
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	case "array":
		arr, ok := asArray(v)
		if !ok {
			return "must be an array of strings"
		}
		for _, item := range arr {
			s, ok := asString(item)
			if !ok || !slices.Contains(f.options, s) {
				return "holds a value that is not one of the allowed values"
			}
		}
		if f.minItems != nil && int64(len(arr)) < *f.minItems {
			return "has fewer items than minItems"
		}
		if f.maxItems != nil && int64(len(arr)) > *f.maxItems {
			return "has more items than maxItems"
		}
	}
	return ""
}

func checkFormat(format, s string) string {
	switch format {
	case "email":
		if _, err := mail.ParseAddress(s); err != nil {
			return "is not an email address"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || !u.IsAbs() {
			return "is not an absolute URI"
		}
	case "date":
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return "is not a date (YYYY-MM-DD)"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "is not a date-time (RFC 3339)"
		}
	}
	return ""
}

// Answer validates the host's answer and returns the result the server
// gets: content with defaults applied for accept in form mode, no content
// otherwise. A refused answer yields "" and a message naming the problem.
func (e *Elicitation) Answer(data []byte) ([]byte, string) {
	mode, schema := e.Mode, e.schema
	res, ok := decodeObject(data)
	if !ok {
		return nil, "an elicitation answer must be a JSON object"
	}
	action, _ := asString(res["action"])
	out := map[string]any{"action": action}
	if meta, has := res["_meta"]; has {
		out["_meta"] = meta
	}
	switch action {
	case "decline", "cancel":
		return jsonx.MustMarshal(out), ""
	case "accept":
	default:
		return nil, `an elicitation answer's action must be "accept", "decline" or "cancel"`
	}
	if mode == "url" {
		return jsonx.MustMarshal(out), ""
	}
	content := map[string]any{}
	if raw, has := res["content"]; has {
		if content, ok = asObject(raw); !ok {
			return nil, "an accepted elicitation's content must be a JSON object"
		}
	}
	for name, f := range schema.props {
		if _, has := content[name]; !has && f.hasDefault {
			content[name] = f.def
		}
	}
	for name, v := range content {
		f := schema.props[name]
		if f == nil {
			return nil, fmt.Sprintf("content.%s is not in the requested schema", name)
		}
		if err := f.check(v); err != "" {
			return nil, fmt.Sprintf("content.%s %s", name, err)
		}
	}
	for _, name := range schema.required {
		if _, has := content[name]; !has {
			return nil, fmt.Sprintf("content.%s is required", name)
		}
	}
	out["content"] = content
	return jsonx.MustMarshal(out), ""
}
