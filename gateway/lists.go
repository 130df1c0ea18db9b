package gateway

import (
	"sort"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// list answers tools/list, prompts/list, resources/list and
// resources/templates/list from the host's aggregated lists (so pins,
// hidden characters, filters and deferred tools hold as for an
// application), every name exposed as the gateway exposes it. One page:
// the host has every server's list already.
func (s *Server) list(req *request, r *reply) {
	var key string
	var items []jsonx.RawMessage
	var err *core.Error
	switch req.m.Method {
	case "tools/list":
		key = "tools"
		items, err = s.listTools()
	case "prompts/list":
		key = "prompts"
		items, err = s.listPrompts()
	case "resources/list":
		key = "resources"
		items, err = s.listResources()
	default:
		key = "resourceTemplates"
		items = s.listTemplates()
	}
	if err != nil {
		code, msg, data := frontError(err.Status, err.JSON())
		r.done(errorMsg(req.m.ID, code, msg, data))
		return
	}
	res := map[string]any{key: items}
	if req.modern {
		res["resultType"] = "complete"
		res["ttlMs"], res["cacheScope"] = 0, cacheScope
	}
	r.done(core.AppendResult(nil, req.m.ID, raw(res)))
}

// hostList decodes one of the host's aggregated lists.
func hostList(data []byte, key string) ([]map[string]jsonx.RawMessage, *core.Error) {
	var doc map[string][]map[string]jsonx.RawMessage
	if jsonx.Unmarshal(data, &doc) != nil {
		return nil, core.Errorf(core.StatusInternal, "the host's %s list is malformed", key)
	}
	return doc[key], nil
}

func str2(v jsonx.RawMessage) string {
	var out string
	_ = jsonx.Unmarshal(v, &out)
	return out
}

// withServerMeta moves the host's "server" member into _meta, where a
// client that cares can read which server an item came from.
func withServerMeta(item map[string]jsonx.RawMessage, server string) jsonx.RawMessage {
	delete(item, "server")
	delete(item, "original_name")
	meta := map[string]jsonx.RawMessage{}
	if m, ok := item["_meta"]; ok {
		_ = jsonx.Unmarshal(m, &meta)
	}
	meta["io.lemonmcp/server"] = raw(server)
	item["_meta"] = raw(meta)
	return raw(item)
}

func (s *Server) listTools() ([]jsonx.RawMessage, *core.Error) {
	data, err := s.h.ListTools()
	if err != nil {
		return nil, err
	}
	tools, err := hostList(data, "tools")
	if err != nil {
		return nil, err
	}
	table := make(map[string]toolTarget, len(tools))
	out := make([]jsonx.RawMessage, 0, len(tools))
	for _, t := range tools {
		name, server := str2(t["name"]), str2(t["server"])
		exposed := boundName(name)
		table[exposed] = toolTarget{hostName: name, server: server, original: str2(t["original_name"])}
		t["name"] = raw(exposed)
		if server == "" {
			delete(t, "server")
			delete(t, "original_name")
			out = append(out, raw(t))
			continue
		}
		out = append(out, withServerMeta(t, server))
	}
	s.mu.Lock()
	s.names.tools = table
	s.mu.Unlock()
	return out, nil
}

func (s *Server) listPrompts() ([]jsonx.RawMessage, *core.Error) {
	data, err := s.h.ListPrompts()
	if err != nil {
		return nil, err
	}
	prompts, err := hostList(data, "prompts")
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for _, p := range prompts {
		seen[str2(p["name"])]++
	}
	table := make(map[string]target, len(prompts))
	out := make([]jsonx.RawMessage, 0, len(prompts))
	for _, p := range prompts {
		name, server := str2(p["name"]), str2(p["server"])
		exposed := promptName(server, name, seen[name] > 1)
		table[exposed] = target{server, name}
		p["name"] = raw(exposed)
		out = append(out, withServerMeta(p, server))
	}
	s.mu.Lock()
	s.names.prompts = table
	s.mu.Unlock()
	return out, nil
}

func (s *Server) listResources() ([]jsonx.RawMessage, *core.Error) {
	data, err := s.h.ListResources()
	if err != nil {
		return nil, err
	}
	resources, err := hostList(data, "resources")
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for _, res := range resources {
		seen[str2(res["uri"])]++
	}
	table := make(map[string]target, len(resources))
	uris := make(map[target]string, len(resources))
	out := make([]jsonx.RawMessage, 0, len(resources))
	for _, res := range resources {
		uri, server := str2(res["uri"]), str2(res["server"])
		exposed := uri
		if seen[uri] > 1 {
			exposed = sharedURI(server, uri)
		}
		table[exposed] = target{server, uri}
		uris[target{server, uri}] = exposed
		res["uri"] = raw(exposed)
		out = append(out, withServerMeta(res, server))
	}
	s.mu.Lock()
	s.names.resources, s.names.uris = table, uris
	s.mu.Unlock()
	return out, nil
}

// listTemplates gathers resources/templates/list from every ready server
// (the host does not aggregate templates); a server without resources is
// left out.
func (s *Server) listTemplates() []jsonx.RawMessage {
	type entry struct {
		server string
		item   map[string]jsonx.RawMessage
	}
	var all []entry
	for _, name := range s.readyServers() {
		data, err := s.h.CallSync(name, "resources/templates/list", nil, core.CallOptions{AllPages: true})
		if err != nil {
			continue
		}
		items, _ := hostList(data, "resourceTemplates")
		for _, it := range items {
			all = append(all, entry{name, it})
		}
	}
	seen := map[string]int{}
	for _, e := range all {
		seen[str2(e.item["uriTemplate"])]++
	}
	var table []templateTarget
	out := make([]jsonx.RawMessage, 0, len(all))
	for _, e := range all {
		t := str2(e.item["uriTemplate"])
		exposed := t
		if seen[t] > 1 {
			exposed = sharedURI(e.server, t)
		}
		table = append(table, templateTarget{exposed: exposed, target: target{e.server, t}, prefix: templatePrefix(exposed)})
		e.item["uriTemplate"] = raw(exposed)
		out = append(out, withServerMeta(e.item, e.server))
	}
	s.mu.Lock()
	s.names.templates = table
	s.mu.Unlock()
	return out
}

// readyServers are the names of the host's ready servers, sorted.
func (s *Server) readyServers() []string {
	var states map[string]struct {
		State string `json:"state"`
	}
	_ = jsonx.Unmarshal(s.h.Servers(), &states)
	var out []string
	for name, st := range states {
		if st.State == "ready" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// resolveURI finds the server behind an exposed resource URI: a listed
// one, a "server+uri", else the one server whose template it fits.
func (s *Server) resolveURI(uri string) (target, bool) {
	if t, ok := lookupName(s, uri, func(n *nameTable) map[string]target { return n.resources }, s.listResources); ok {
		return t, true
	}
	if t, ok := splitShared(uri, s.h.ServerNames()); ok {
		return t, true
	}
	var found []target
	for _, tt := range s.templates() {
		if tt.prefix != "" && len(uri) >= len(tt.prefix) && uri[:len(tt.prefix)] == tt.prefix {
			found = append(found, target{tt.server, uri})
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return target{}, false
}

// exposeReadURIs rewrites the contents' URIs of a read from server to the
// exposed ones, where they differ.
func (s *Server) exposeReadURIs(server string, result []byte) []byte {
	s.mu.Lock()
	uris := s.names.uris
	s.mu.Unlock()
	var doc map[string]jsonx.RawMessage
	var contents []map[string]jsonx.RawMessage
	if jsonx.Unmarshal(result, &doc) != nil || jsonx.Unmarshal(doc["contents"], &contents) != nil {
		return result
	}
	changed := false
	for _, c := range contents {
		if exposed, ok := uris[target{server, str2(c["uri"])}]; ok && exposed != str2(c["uri"]) {
			c["uri"] = raw(exposed)
			changed = true
		}
	}
	if !changed {
		return result
	}
	doc["contents"] = raw(contents)
	return raw(doc)
}
