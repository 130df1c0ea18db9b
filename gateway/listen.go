package gateway

import (
	"sync"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// subscriptions/listen (2026-07-28): a front of that era keeps one listen
// request open whose filter names what it wants to hear (list changes,
// resource updates) instead of the GET stream and resources/subscribe.
// The gateway acknowledges it with what it will send, sends those
// notifications tagged with the listen's id in _meta, and ends it with a
// result when the front cancels it (notifications/cancelled, or closing
// its HTTP stream) or the gateway stops. Listens are not counted as
// requests under way: Stop ends them rather than waiting for them.

const (
	methodListen       = "subscriptions/listen"
	notifyAcknowledged = "notifications/subscriptions/acknowledged"
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// listenFilter is the notifications member of a listen and of its
// acknowledgement (task ids are not relayed: the gateway has no tasks of
// its own).
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// listener is one open listen.
type listener struct {
	sess   *Session
	id     []byte
	filter listenFilter
	subs   map[subKey]string // upstream subscriptions → the URI the front named
	r      *reply
	once   sync.Once
}

// listen opens a listen: upstream subscriptions for the resources it
// names, then the acknowledgement.
func (s *Server) listen(sess *Session, req *request, r *reply) {
	var p struct {
		Notifications listenFilter `json:"notifications"`
	}
	if jsonx.Unmarshal(req.m.Params, &p) != nil {
		r.done(errorMsg(req.m.ID, core.CodeInvalidParams, "invalid params: subscriptions/listen takes {\"notifications\": {...}}", nil))
		return
	}
	l := &listener{sess: sess, id: req.m.ID, r: r, subs: map[subKey]string{}}
	agreed := p.Notifications
	agreed.ResourceSubscriptions = nil
	for _, uri := range p.Notifications.ResourceSubscriptions {
		t, ok := s.resolveURI(uri)
		if !ok {
			continue // not acknowledged: the front sees it was refused
		}
		k := subKey{server: t.server, uri: t.name}
		if s.subscribeShared(k) != nil {
			continue
		}
		l.subs[k] = uri
		agreed.ResourceSubscriptions = append(agreed.ResourceSubscriptions, uri)
	}
	l.filter = agreed
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		s.endListen(l)
		return
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	sess.mu.Lock()
	sess.listens[string(req.m.ID)] = l
	sess.mu.Unlock()
	l.send(notifyAcknowledged, map[string]any{"notifications": agreed})
}

// send sends one notification of the listen, tagged with its id.
func (l *listener) send(method string, params map[string]any) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{metaSubscriptionID: jsonx.RawMessage(l.id)}
	if l.r.related != nil {
		l.r.related.send(core.AppendNotification(nil, method, raw(params)))
	}
}

// endListen ends a listen once: its subscriptions are dropped, and the
// front gets its result.
func (s *Server) endListen(l *listener) {
	l.once.Do(func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.sess.mu.Lock()
		if l.sess.listens[string(l.id)] == l {
			delete(l.sess.listens, string(l.id))
		}
		l.sess.mu.Unlock()
		for k := range l.subs {
			s.unsubscribe(k)
		}
		l.r.done(core.AppendResult(nil, l.id, raw(map[string]any{"resultType": "complete", "_meta": map[string]any{metaSubscriptionID: jsonx.RawMessage(l.id)}})))
	})
}

// listenersFor returns the open listens that asked for a list's changes.
func (s *Server) listenersFor(list string) []*listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*listener
	for l := range s.listeners {
		f := l.filter
		if (list == "tools" && f.ToolsListChanged) || (list == "prompts" && f.PromptsListChanged) || (list == "resources" && f.ResourcesListChanged) {
			out = append(out, l)
		}
	}
	return out
}

// listenersOf returns the open listens subscribed to k, with the URI
// each named it by.
func (s *Server) listenersOf(k subKey) map[*listener]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[*listener]string{}
	for l := range s.listeners {
		if uri, ok := l.subs[k]; ok {
			out[l] = uri
		}
	}
	return out
}

// endAllListens ends every listen (the gateway stops).
func (s *Server) endAllListens() {
	s.mu.Lock()
	var all []*listener
	for l := range s.listeners {
		all = append(all, l)
	}
	s.mu.Unlock()
	for _, l := range all {
		s.endListen(l)
	}
}
