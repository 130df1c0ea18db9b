package sseparse

import (
	"bytes"
	"time"
)

// item is what a reader yields, in a form both the reader and the model
// produce: an event, or an oversized event.
type item struct {
	Type, Data, ID string
	TooLarge       string // the field that went over; "" for an event
	Head           string
}

type outcome struct {
	Items    []item
	LastID   string
	Retry    time.Duration
	HasRetry bool
}

// model is the reference the reader must match: the WHATWG interpretation
// rules applied line by line to the whole input at once, plus the limits.
// It is written for clarity, not speed.
func model(input []byte, limit int) outcome {
	var out outcome
	input = bytes.TrimPrefix(input, utf8BOM)
	var data []byte
	var hasData, skipping bool
	var typ, idBuf string

	for len(input) > 0 {
		end := bytes.IndexAny(input, "\r\n")
		complete := end >= 0
		line := input
		if complete {
			line = input[:end]
			if input[end] == '\r' && end+1 < len(input) && input[end+1] == '\n' {
				input = input[end+2:]
			} else {
				input = input[end+1:]
			}
		} else {
			input = nil
		}

		if complete && len(line) == 0 {
			if skipping {
				skipping = false
				continue
			}
			out.LastID = idBuf
			if hasData {
				t := typ
				if t == "" {
					t = "message"
				}
				out.Items = append(out.Items, item{Type: t, Data: string(data), ID: out.LastID})
			}
			data, hasData, typ = nil, false, ""
			continue
		}
		if len(line) > 0 && line[0] == ':' {
			continue
		}
		name, value, hasColon := bytes.Cut(line, []byte(":"))
		if hasColon && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if !complete && !hasColon {
			break // the reader never learned the field's name
		}
		if skipping {
			continue
		}
		tooLarge := func(field string, head []byte) {
			out.Items = append(out.Items, item{TooLarge: field, Head: string(head)})
			skipping = true
			data, hasData, typ = nil, false, ""
		}
		switch string(name) {
		case "data":
			joined := append([]byte(nil), data...)
			if hasData {
				joined = append(joined, '\n')
			}
			joined = append(joined, value...)
			if len(joined) > limit {
				tooLarge("data", joined[:min(HeadBytes, limit+1)])
				continue
			}
			data, hasData = joined, true
		case "event", "id", "retry":
			if len(value) > MaxFieldBytes {
				tooLarge(string(name), nil)
				continue
			}
			if !complete {
				continue
			}
			switch string(name) {
			case "event":
				typ = string(value)
			case "id":
				if bytes.IndexByte(value, 0) < 0 {
					idBuf = string(value)
				}
			case "retry":
				if d, ok := parseRetryModel(string(value)); ok {
					out.Retry, out.HasRetry = d, true
				}
			}
		}
	}
	return out
}

func parseRetryModel(s string) (time.Duration, bool) {
	if s == "" || len(s) > 13 { // 13 digits of ms fit a Duration comfortably
		return parseRetry([]byte(s)) // defer to the overflow rule for huge values
	}
	var ms int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		ms = ms*10 + int64(c-'0')
	}
	return time.Duration(ms) * time.Millisecond, true
}
