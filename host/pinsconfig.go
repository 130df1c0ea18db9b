package host

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/store"
)

// First-use modes of "pins".
const (
	FirstUseTrust = "trust" // what a server never seen offers is pinned as it is
	FirstUseHold  = "hold"  // it is held until approved
)

// PinsConfig is the host's "pins" option (nil: no pinning; hidden
// characters are still removed).
type PinsConfig struct {
	// Store is where the pins are kept (the store's one form: the
	// collection "pins" of any store, shared by every host that opens it).
	Store    store.Spec
	FirstUse string
}

// parsePins validates "pins": {"store": {"type", "path"?, "url"?,
// "encryption"?}, "first_use": "trust"|"hold"}.
func parsePins(v any) (*PinsConfig, *core.Error) {
	const at = "config.pins"
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, `must be a JSON object ({"store": {"type": "file", "path": "<pin file path>"}, "first_use": "trust" | "hold"})`)
	}
	p := &PinsConfig{FirstUse: FirstUseTrust}
	seen := false
	for k, fv := range m {
		switch k {
		case "store":
			spec, fe := store.ParseSpec(fv)
			if fe != nil {
				if fe.Field == "" {
					return nil, invalid(at+".store", fe.Message)
				}
				return nil, invalid(at+".store."+fe.Field, fe.Message)
			}
			p.Store, seen = *spec, true
		case "first_use":
			s, _ := fv.(string)
			if s != FirstUseTrust && s != FirstUseHold {
				return nil, invalid(at+".first_use", `must be "trust" or "hold"`)
			}
			p.FirstUse = s
		default:
			return nil, invalid(at+"."+k, "is not a known field (known: store, first_use)")
		}
	}
	if !seen {
		return nil, invalid(at+".store", `is required ({"type": "memory" | "file" | "postgres" | "redis" | "app", "path"?, "url"?, "encryption"?})`)
	}
	return p, nil
}
