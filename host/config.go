package host

import (
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Tool name prefixing modes ("tool_prefix").
const (
	PrefixAlways      = "always"       // every tool is server__tool
	PrefixOnCollision = "on_collision" // only names offered by two servers are prefixed
	PrefixNever       = "never"        // names as the servers give them; a collision is an error
)

// Separator joins a server's name and a tool's name.
const Separator = "__"

// Config is a validated host configuration.
type Config struct {
	ToolPrefix string
	Servers    []*ServerConfig // sorted by name
	// Deferred is "deferred_tools" (nil: list_tools offers every tool).
	Deferred *DeferredConfig
}

// ServerConfig is one server of the host.
type ServerConfig struct {
	Name    string
	Enabled bool
	// Client is the server's client configuration, in the language of
	// config.Parse (built from the mcpServers entry).
	Client []byte
	// Allow and Deny are glob lists (path.Match) over the server's tool
	// names; an empty Allow allows every tool.
	Allow, Deny []string
}

// serverName: the characters MCP allows in tool names, since the name
// prefixes them; "__" would make the prefix ambiguous.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// clientKeys are the per-server fields passed to the client configuration
// as they are.
var clientKeys = []string{"restart", "timeouts", "protocol", "auth", "sampling_policy", "handlers", "client_info", "limits", "capabilities"}

// transportKeys are the mcpServers fields that describe the transport.
var transportKeys = []string{"command", "args", "env", "cwd", "env_inherit", "stderr", "url", "headers", "type"}

// ParseConfig validates a host configuration:
//
//	{"mcpServers": {name: server, ...}, "tool_prefix": "always",
//	 "defaults": {fields every server gets unless it sets them}}
//
// ("servers" is accepted for "mcpServers", as in VS Code's mcp.json).
// Strings may use ${VAR} and ${VAR:-default}, expanded from the process
// environment; messages name a missing variable, never a value.
func ParseConfig(raw []byte) (*Config, *core.Error) {
	if len(raw) == 0 {
		return nil, invalid("config", "is empty (a JSON object with \"mcpServers\" is required)")
	}
	if _, err := jsonx.CheckValue(raw); err != nil {
		return nil, invalid("config", err.Error())
	}
	var doc any
	if err := jsonx.Unmarshal(raw, &doc); err != nil {
		return nil, invalid("config", "not valid JSON")
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, invalid("config", "must be a JSON object")
	}
	cfg := &Config{ToolPrefix: PrefixAlways}
	var servers map[string]any
	for key, v := range root {
		switch key {
		case "mcpServers", "servers":
			if servers != nil {
				return nil, invalid("config", "has both \"mcpServers\" and \"servers\"; use one")
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, invalid("config."+key, "must be a JSON object of servers by name")
			}
			servers = m
		case "tool_prefix":
			s, _ := v.(string)
			if s != PrefixAlways && s != PrefixOnCollision && s != PrefixNever {
				return nil, invalid("config.tool_prefix", `must be one of "always", "on_collision", "never"`)
			}
			cfg.ToolPrefix = s
		case "defaults":
		case "deferred_tools":
			d, err := parseDeferred(v)
			if err != nil {
				return nil, err
			}
			cfg.Deferred = d
		default:
			return nil, invalid("config."+key, "is not a known field (known: mcpServers, servers, tool_prefix, defaults, deferred_tools)")
		}
	}
	if servers == nil {
		return nil, invalid("config.mcpServers", "is required")
	}
	var defaults map[string]any
	if v, ok := root["defaults"]; ok && v != nil {
		if defaults, ok = v.(map[string]any); !ok {
			return nil, invalid("config.defaults", "must be a JSON object")
		}
		for k := range defaults {
			if !contains(clientKeys, k) {
				return nil, invalid("config.defaults."+k, "is not a field servers can share (known: "+strings.Join(clientKeys, ", ")+")")
			}
		}
	}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		sc, err := parseServer(name, servers[name], defaults)
		if err != nil {
			return nil, err
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	return cfg, nil
}

func parseServer(name string, v any, defaults map[string]any) (*ServerConfig, *core.Error) {
	at := "config.mcpServers." + name
	if !serverName.MatchString(name) || strings.Contains(name, Separator) {
		return nil, invalid("config.mcpServers", "the server name "+jsonQuote(name)+" must use only letters, digits, '_', '-' and '.' (at most 64) and must not contain \"__\": it prefixes tool names")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, "must be a JSON object")
	}
	expanded, err := expandAll(at, m)
	if err != nil {
		return nil, err
	}
	m = expanded.(map[string]any)
	sc := &ServerConfig{Name: name, Enabled: true}
	client := map[string]any{}
	for k, dv := range defaults {
		dv, err := expandAll("config.defaults."+k, dv)
		if err != nil {
			return nil, err
		}
		client[k] = dv
	}
	tr := map[string]any{}
	for k, fv := range m {
		switch {
		case k == "enabled":
			b, ok := fv.(bool)
			if !ok {
				return nil, invalid(at+".enabled", "must be true or false")
			}
			sc.Enabled = b
		case k == "disabled": // Claude Code's spelling
			b, ok := fv.(bool)
			if !ok {
				return nil, invalid(at+".disabled", "must be true or false")
			}
			sc.Enabled = !b
		case k == "tools":
			if err := parseToolFilter(at+".tools", fv, sc); err != nil {
				return nil, err
			}
		case contains(clientKeys, k):
			client[k] = mergeObjects(client[k], fv)
		case contains(transportKeys, k):
			tr[k] = fv
		default:
			return nil, invalid(at+"."+k, "is not a known server field")
		}
	}
	t, err := transportOf(at, tr)
	if err != nil {
		return nil, err
	}
	client["transport"] = t
	sc.Client = jsonx.MustMarshal(client)
	return sc, nil
}

// transportOf turns the mcpServers transport fields into a client
// transport object.
func transportOf(at string, tr map[string]any) (map[string]any, *core.Error) {
	_, hasCmd := tr["command"]
	_, hasURL := tr["url"]
	kind, _ := tr["type"].(string)
	if v, ok := tr["type"]; ok {
		if _, isStr := v.(string); !isStr {
			return nil, invalid(at+".type", "must be a string")
		}
	}
	switch {
	case hasCmd && hasURL:
		return nil, invalid(at, "has both \"command\" and \"url\"; a server is either a command or a URL")
	case !hasCmd && !hasURL:
		return nil, invalid(at, "needs \"command\" (a stdio server) or \"url\" (an HTTP server)")
	}
	out := map[string]any{}
	if hasCmd {
		if kind != "" && kind != "stdio" {
			return nil, invalid(at+".type", "must be \"stdio\" for a server with a command")
		}
		for k, v := range tr {
			switch k {
			case "type":
			case "url", "headers":
				return nil, invalid(at+"."+k, "applies to URL servers only")
			default:
				out[k] = v
			}
		}
		out["type"] = "stdio"
		return out, nil
	}
	switch kind {
	case "", "http":
		out["type"] = "http"
	case "streamable_http", "streamable-http", "streamableHttp":
		out["type"] = "streamable_http"
	case "sse":
		out["type"] = "sse"
	default:
		return nil, invalid(at+".type", `must be one of "stdio", "http", "streamable_http", "sse"`)
	}
	for k, v := range tr {
		switch k {
		case "type":
		case "url", "headers":
			out[k] = v
		default:
			return nil, invalid(at+"."+k, "applies to command servers only")
		}
	}
	return out, nil
}

// mergeObjects lays a server's object field over the defaults' one, member
// by member ("timeouts": {"call_ms"} keeps the default ready_ms); any other
// value replaces the default.
func mergeObjects(def, v any) any {
	d, ok1 := def.(map[string]any)
	o, ok2 := v.(map[string]any)
	if !ok1 || !ok2 {
		return v
	}
	out := make(map[string]any, len(d)+len(o))
	for k, x := range d {
		out[k] = x
	}
	for k, x := range o {
		out[k] = x
	}
	return out
}

func parseToolFilter(at string, v any, sc *ServerConfig) *core.Error {
	m, ok := v.(map[string]any)
	if !ok {
		return invalid(at, "must be a JSON object with \"allow\" and/or \"deny\" glob lists")
	}
	for k, lv := range m {
		if k != "allow" && k != "deny" {
			return invalid(at+"."+k, "is not a known field (known: allow, deny)")
		}
		arr, ok := lv.([]any)
		if !ok {
			return invalid(at+"."+k, "must be an array of glob strings")
		}
		var globs []string
		for i, item := range arr {
			s, ok := item.(string)
			if !ok {
				return invalid(at+"."+k+"["+itoa(i)+"]", "must be a string")
			}
			if _, err := path.Match(s, ""); err != nil {
				return invalid(at+"."+k+"["+itoa(i)+"]", "is not a valid glob pattern")
			}
			globs = append(globs, s)
		}
		if k == "allow" {
			sc.Allow = globs
		} else {
			sc.Deny = globs
		}
	}
	return nil
}

// Permits reports whether the server's tools.allow/tools.deny let tool
// through.
func (sc *ServerConfig) Permits(tool string) bool {
	for _, g := range sc.Deny {
		if ok, _ := path.Match(g, tool); ok {
			return false
		}
	}
	if len(sc.Allow) == 0 {
		return true
	}
	for _, g := range sc.Allow {
		if ok, _ := path.Match(g, tool); ok {
			return true
		}
	}
	return false
}

// varRef is ${NAME} or ${NAME:-default}.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandAll expands variables in every string of v. Messages name the
// field and the variable, never a value.
func expandAll(at string, v any) (any, *core.Error) {
	switch x := v.(type) {
	case string:
		return expand(at, x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			e, err := expandAll(at+"."+k, item)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			e, err := expandAll(at+"["+itoa(i)+"]", item)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	default:
		return v, nil
	}
}

func expand(at, s string) (string, *core.Error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var missing string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if val, ok := os.LookupEnv(m[1]); ok && (val != "" || m[2] == "") {
			return val
		}
		if m[2] != "" {
			return m[3]
		}
		if missing == "" {
			missing = m[1]
		}
		return ""
	})
	if missing != "" {
		return "", invalid(at, "uses ${"+missing+"}, which is not set in the environment (write ${"+missing+":-default} for a fallback)")
	}
	return out, nil
}

func invalid(path, what string) *core.Error {
	return core.Errorf(core.StatusInvalidArgument, "%s: %s", path, what)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(i int) string { return strings.TrimSpace(string(jsonx.MustMarshal(i))) }

func jsonQuote(s string) string { return string(jsonx.AppendString(nil, s)) }
