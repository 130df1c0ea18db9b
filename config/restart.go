package config

import (
	"github.com/lemonmcp/lemonmcp/core"
)

// parseRestart reads "restart": true (the default policy), false or null
// (no supervision), or {"max_restarts","backoff_ms","max_backoff_ms",
// "window_ms"} (the default policy with these fields replaced). Absent,
// it is off for Parse and on for ParseSupervised (a host's servers).
func parseRestart(root *object, p *Parsed) *core.Error {
	v, ok := root.get("restart")
	if !ok {
		if p.restartDefault {
			pol := core.DefaultRestartPolicy()
			p.Options.Restart = &pol
		}
		return nil
	}
	if b, isBool := v.(bool); isBool {
		if b {
			pol := core.DefaultRestartPolicy()
			p.Options.Restart = &pol
		}
		return nil
	}
	o, err := newObject("config.restart", v)
	if err != nil {
		return invalid("config.restart", "must be true, false or a JSON object")
	}
	pol := core.DefaultRestartPolicy()
	if n, ok, err := o.integer("max_restarts", 0, 1<<20); err != nil {
		return err
	} else if ok {
		pol.MaxRestarts = int(n)
	}
	if err := o.millis("backoff_ms", 1, &pol.Backoff); err != nil {
		return err
	}
	if err := o.millis("max_backoff_ms", 1, &pol.MaxBackoff); err != nil {
		return err
	}
	if err := o.millis("window_ms", 1, &pol.Window); err != nil {
		return err
	}
	if pol.MaxBackoff < pol.Backoff {
		return invalid(o.at("max_backoff_ms"), "must be at least backoff_ms")
	}
	p.Options.Restart = &pol
	return o.finish()
}

// ParseSupervised is Parse for a server of a host: "restart" defaults to
// the default policy instead of off.
func ParseSupervised(raw []byte, libraryVersion string) (*Parsed, *core.Error) {
	return parse(raw, libraryVersion, true)
}
