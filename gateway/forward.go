package gateway

import "github.com/lemonmcp/lemonmcp/core"

// The application's ear on its host while it is served: the gateway holds
// the host's event handler, so an application that still wants its host's
// events (its servers' log lines, for `lemonmcp serve -v`) installs its
// handler on the gateway, which hands it every host event after its own
// use of it. Events come on the host's delivery goroutine, one at a time.
//
// A handler's destroy runs once, after none of its callbacks can run: on
// Release, once the host has dropped the gateway's own handler (and a
// replaced handler's then too, since a callback of it may be running
// when it is replaced).

// forwarder is the installed handler and the destroys owed.
type forwarder struct {
	fn      core.EventHandler
	destroy []func()
}

// SetEventHandler installs fn (nil removes it) to hear the host's events
// while the gateway holds them; destroy (may be nil) runs once, see above.
// After Release it runs destroy at once and installs nothing.
func (s *Server) SetEventHandler(fn core.EventHandler, destroy func()) *core.Error {
	s.fwdMu.Lock()
	if s.fwdReleased {
		s.fwdMu.Unlock()
		if destroy != nil {
			destroy()
		}
		return core.Errorf(core.StatusInvalidArgument, "the server was freed: install the handler on the host")
	}
	s.fwd.fn = fn
	if destroy != nil {
		s.fwd.destroy = append(s.fwd.destroy, destroy)
	}
	s.fwdMu.Unlock()
	return nil
}

// forward hands a host event to the application's handler.
func (s *Server) forward(kind string, payload []byte) {
	s.fwdMu.Lock()
	fn := s.fwd.fn
	s.fwdMu.Unlock()
	if fn != nil {
		fn(kind, payload)
	}
}

// eventsReleased is the destroy of the gateway's handler on its host: no
// callback of it runs any more, nor of the application's handler.
func (s *Server) eventsReleased() {
	s.fwdMu.Lock()
	s.fwdReleased = true
	destroys := s.fwd.destroy
	s.fwd = forwarder{}
	s.fwdMu.Unlock()
	for _, d := range destroys {
		d()
	}
}
