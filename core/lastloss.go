package core

import "github.com/lemonmcp/lemonmcp/transport"

// lossRecord is the last time the server went away on its own: its exit
// status or signal and its last stderr lines. The closed and restarting
// events carry the same, but they are delivered after the calls the loss
// failed, so a host that reports why a call failed reads it here, at once.
type lossRecord struct {
	last  *transport.ClosedError
	count uint64
}

// noteLoss records cerr when the server went away on its own, or was
// closed because its handshake failed (often because it was exiting: its
// exit status and stderr say why), not when the application closed it.
func (c *Client) noteLoss(cerr *transport.ClosedError) {
	if cerr == nil {
		return
	}
	c.mu.Lock()
	if cerr.Requested && c.state != StateFailed {
		c.mu.Unlock()
		return
	}
	c.loss.last = cerr
	c.loss.count++
	c.mu.Unlock()
}

// LastLoss reports the last time the server went away on its own (nil:
// never) and how many times it did, so a caller can tell an old loss from
// a new one.
func (c *Client) LastLoss() (*transport.ClosedError, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loss.last, c.loss.count
}

// TransportDone reports whether the client's transport is closed for good
// (its process, if any, reaped and its exit reported, or never started): a
// failure's report has then nothing more to learn.
func (c *Client) TransportDone() bool {
	select {
	case <-c.trClosed:
		return true
	default:
		return false
	}
}
