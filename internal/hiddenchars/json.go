package hiddenchars

import (
	"sort"
	"strconv"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Finding is one place of a JSON value where something was removed.
type Finding struct {
	Kind  string `json:"kind"`  // KindHidden or KindANSI
	Path  string `json:"path"`  // where: "description", "inputSchema.properties.q.description", "arguments[0].name"
	Count int    `json:"count"` // characters (hidden) or sequences (ansi) removed
}

// CleanJSON cleans every string and member name of one JSON value. It
// returns raw itself when there was nothing to remove (most values: that
// check reads the bytes without decoding), else the cleaned value
// re-encoded, with the findings in path order. A value that is not JSON is
// returned as it is: the caller's own decoding reports it.
func CleanJSON(raw []byte) ([]byte, []Finding) {
	if !rawSuspect(raw) {
		return raw, nil
	}
	var v any
	if jsonx.Unmarshal(raw, &v) != nil {
		return raw, nil
	}
	var found []Finding
	v = cleanValue(v, "", &found)
	if len(found) == 0 {
		return raw, nil
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	return jsonx.MustMarshal(v), found
}

// rawSuspect reports whether encoded JSON may hold a string Clean would
// change: a multi-byte character, or an escape (\u, \b, \f, \r) that can
// spell a control or any other character. Tab and newline escapes are
// fine.
func rawSuspect(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c >= 0x80:
			return true
		case c == '\\' && i+1 < len(raw):
			switch raw[i+1] {
			case 'u', 'b', 'f', 'r':
				return true
			}
			i++ // the escaped character (\\ is one escape)
		}
	}
	return false
}

func cleanValue(v any, path string, found *[]Finding) any {
	switch x := v.(type) {
	case string:
		clean, n := Clean(x)
		record(found, path, n)
		return clean
	case []any:
		for i, e := range x {
			x[i] = cleanValue(e, path+"["+strconv.Itoa(i)+"]", found)
		}
		return x
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // visible members first claim their names
		for _, k := range keys {
			e := x[k]
			ck, n := Clean(k)
			at := join(path, ck)
			record(found, at, n)
			if ck != k {
				delete(x, k)
				if _, taken := x[ck]; taken {
					continue // a hidden twin of a visible member: dropped
				}
			}
			x[ck] = cleanValue(e, at, found)
		}
		return x
	}
	return v
}

func record(found *[]Finding, path string, n Counts) {
	if path == "" {
		path = "$"
	}
	if n.Hidden > 0 {
		*found = append(*found, Finding{Kind: KindHidden, Path: path, Count: n.Hidden})
	}
	if n.ANSI > 0 {
		*found = append(*found, Finding{Kind: KindANSI, Path: path, Count: n.ANSI})
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
