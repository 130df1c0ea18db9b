package config

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// object walks one JSON object of the configuration, checking each field's
// type and remembering which fields were read so that unknown ones can be
// reported. Error messages name the field's path and never echo its value
// (values may be secrets).
type object struct {
	path string
	m    map[string]any
	used map[string]bool
}

func newObject(path string, v any) (*object, *core.Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(path, "must be a JSON object")
	}
	return &object{path: path, m: m, used: map[string]bool{}}, nil
}

func invalid(path, what string) *core.Error {
	return core.Errorf(core.StatusInvalidArgument, "%s: %s", path, what)
}

func (o *object) at(key string) string { return o.path + "." + key }

func (o *object) get(key string) (any, bool) {
	o.used[key] = true
	v, ok := o.m[key]
	if ok && v == nil {
		return nil, false // null means absent
	}
	return v, ok
}

func (o *object) str(key string) (string, bool, *core.Error) {
	v, ok := o.get(key)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, invalid(o.at(key), "must be a string")
	}
	return s, true, nil
}

func (o *object) requiredStr(key string) (string, *core.Error) {
	s, ok, err := o.str(key)
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(s) == "" {
		return "", invalid(o.at(key), "is required and must be a non-empty string")
	}
	return s, nil
}

func (o *object) enum(key, def string, allowed ...string) (string, *core.Error) {
	s, ok, err := o.str(key)
	if err != nil || !ok {
		return def, err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", invalid(o.at(key), "must be one of "+quoteAll(allowed))
}

func (o *object) strList(key string) ([]string, bool, *core.Error) {
	v, ok := o.get(key)
	if !ok {
		return nil, false, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, false, invalid(o.at(key), "must be an array of strings")
	}
	out := make([]string, len(arr))
	for i, item := range arr {
		s, isStr := item.(string)
		if !isStr {
			return nil, false, invalid(o.at(key)+"["+itoa(i)+"]", "must be a string")
		}
		out[i] = s
	}
	return out, true, nil
}

func (o *object) strMap(key string) (map[string]string, *core.Error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, invalid(o.at(key), "must be a JSON object of strings")
	}
	out := make(map[string]string, len(m))
	for k, item := range m {
		s, isStr := item.(string)
		if !isStr {
			return nil, invalid(o.at(key)+"."+k, "must be a string")
		}
		out[k] = s
	}
	return out, nil
}

func (o *object) boolean(key string) (bool, bool, *core.Error) {
	v, ok := o.get(key)
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, false, invalid(o.at(key), "must be true or false")
	}
	return b, true, nil
}

// integer reads a whole number in [min, max].
func (o *object) integer(key string, min, max int64) (int64, bool, *core.Error) {
	v, ok := o.get(key)
	if !ok {
		return 0, false, nil
	}
	n, isNum := v.(jsonx.Number)
	if !isNum {
		return 0, false, invalid(o.at(key), "must be a whole number")
	}
	i, err := n.Int64()
	if err != nil {
		return 0, false, invalid(o.at(key), "must be a whole number")
	}
	if i < min || i > max {
		return 0, false, invalid(o.at(key), "must be between "+itoa64(min)+" and "+itoa64(max))
	}
	return i, true, nil
}

// millis reads a duration in milliseconds into *d when present.
func (o *object) millis(key string, min int64, d *time.Duration) *core.Error {
	n, ok, err := o.integer(key, min, 1<<40)
	if err != nil || !ok {
		return err
	}
	*d = time.Duration(n) * time.Millisecond
	return nil
}

func (o *object) sub(key string) (*object, bool, *core.Error) {
	v, ok := o.get(key)
	if !ok {
		return nil, false, nil
	}
	s, err := newObject(o.at(key), v)
	return s, err == nil, err
}

// onlyKnown reports the first field (in name order) that is not one of
// known, before any field is read.
func (o *object) onlyKnown(known ...string) *core.Error {
	var unknown []string
	for k := range o.m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return invalid(o.at(unknown[0]), "is not a known field")
}

// finish reports the first unknown field, in name order for stable errors.
func (o *object) finish() *core.Error {
	var unknown []string
	for k := range o.m {
		if !o.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return invalid(o.at(unknown[0]), "is not a known field")
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = `"` + s + `"`
	}
	return strings.Join(q, ", ")
}

func itoa(i int) string { return strconv.Itoa(i) }

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }
