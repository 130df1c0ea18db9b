package config

import (
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// ParseCallOptions reads the ABI's call options object:
// {"timeout_ms","reset_timeout_on_progress","max_total_ms","all_pages",
// "progress","wait_ready","fail_if_restarting","no_cache","task","_meta","verify",
// "trace"}.
// Empty input means defaults. Unknown fields are an error that names them.
// It runs on every call, so it reads the object in one pass with a pooled
// iterator and builds nothing the options do not hold.
func ParseCallOptions(raw []byte) (core.CallOptions, *core.Error) {
	var o core.CallOptions
	if len(raw) == 0 {
		return o, nil
	}
	if kind, err := jsonx.CheckValue(raw); err != nil || kind != jsonx.KindObject {
		return o, core.Errorf(core.StatusInvalidArgument, "options must be a JSON object")
	}
	it := jsonx.BorrowIterator(raw)
	defer jsonx.ReturnIterator(it)
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		switch field {
		case "timeout_ms", "max_total_ms":
			ms, err := readMillis(it, field)
			if err != nil {
				return o, err
			}
			if field == "timeout_ms" {
				o.Timeout, o.TimeoutSet = ms, true
			} else {
				o.MaxTotal, o.MaxTotalSet = ms, true
			}
		case "reset_timeout_on_progress", "all_pages", "progress", "wait_ready", "fail_if_restarting", "no_cache", "task":
			if it.WhatIsNext() != jsonx.KindBool {
				return o, core.Errorf(core.StatusInvalidArgument, "options.%s must be true or false", field)
			}
			v := it.ReadBool()
			switch field {
			case "reset_timeout_on_progress":
				o.ResetOnProgress, o.ResetSet = v, true
			case "all_pages":
				o.AllPages = v
			case "progress":
				o.Progress = v
			case "wait_ready":
				o.WaitReady = v
			case "fail_if_restarting":
				o.FailIfRestarting = v
			case "no_cache":
				o.NoCache = v
			case "task":
				o.Task = v
			}
		case "_meta":
			if it.WhatIsNext() != jsonx.KindObject {
				return o, core.Errorf(core.StatusInvalidArgument, "options._meta must be a JSON object")
			}
			o.Meta = it.SkipAndReturnBytes()
		case "trace":
			tc, err := readCallTrace(it)
			if err != nil {
				return o, err
			}
			o.Trace = tc
		case "verify":
			if it.WhatIsNext() != jsonx.KindObject {
				return o, core.Errorf(core.StatusInvalidArgument, "options.verify must be a JSON object")
			}
			v, err := core.ParseResourceVerify(it.SkipAndReturnBytes())
			if err != nil {
				return o, err
			}
			o.Verify = v
		default:
			return o, core.Errorf(core.StatusInvalidArgument, "options.%s is not a known call option", field)
		}
	}
	return o, nil
}

// readMillis reads a non-negative integer number of milliseconds.
func readMillis(it interface {
	WhatIsNext() jsonx.Kind
	ReadNumber() jsonx.Number
}, field string) (time.Duration, *core.Error) {
	if it.WhatIsNext() != jsonx.KindNumber {
		return 0, core.Errorf(core.StatusInvalidArgument, "options.%s must be a whole number of milliseconds", field)
	}
	n, err := it.ReadNumber().Int64()
	if err != nil || n < 0 {
		return 0, core.Errorf(core.StatusInvalidArgument, "options.%s must be a whole number of milliseconds, 0 or more", field)
	}
	return time.Duration(n) * time.Millisecond, nil
}
