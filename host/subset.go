package host

import "github.com/lemonmcp/lemonmcp/core"

// PerSessionServers names the enabled servers whose configuration says
// "per_session": true, sorted.
func (h *Host) PerSessionServers() []string {
	var out []string
	for _, s := range h.servers {
		if s.cfg.PerSession && s.cfg.Enabled {
			out = append(out, s.name)
		}
	}
	return out
}

// Subset makes a new host of the named servers only, configured as they
// are in this one (pins included); nothing starts until its Connect. A
// gateway gives each front session its own instance of a per_session
// server that way.
func (h *Host) Subset(names []string) (*Host, *core.Error) {
	cfg := *h.cfg
	cfg.Servers = nil
	cfg.Deferred = nil
	for _, name := range names {
		s, err := h.server(name)
		if err != nil {
			return nil, err
		}
		cfg.Servers = append(cfg.Servers, s.cfg)
	}
	return New(&cfg, h.version)
}
