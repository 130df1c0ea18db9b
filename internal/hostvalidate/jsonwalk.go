package hostvalidate

import "github.com/lemonmcp/lemonmcp/internal/jsonx"

// Small helpers for validating decoded JSON (maps, slices, strings,
// jsonx.Number, bools) without a schema library.

// decodeObject decodes a JSON object; empty input and null read as {}.
func decodeObject(data []byte) (map[string]any, bool) {
	var m map[string]any
	if err := jsonx.Unmarshal(orEmptyObject(data), &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func asObject(v any) (map[string]any, bool) { m, ok := v.(map[string]any); return m, ok }

func asArray(v any) ([]any, bool) { a, ok := v.([]any); return a, ok }

func asString(v any) (string, bool) { s, ok := v.(string); return s, ok }

// asNumber reads a JSON number.
func asNumber(v any) (float64, bool) {
	n, ok := v.(jsonx.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// asInteger reads a JSON number that is a whole number.
func asInteger(v any) (int64, bool) {
	f, ok := asNumber(v)
	if !ok || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// orEmptyObject reads empty input and null as {}.
func orEmptyObject(raw []byte) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}")
	}
	return raw
}
