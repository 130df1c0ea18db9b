package core

// A recovered panic poisons its client (internal/callbackgate keeps the
// state and words the report): every later call fails with StatusInternal,
// and the panic is reported once as an "error" log event naming where it
// happened, the panic value and a short stack summary, never swallowed.

// Poisoned returns the error every call of a poisoned client fails with, or
// nil while the client is healthy.
func (c *Client) Poisoned() *Error {
	if msg := c.out.Poisoned(); msg != "" {
		return &Error{Status: StatusInternal, Message: msg}
	}
	return nil
}

// Recovered poisons the client after a panic the caller recovered (r) while
// serving it in where, and reports it. The C exports call it from their
// deferred recovery; it must be called from the deferred function itself,
// so that the stack still shows where the panic happened.
func (c *Client) Recovered(r any, where string) { c.poison(r, where) }

// Panicked implements the transport's panic sink: a transport goroutine
// recovered a panic.
func (c *Client) Panicked(where string, r any) { c.poison(r, where) }

// recoverPanic is deferred at the top of the library's goroutines that serve
// the client (timers, app request goroutines, background sends).
func (c *Client) recoverPanic(where string) {
	if r := recover(); r != nil {
		c.poison(r, where)
	}
}

// poison is the one way into the gate's poisoned state.
func (c *Client) poison(r any, where string) { c.out.Poison(r, where) }
