package tracecontext

import (
	"errors"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Limits of the W3C Trace Context and Baggage recommendations.
const (
	maxTraceStateBytes   = 512
	maxTraceStateMembers = 32
	maxBaggageBytes      = 8192
)

// Context is one trace context as MCP carries it in params._meta. The zero
// value is "no trace context".
type Context struct {
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
	Baggage     string `json:"baggage,omitempty"`
}

// Empty reports whether c carries nothing.
func (c Context) Empty() bool { return c.TraceParent == "" && c.TraceState == "" && c.Baggage == "" }

// Clean returns what of c may be sent, and a problem for each part
// dropped. A malformed traceparent drops the whole context's trace part
// (tracestate means nothing without it); a malformed tracestate or baggage
// drops only itself.
func (c Context) Clean() (Context, []string) {
	var out Context
	var problems []string
	switch {
	case c.TraceParent == "":
		if c.TraceState != "" {
			problems = append(problems, "tracestate without a traceparent was dropped")
		}
	default:
		if err := CheckTraceParent(c.TraceParent); err != nil {
			problems = append(problems, "traceparent was dropped: "+err.Error())
			break
		}
		out.TraceParent = c.TraceParent
		if c.TraceState != "" {
			if err := CheckTraceState(c.TraceState); err != nil {
				problems = append(problems, "tracestate was dropped: "+err.Error())
			} else {
				out.TraceState = c.TraceState
			}
		}
	}
	if c.Baggage != "" {
		if err := CheckBaggage(c.Baggage); err != nil {
			problems = append(problems, "baggage was dropped: "+err.Error())
		} else {
			out.Baggage = c.Baggage
		}
	}
	return out, problems
}

// CheckTraceParent accepts a W3C traceparent: version-traceid-parentid-flags
// in lowercase hex, trace and parent ids not all zeros, version not ff. A
// version other than 00 may carry more fields after a dash (the
// recommendation's forward compatibility); 00 may not.
func CheckTraceParent(s string) error {
	if len(s) < 55 {
		return errors.New("a traceparent is version-traceid-parentid-flags, 55 characters")
	}
	if !lowerHex(s[0:2]) || s[0:2] == "ff" {
		return errors.New("the traceparent version is not two lowercase hex digits other than ff")
	}
	if s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return errors.New("the traceparent fields are not separated by dashes")
	}
	if !lowerHex(s[3:35]) || allZero(s[3:35]) {
		return errors.New("the trace id is not 32 lowercase hex digits, not all zero")
	}
	if !lowerHex(s[36:52]) || allZero(s[36:52]) {
		return errors.New("the parent id is not 16 lowercase hex digits, not all zero")
	}
	if !lowerHex(s[53:55]) {
		return errors.New("the trace flags are not two lowercase hex digits")
	}
	if len(s) > 55 && (s[0:2] == "00" || s[55] != '-') {
		return errors.New("the traceparent has characters after its flags")
	}
	return nil
}

// CheckTraceState accepts a tracestate list: at most 32 comma-separated
// key=value members, 512 bytes, printable ASCII.
func CheckTraceState(s string) error {
	if len(s) > maxTraceStateBytes {
		return errors.New("tracestate is longer than 512 bytes")
	}
	if !printable(s) {
		return errors.New("tracestate has a character that is not printable ASCII")
	}
	members := 0
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		members++
		if eq := strings.IndexByte(m, '='); eq <= 0 || eq == len(m)-1 {
			return errors.New("a tracestate member is not key=value")
		}
	}
	if members > maxTraceStateMembers {
		return errors.New("tracestate has more than 32 members")
	}
	return nil
}

// CheckBaggage accepts a baggage header value: printable ASCII, at most
// 8192 bytes, each comma-separated member key=value.
func CheckBaggage(s string) error {
	if len(s) > maxBaggageBytes {
		return errors.New("baggage is longer than 8192 bytes")
	}
	if !printable(s) {
		return errors.New("baggage has a character that is not printable ASCII")
	}
	for _, m := range strings.Split(s, ",") {
		kv, _, _ := strings.Cut(m, ";")
		if eq := strings.IndexByte(kv, '='); eq <= 0 || strings.TrimSpace(kv[:eq]) == "" {
			return errors.New("a baggage member is not key=value")
		}
	}
	return nil
}

// AppendMembers appends c's non-empty parts as JSON object members
// ("traceparent":"...",...) with no leading or trailing comma.
func AppendMembers(buf []byte, c Context) []byte {
	first := true
	add := func(name, v string) {
		if v == "" {
			return
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, '"')
		buf = append(buf, name...)
		buf = append(buf, `":`...)
		buf = jsonx.AppendString(buf, v)
	}
	add("traceparent", c.TraceParent)
	add("tracestate", c.TraceState)
	add("baggage", c.Baggage)
	return buf
}

// FromParams reads the trace context of a request's params._meta (params
// a JSON object, or nil). Only a valid traceparent counts; what is
// malformed is left out, as Clean leaves it.
func FromParams(params []byte) Context {
	if len(params) == 0 {
		return Context{}
	}
	var p struct {
		Meta struct {
			TraceParent any `json:"traceparent"`
			TraceState  any `json:"tracestate"`
			Baggage     any `json:"baggage"`
		} `json:"_meta"`
	}
	if jsonx.Unmarshal(params, &p) != nil {
		return Context{}
	}
	str := func(v any) string { s, _ := v.(string); return s }
	c, _ := Context{TraceParent: str(p.Meta.TraceParent), TraceState: str(p.Meta.TraceState), Baggage: str(p.Meta.Baggage)}.Clean()
	return c
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			return false
		}
	}
	return true
}
