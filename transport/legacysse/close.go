package legacysse

import (
	"context"

	"github.com/lemonmcp/lemonmcp/transport"
)

// Close closes the stream, which is how this revision ends a session, and
// waits (bounded by ctx) until Closed has been delivered. It is idempotent
// and must not be called from inside a Sink callback.
func (t *Transport) Close(ctx context.Context) error {
	t.mu.Lock()
	switch t.state {
	case stateNew, stateClosed:
		t.state = stateClosed
		t.mu.Unlock()
		return nil
	case stateStarting:
		// Start is waiting for the endpoint event: make it give up.
		t.state = stateClosed
		t.mu.Unlock()
		t.cancel()
		return nil
	}
	t.requested = true
	t.down = true
	t.mu.Unlock()
	t.cancel()
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return transport.Errorf(transport.CodeTimeout, "close timed out")
	}
}
