package host

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// maxConfigFileBytes bounds a config file (a large one is not a config).
const maxConfigFileBytes = 16 << 20

// LoadFile reads and validates the config file at path (opts.File is set
// to it). Every message and warning starts with the path, so a malformed
// file is an error that names it.
func LoadFile(path string, opts LoadOptions) (*Config, *core.Error) {
	if path == "" {
		return nil, core.Errorf(core.StatusInvalidArgument, "the config file path is empty")
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: no such config file", path)
	case err != nil:
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: cannot read the config file (%s)", path, errText(err))
	case info.IsDir():
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: is a directory, not a config file", path)
	case info.Size() > maxConfigFileBytes:
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: the config file is over 16 MiB", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: cannot read the config file (%s)", path, errText(err))
	}
	opts.File = path
	cfg, cerr := ParseConfigWith(raw, opts)
	if cerr != nil {
		return nil, &core.Error{Status: cerr.Status, Message: path + ": " + cerr.Message}
	}
	for i, w := range cfg.Warnings {
		cfg.Warnings[i] = path + ": " + w
	}
	if opts.Only != nil {
		if err := keepOnly(cfg, opts.Only); err != nil {
			return nil, &core.Error{Status: err.Status, Message: path + ": " + err.Message}
		}
	}
	if opts.Stdio != nil {
		if err := overStdio(cfg, opts.Stdio); err != nil {
			return nil, &core.Error{Status: err.Status, Message: path + ": " + err.Message}
		}
	}
	return cfg, nil
}

// overStdio lays o over the transport of every server of cfg; a server
// that is not started as a process refuses it (nothing is ignored).
func overStdio(cfg *Config, o *StdioOverride) *core.Error {
	for _, sc := range cfg.Servers {
		var client map[string]any
		if err := jsonx.Unmarshal(sc.Client, &client); err != nil {
			return core.Errorf(core.StatusInternal, "the server %s: its configuration does not read back", jsonQuote(sc.Name))
		}
		t, _ := client["transport"].(map[string]any)
		if t == nil || t["type"] != "stdio" {
			return core.Errorf(core.StatusInvalidArgument, "the server %s is not started as a process here (it is reached by URL): env, cwd and env_inherit cannot apply to it; name the stdio server (only)", jsonQuote(sc.Name))
		}
		if len(o.Env) > 0 {
			env, _ := t["env"].(map[string]any)
			merged := make(map[string]any, len(env)+len(o.Env))
			for k, v := range env {
				merged[k] = v
			}
			for k, v := range o.Env {
				merged[k] = v
			}
			t["env"] = merged
		}
		if o.Cwd != "" {
			t["cwd"] = o.Cwd
		}
		if o.InheritAll {
			t["env_inherit"] = "all"
		}
		sc.Client = jsonx.MustMarshal(client)
	}
	return nil
}

// keepOnly drops every server of cfg not named in only.
func keepOnly(cfg *Config, only []string) *core.Error {
	names := make([]string, len(cfg.Servers))
	byName := map[string]*ServerConfig{}
	for i, sc := range cfg.Servers {
		names[i] = sc.Name
		byName[sc.Name] = sc
	}
	kept := make([]*ServerConfig, 0, len(only))
	for _, n := range only {
		sc := byName[n]
		if sc == nil {
			return core.Errorf(core.StatusNotFound, "no server %s (the file has: %s)", jsonQuote(n), strings.Join(names, ", "))
		}
		kept = append(kept, sc)
	}
	cfg.Servers = kept
	return nil
}

// errText is an OS error without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ParseLoadOptions reads the options of a config file as the C ABI and
// the bindings give them: {"strict": bool, "inputs": {id: value},
// "workspace_folder": path, "start": "eager"|"lazy", "override": {top-level
// members laid over the file's}, "only": [server names]}; empty means none.
// Unknown members are errors: these are LemonMCP's own options.
func ParseLoadOptions(raw []byte) (LoadOptions, *core.Error) {
	var opts LoadOptions
	if len(raw) == 0 {
		return opts, nil
	}
	var doc map[string]any
	if err := jsonx.Unmarshal(raw, &doc); err != nil || doc == nil {
		return opts, core.Errorf(core.StatusInvalidArgument, "options: must be a JSON object")
	}
	for _, k := range sortedKeys(doc) {
		v := doc[k]
		switch k {
		case "strict":
			b, ok := v.(bool)
			if !ok {
				return opts, core.Errorf(core.StatusInvalidArgument, "options.strict: must be true or false")
			}
			opts.Strict = b
		case "inputs":
			m, ok := v.(map[string]any)
			if !ok {
				return opts, core.Errorf(core.StatusInvalidArgument, "options.inputs: must be a JSON object of input id to string value")
			}
			opts.Inputs = make(map[string]string, len(m))
			for id, iv := range m {
				s, ok := iv.(string)
				if !ok {
					return opts, core.Errorf(core.StatusInvalidArgument, "options.inputs.%s: must be a string", id)
				}
				opts.Inputs[id] = s
			}
		case "workspace_folder":
			s, ok := v.(string)
			if !ok || s == "" {
				return opts, core.Errorf(core.StatusInvalidArgument, "options.workspace_folder: must be a non-empty path")
			}
			opts.WorkspaceFolder = s
		case "start":
			s, err := startMode("options.start", v)
			if err != nil {
				return opts, err
			}
			opts.Start = s
		case "override":
			m, ok := v.(map[string]any)
			if !ok {
				return opts, core.Errorf(core.StatusInvalidArgument, "options.override: must be a JSON object of top-level config members")
			}
			opts.Override = m
		case "only":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return opts, core.Errorf(core.StatusInvalidArgument, "options.only: must be a non-empty array of server names")
			}
			for i, e := range list {
				n, ok := e.(string)
				if !ok || n == "" {
					return opts, core.Errorf(core.StatusInvalidArgument, "options.only[%d]: must be a server name", i)
				}
				opts.Only = append(opts.Only, n)
			}
		case "stdio":
			o, err := parseStdioOverride(v)
			if err != nil {
				return opts, err
			}
			opts.Stdio = o
		default:
			msg := "options." + k + ": is not a known option (known: strict, inputs, workspace_folder, start, override, only, stdio)"
			if s := closest(k, []string{"strict", "inputs", "workspace_folder", "start", "override", "only", "stdio"}); s != "" {
				msg += "; did you mean " + jsonQuote(s) + "?"
			}
			return opts, core.Errorf(core.StatusInvalidArgument, "%s", msg)
		}
	}
	return opts, nil
}

// parseStdioOverride reads {"env": {name: value}, "cwd": dir,
// "env_inherit": "all"}.
func parseStdioOverride(v any) (*StdioOverride, *core.Error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, core.Errorf(core.StatusInvalidArgument, `options.stdio: must be a JSON object {"env"?, "cwd"?, "env_inherit"?}`)
	}
	o := &StdioOverride{}
	for _, k := range sortedKeys(m) {
		switch k {
		case "env":
			env, ok := m[k].(map[string]any)
			if !ok {
				return nil, core.Errorf(core.StatusInvalidArgument, "options.stdio.env: must be a JSON object of names to string values")
			}
			o.Env = make(map[string]string, len(env))
			for name, ev := range env {
				s, ok := ev.(string)
				if !ok || name == "" {
					return nil, core.Errorf(core.StatusInvalidArgument, "options.stdio.env.%s: must be a string", name)
				}
				o.Env[name] = s
			}
		case "cwd":
			s, ok := m[k].(string)
			if !ok || s == "" {
				return nil, core.Errorf(core.StatusInvalidArgument, "options.stdio.cwd: must be a non-empty path")
			}
			o.Cwd = s
		case "env_inherit":
			if m[k] != "all" {
				return nil, core.Errorf(core.StatusInvalidArgument, `options.stdio.env_inherit: must be "all" (the file's own is kept otherwise)`)
			}
			o.InheritAll = true
		default:
			return nil, core.Errorf(core.StatusInvalidArgument, "options.stdio.%s: is not a known field (known: env, cwd, env_inherit)", k)
		}
	}
	return o, nil
}

// FileServer is one server of the config file at path as a host would run
// it: its client configuration, read by the same reader (every dialect,
// ${VAR} and ${input:id}, envFile) and checked, for a program that talks
// to that server alone (lemonmcp --config FILE --server NAME). An empty
// name picks the file's only server. The file's Config comes with it: its
// warnings, and the host options a lone client would not apply
// (HostGuards).
func FileServer(path string, opts LoadOptions, name, version string) (*ServerConfig, *Config, *core.Error) {
	cfg, err := LoadFile(path, opts)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(cfg.Servers))
	for i, sc := range cfg.Servers {
		names[i] = sc.Name
	}
	var sc *ServerConfig
	switch {
	case name == "" && len(cfg.Servers) == 1:
		sc = cfg.Servers[0]
	case name == "":
		return nil, nil, core.Errorf(core.StatusInvalidArgument, "%s: the file has several servers, name one: %s", path, strings.Join(names, ", "))
	default:
		for _, s := range cfg.Servers {
			if s.Name == name {
				sc = s
			}
		}
		if sc == nil {
			return nil, nil, core.Errorf(core.StatusNotFound, "%s: no server %s (the file has: %s)", path, jsonQuote(name), strings.Join(names, ", "))
		}
	}
	if _, err := config.Parse(sc.Client, version); err != nil {
		return nil, nil, &core.Error{Status: err.Status, Message: path + ": " + sc.Spell(err.Message)}
	}
	return sc, cfg, nil
}

// HostGuards names the guard stages the host would apply to server sc of
// cfg that a lone client talking to it does not: "pins" (the file pins
// definitions) and "tool_filters" (its tools.allow / tools.deny). A
// program that talks to the server alone must go through a host instead
// when any is named (lmcp_host_file_server's "host_guards").
func HostGuards(cfg *Config, sc *ServerConfig) []string {
	out := []string{}
	if cfg.Pins != nil {
		out = append(out, "pins")
	}
	if len(sc.Allow) > 0 || len(sc.Deny) > 0 {
		out = append(out, "tool_filters")
	}
	return out
}
