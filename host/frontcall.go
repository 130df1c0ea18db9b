package host

// CallOfClient returns the host's id of the call that server serverName's
// client knows as clientCallID: an app request's "call_id" (an input
// request of a 2026-07-28 server) names the client's call, and a gateway
// routes the request to the front session that made the host's call.
func (h *Host) CallOfClient(serverName string, clientCallID uint64) (uint64, bool) {
	s := h.byName[serverName]
	if s == nil {
		return 0, false
	}
	return h.hostCallID(s, clientCallID)
}
