package config

import "github.com/lemonmcp/lemonmcp/core"

// parseModern reads the 2026-07-28 members of "protocol" (docs/modern.md):
// "result_cache" (default true), "listen" (default true) and "tasks"
// (default false: the host opts in to the tasks extension).
func parseModern(o *object, p *Parsed) *core.Error {
	if v, ok, err := o.boolean("result_cache"); err != nil {
		return err
	} else if ok {
		p.Options.NoResultCache = !v
	}
	if v, ok, err := o.boolean("listen"); err != nil {
		return err
	} else if ok {
		p.Options.NoListen = !v
	}
	if v, ok, err := o.boolean("tasks"); err != nil {
		return err
	} else if ok {
		p.Options.Tasks = v
	}
	return nil
}
