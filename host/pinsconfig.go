package host

import (
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
)

// First-use modes of "pins".
const (
	FirstUseTrust = "trust" // what a server never seen offers is pinned as it is
	FirstUseHold  = "hold"  // it is held until approved
)

// PinStoreApp is the "store" that asks the application (pins_load,
// pins_save) instead of a file.
const PinStoreApp = "app"

// PinsConfig is the host's "pins" option (nil: no pinning; hidden
// characters are still removed).
type PinsConfig struct {
	// Store is the pin file's path, or PinStoreApp.
	Store    string
	FirstUse string
}

// parsePins validates "pins": {"store": PATH, "first_use": "trust"|"hold"}.
func parsePins(v any) (*PinsConfig, *core.Error) {
	const at = "config.pins"
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, `must be a JSON object ({"store": "<pin file path>", "first_use": "trust" | "hold"})`)
	}
	p := &PinsConfig{FirstUse: FirstUseTrust}
	for k, fv := range m {
		switch k {
		case "store":
			s, ok := fv.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, invalid(at+".store", "must be the path of the pin file")
			}
			p.Store = s
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
	if p.Store == "" {
		return nil, invalid(at+".store", "is required (the path of the pin file)")
	}
	return p, nil
}
