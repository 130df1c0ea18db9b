package host

// Lazy start: a server with "start": "lazy" (or every server, host-wide)
// is not started by Connect but by its first call or list, so that a
// command line calling one tool of a five-server file starts one server
// and waits for nobody else.

// lazy reports whether s waits for its first use.
func (s *server) lazy() bool { return s.cfg.Start == StartLazy }

// start connects s, once, and reports whether this call did. A start
// that fails before any event (a permanent failure: no such executable) is
// recorded and settles s.
func (s *server) start() (first bool) {
	g := s.gen()
	g.startOnce.Do(func() {
		first = true
		g.started.Store(true)
		if err := g.client.Connect(); err != nil {
			s.setError(err)
			s.noteStartError(err.Message)
			g.settle()
		}
	})
	return first
}

// wake starts a lazy server on its first use once the host is connected
// (before Connect, or once closed, the call reports the server's state).
// It reports whether this use started it.
func (h *Host) wake(s *server) bool {
	return h.wakeable(s) && s.start()
}

// wakeable reports whether a use of s would start it now: a lazy server
// not started yet, on a connected host. A call that wakes it is queued
// on the client first (WaitReady) and the server started afterwards, on a
// goroutine of its own (startAfter), so that the call returns without
// waiting for a process to be spawned: a caller holding a lock of its own
// (Python's GIL) is never held up by a start.
func (h *Host) wakeable(s *server) bool {
	if g := s.gen(); g.client == nil || !s.lazy() || g.started.Load() {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.connected && !h.closed && !h.freed
}

// startAfter starts s in the background, for a call queued on it.
func (h *Host) startAfter(s *server) {
	go func() {
		defer h.recoverPanic("the start of a lazy server")
		if h.wakeable(s) { // the host may have closed meanwhile
			s.start()
		}
	}()
}

// wakeAll starts every lazy server not started yet and waits until each
// settled (ready, or its first attempt failed: bounded by its ready
// timeout), for a list that covers every server.
func (h *Host) wakeAll() {
	var woken []*generation
	for _, s := range h.servers {
		if h.wake(s) {
			woken = append(woken, s.gen())
		}
	}
	for _, g := range woken {
		select {
		case <-g.settled:
		case <-h.gone:
			return
		}
	}
}
