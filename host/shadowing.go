package host

import (
	"sort"
	"strings"

	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Shadowing: a tool's description that names another server's tool ("before
// using files__read, call this tool") steers the model across servers. It
// is a finding, reported, never a reason to hold: names are words too.

// shadowFinding is one other server's tool a description names.
type shadowFinding struct {
	Kind   string `json:"kind"` // "shadowing"
	Path   string `json:"path"` // "description"
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// FindingShadowing is the kind of a shadowing finding.
const FindingShadowing = "shadowing"

// minShadowName: shorter tool names ("get", "add") are ordinary words.
const minShadowName = 4

// toolNamesBesides is every other ready server's tool names as their
// guards last saw them: name → servers. Each guard is read under its own
// lock, one at a time (never two at once, so no lock order to keep).
func (h *Host) toolNamesBesides(self *server) map[string][]string {
	names := map[string][]string{}
	for _, s := range h.servers {
		if s == self {
			continue
		}
		s.guard.mu.Lock()
		for name := range s.guard.offered[listTools] {
			if len(name) >= minShadowName {
				names[name] = append(names[name], s.name)
			}
		}
		s.guard.mu.Unlock()
	}
	return names
}

// shadowing lists the other servers' tools the description of self's tool
// raw names, as a bare name or as server__tool; own is self's tools (a name
// both offer is not another's).
func (h *Host) shadowing(self *server, raw []byte, own map[string]*offered, others map[string][]string) []shadowFinding {
	var def struct {
		Description string `json:"description"`
	}
	if len(others) == 0 || jsonx.Unmarshal(raw, &def) != nil || def.Description == "" {
		return nil
	}
	seen := map[string]bool{}
	var out []shadowFinding
	for _, word := range strings.FieldsFunc(def.Description, notNameChar) {
		word = strings.Trim(word, ".-")
		srv, tool, prefixed := strings.Cut(word, Separator)
		if !prefixed {
			srv, tool = "", word
			if own[tool] != nil {
				continue
			}
		} else if srv == self.name {
			continue
		}
		for _, by := range others[tool] {
			if key := by + Separator + tool; (srv == "" || srv == by) && !seen[key] {
				seen[key] = true
				out = append(out, shadowFinding{Kind: FindingShadowing, Path: "description", Server: by, Tool: tool})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

func notNameChar(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
}
