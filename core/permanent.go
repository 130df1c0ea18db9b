package core

import (
	"errors"

	"github.com/lemonmcp/lemonmcp/transport"
)

// permanentStart reports whether a failure to start the transport cannot
// be cured by starting it again: the configuration refused (not an
// executable, a working directory that does not exist), or an executable
// that does not exist. A supervised client does not retry it, so a host
// hears at once why its server cannot run instead of after every backoff.
func permanentStart(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	return te.Permanent || te.Code == transport.CodeInvalidArgument
}

// notRetried is err as the client reports it, saying so when it is
// permanent.
func notRetried(err error) *Error {
	e := AsError(err)
	if permanentStart(err) {
		return &Error{Status: e.Status, Message: e.Message + " (not retried: starting it again cannot succeed)", Data: e.Data}
	}
	return e
}

// failForGoodLocked closes a supervised client whose restart cannot
// succeed: its calls fail with reason, waiting ones included. It unlocks
// c.mu.
func (c *Client) failForGoodLocked(reason *Error) {
	failed := c.takeInFlightLocked()
	hosts := c.takeAppRequestsLocked()
	c.endServedTasksLocked()
	c.stateErr = reason
	c.giveUpLocked(&Error{Status: StatusClosed, Message: reason.Message}, failed, hosts, nil)
}
