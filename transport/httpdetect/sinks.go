package httpdetect

import "github.com/lemonmcp/lemonmcp/transport"

// fromStreamable is the sink of the Streamable HTTP side. Anything it
// receives proves the server speaks Streamable HTTP; its Closed counts only
// while it is the transport in use.
type fromStreamable struct{ d *Transport }

func (s fromStreamable) Receive(data []byte) {
	if s.d.afterClose.Load() {
		return
	}
	s.d.decideStreamable()
	s.d.sink.Receive(data)
}

func (s fromStreamable) Log(line transport.LogLine) {
	if !s.d.afterClose.Load() {
		s.d.sink.Log(line)
	}
}

func (s fromStreamable) RequestFailed(id int64, err *transport.Error) {
	if !s.d.afterClose.Load() {
		s.d.sink.RequestFailed(id, err)
	}
}

func (s fromStreamable) Closed(err *transport.ClosedError) {
	if s.d.Name() == "streamable_http" {
		s.d.deliverClosed(err)
	}
}

// fromLegacy is the sink of the legacy SSE side, once it is in use.
type fromLegacy struct{ d *Transport }

func (s fromLegacy) Receive(data []byte) {
	if !s.d.afterClose.Load() {
		s.d.sink.Receive(data)
	}
}

func (s fromLegacy) Log(line transport.LogLine) {
	if !s.d.afterClose.Load() {
		s.d.sink.Log(line)
	}
}

func (s fromLegacy) RequestFailed(id int64, err *transport.Error) {
	if !s.d.afterClose.Load() {
		s.d.sink.RequestFailed(id, err)
	}
}

func (s fromLegacy) Closed(err *transport.ClosedError) {
	d := s.d
	d.mu.Lock()
	switch d.mode {
	case legacy:
		d.mu.Unlock()
		d.deliverClosed(err)
		return
	case fallingBack:
		// The stream ended between Start and the switch to legacy: the
		// fallback delivers it once the switch is made.
		d.legacyClosed = err
	}
	d.mu.Unlock()
}
