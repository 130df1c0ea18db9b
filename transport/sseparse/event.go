package sseparse

import "fmt"

// Event is one dispatched event.
type Event struct {
	// Type is the event field, or "message" when the event had none.
	Type string
	// Data is the data lines joined with "\n". It is only valid until the
	// next call to Next: the reader reuses its buffer.
	Data []byte
	// ID is the stream's last event ID once this event was dispatched: set
	// by this event's id field, or carried over from an earlier one.
	ID string
}

// TooLargeError reports an event over the reader's limits. The event is
// skipped; the reader goes on with the next one.
type TooLargeError struct {
	// Field is the field that went over: "data", or "event", "id", "retry".
	Field string
	// Limit is the limit in bytes that was exceeded.
	Limit int
	// Head is a copy of the first bytes of the event's data (at most
	// HeadBytes), so that a caller can tell which message it was, e.g. by
	// the JSON-RPC id near its start. It is nil when another field went
	// over.
	Head []byte
}

func (e *TooLargeError) Error() string {
	if e.Field == "data" {
		return fmt.Sprintf("an SSE event is larger than the limit of %d bytes", e.Limit)
	}
	return fmt.Sprintf("an SSE %q field is longer than the limit of %d bytes", e.Field, e.Limit)
}
