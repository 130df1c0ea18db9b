package core

import (
	"strconv"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// compactParams checks that params is absent or one JSON object and returns
// it without raw line breaks.
func compactParams(params []byte) ([]byte, *Error) {
	if len(params) == 0 {
		return nil, nil
	}
	out, err := jsonx.CompactObject(params)
	if err != nil {
		return nil, Errorf(StatusInvalidArgument, "params must be a JSON object: %s", err.Error())
	}
	if len(out) == 0 || string(out) == "{}" {
		return nil, nil
	}
	return out, nil
}

// prepareParams validates params and, when asked, merges _meta and a
// progress token (the call id) into it. The common case — no _meta, no
// progress — returns the host's bytes without re-encoding.
func prepareParams(params []byte, opts CallOptions, callID uint64, progressToken bool) ([]byte, *Error) {
	compact, err := compactParams(params)
	if err != nil {
		return nil, err
	}
	if len(opts.Meta) == 0 && !progressToken {
		return compact, nil
	}
	fields := map[string]any{}
	if len(compact) > 0 {
		if err := jsonx.Unmarshal(compact, &fields); err != nil {
			return nil, Errorf(StatusInvalidArgument, "params must be a JSON object")
		}
	}
	meta := map[string]any{}
	if existing, ok := fields["_meta"]; ok {
		m, ok := existing.(map[string]any)
		if !ok {
			return nil, Errorf(StatusInvalidArgument, "params._meta must be a JSON object")
		}
		meta = m
	}
	if len(opts.Meta) > 0 {
		extra := map[string]any{}
		if err := jsonx.Unmarshal(opts.Meta, &extra); err != nil {
			return nil, Errorf(StatusInvalidArgument, "options._meta must be a JSON object")
		}
		for k, v := range extra {
			meta[k] = v
		}
	}
	if progressToken {
		meta["progressToken"] = callID
	}
	fields["_meta"] = meta
	out, merr := jsonx.Marshal(fields)
	if merr != nil {
		return nil, Errorf(StatusInvalidArgument, "params cannot be encoded: %s", merr.Error())
	}
	return out, nil
}

// withField returns params (a JSON object or nil) with key set to value.
func withField(params []byte, key string, value any) ([]byte, error) {
	fields := map[string]any{}
	if len(params) > 0 {
		if err := jsonx.Unmarshal(params, &fields); err != nil {
			return nil, err
		}
	}
	fields[key] = value
	return jsonx.Marshal(fields)
}

// decodeErrorJSON turns an error object produced by Error.JSON back into an
// *Error (used by blocking wrappers).
func decodeErrorJSON(status Status, data []byte) *Error {
	var obj struct {
		Message string           `json:"message"`
		Code    *int64           `json:"code"`
		Data    jsonx.RawMessage `json:"data"`
	}
	if err := jsonx.Unmarshal(data, &obj); err != nil {
		return &Error{Status: status, Message: status.String()}
	}
	return &Error{Status: status, Message: obj.Message, Code: obj.Code, Data: obj.Data}
}

func appendInt(buf []byte, n int64) []byte { return strconv.AppendInt(buf, n, 10) }

func appendJSONString(buf []byte, s string) []byte { return jsonx.AppendString(buf, s) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
