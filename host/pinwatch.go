package host

import (
	"maps"
	"time"
)

// pinWatchInterval is how often a host re-reads the pins of its servers
// from the store: an approval (or a new pin) made by another process or
// machine sharing the store takes effect here within it, without a
// restart. A bounded re-read works on every backend alike (the
// application's included) and costs one Load per server: on the file
// store a stat while nothing changed (make bench measures both).
const pinWatchInterval = 250 * time.Millisecond

// watchPins re-reads each server's pins every pinWatchInterval until the
// host is freed, and judges again what it offers when they changed.
func (h *Host) watchPins() {
	t := time.NewTicker(pinWatchInterval)
	defer t.Stop()
	for {
		select {
		case <-h.gone:
			return
		case <-t.C:
		}
		for _, s := range h.servers {
			if s.client() != nil {
				s.rejudgeIfPinsChanged()
			}
		}
	}
}

// rejudgeIfPinsChanged gives the offered definitions their verdicts
// again when the store's pins are not those they were judged against,
// and refreshes the lists whose held definitions changed (their
// list_changed tells the application).
func (s *server) rejudgeIfPinsChanged() {
	ps, _, err := s.h.pins.load(s.identKey)
	if err != nil {
		return // the next list or approval reports it
	}
	g := &s.guard
	g.mu.Lock()
	var refresh []listKind
	for k := range listKinds {
		if g.verdicts[k] == nil || g.checked[k] == ps {
			continue
		}
		before := heldOf(g, listKind(k))
		s.checkPins(listKind(k), true)
		if !maps.EqualFunc(before, heldOf(g, listKind(k)), func(a, b *heldWhy) bool { return a.text == b.text }) {
			refresh = append(refresh, listKind(k))
		}
	}
	if g.instr != nil && ps != nil && g.instrPins != ps {
		before := g.instrHeld.Load()
		s.judgeInstructions(nil)
		if after := g.instrHeld.Load(); (before == nil) != (after == nil) {
			refresh = append(refresh, listTools, listPrompts)
		}
	}
	// The lists go stale before the new verdicts show: a call the new
	// pins allow must not be followed by a list that still holds it
	// (g.mu before a list's lock, never the other way round).
	for _, rk := range refresh {
		s.lists[rk].invalidate()
	}
	g.mu.Unlock()
	for _, rk := range refresh {
		s.h.background("the "+listKinds[rk].key+" refresh of server "+s.name, func() { s.refresh(rk) })
	}
}

func heldOf(g *guard, k listKind) map[string]*heldWhy {
	if m := g.held[k].Load(); m != nil {
		return *m
	}
	return nil
}
