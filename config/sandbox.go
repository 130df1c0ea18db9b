package config

import (
	"path/filepath"
	"strconv"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/sandbox"
)

// parseSandbox reads a stdio transport's "sandbox" object, VS Code's
// members plus LemonMCP's "limits" and "required":
//
//	{"filesystem": {"allowWrite", "denyRead", "denyWrite"},
//	 "network": {"allowedDomains", "deniedDomains", "allowAllUnixSockets"},
//	 "limits": {"processes", "openFiles", "memoryBytes"}, "required": bool}
//
// nil when absent.
func parseSandbox(o *object) (*sandbox.Policy, *core.Error) {
	sb, ok, err := o.sub("sandbox")
	if err != nil || !ok {
		return nil, err
	}
	p := &sandbox.Policy{}
	if fs, ok, err := sb.sub("filesystem"); err != nil {
		return nil, err
	} else if ok {
		for key, dst := range map[string]*[]string{"allowWrite": &p.AllowWrite, "denyRead": &p.DenyRead, "denyWrite": &p.DenyWrite} {
			if *dst, err = absPaths(fs, key); err != nil {
				return nil, err
			}
		}
		if err := fs.finish(); err != nil {
			return nil, err
		}
	}
	if nw, ok, err := sb.sub("network"); err != nil {
		return nil, err
	} else if ok {
		if p.AllowedDomains, err = domains(nw, "allowedDomains"); err != nil {
			return nil, err
		}
		if p.DeniedDomains, err = domains(nw, "deniedDomains"); err != nil {
			return nil, err
		}
		if p.AllowAllUnixSockets, _, err = nw.boolean("allowAllUnixSockets"); err != nil {
			return nil, err
		}
		if err := nw.finish(); err != nil {
			return nil, err
		}
	}
	if lim, ok, err := sb.sub("limits"); err != nil {
		return nil, err
	} else if ok {
		n, _, err := lim.integer("processes", 1, 1<<22)
		if err != nil {
			return nil, err
		}
		p.Processes = int(n)
		if n, _, err = lim.integer("openFiles", 16, 1<<20); err != nil {
			return nil, err
		}
		p.OpenFiles = int(n)
		if p.Memory, _, err = lim.integer("memoryBytes", 1<<24, 1<<50); err != nil {
			return nil, err
		}
		if err := lim.finish(); err != nil {
			return nil, err
		}
	}
	// Fail closed: a sandbox that cannot be set up in full stops the
	// start, unless the configuration says "required": false.
	required, given, err := sb.boolean("required")
	if err != nil {
		return nil, err
	}
	p.BestEffort = given && !required
	if err := sb.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// domains reads a list of names, wildcards and addresses, each with an
// optional port ("127.0.0.1:4873"); an entry the sandbox would not honour
// as written is refused, naming why.
func domains(o *object, key string) ([]string, *core.Error) {
	list, _, err := o.strList(key)
	if err != nil {
		return nil, err
	}
	for i, d := range list {
		if _, derr := sandbox.CheckDomain(d); derr != nil {
			return nil, invalid(o.at(key)+"["+strconv.Itoa(i)+"]", derr.Error())
		}
	}
	return list, nil
}

// absPaths reads a list of absolute paths: a relative one would be
// resolved against whichever directory the helper happens to run in.
func absPaths(o *object, key string) ([]string, *core.Error) {
	list, _, err := o.strList(key)
	if err != nil {
		return nil, err
	}
	for i, p := range list {
		if !filepath.IsAbs(p) {
			return nil, invalid(o.at(key)+"["+strconv.Itoa(i)+"]", "must be an absolute path (use ${workspaceFolder} or ${userHome} in a host's file)")
		}
		list[i] = filepath.Clean(p)
	}
	return list, nil
}
