package host

import (
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/sandbox"
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
	// Warnings name each member of the file the host ignored (see
	// LoadOptions.Strict), as "config.<path>: ignored: why".
	Warnings []string
	// Deferred is "deferred_tools" (nil: list_tools offers every tool).
	Deferred *DeferredConfig
	// Pins is "pins" (nil: no pinning; pins.go).
	Pins *PinsConfig
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
	// Start is StartEager or StartLazy.
	Start string
	// Idle stops a lazy server nothing has used for that long (0: never;
	// idle.go).
	Idle time.Duration
	// PerSession ("per_session": true) asks a gateway (package gateway)
	// for one instance of the server per front session instead of one
	// shared by all (Subset makes them); the host itself runs it as any
	// other server.
	PerSession bool
	// At is the server's path in messages, as the file spells it
	// ("config.servers.github").
	At string
	// spelled maps a transport field to the member the file gave it as
	// ("url" from Windsurf's "serverUrl"), for messages.
	spelled map[string]string
	// typos are the "did you mean" notes for the server's unknown
	// members: an error about the server carries them (typoHints).
	typos []string
}

// Spell turns a message about the server's client configuration
// ("config.transport.url: ...", "config.timeouts.call_ms: ...") into one
// that names the member as the file spells it ("config.mcpServers.w.serverUrl:
// ...", "config.mcpServers.w.timeouts.call_ms: ...").
func (sc *ServerConfig) Spell(msg string) string {
	at := sc.At
	if at == "" {
		at = "config.mcpServers." + sc.Name
	}
	rest, ok := strings.CutPrefix(msg, "config.")
	if !ok {
		return at + ": " + msg
	}
	if tr, isTr := strings.CutPrefix(rest, "transport."); isTr {
		end := strings.IndexAny(tr, ".:[")
		if end < 0 {
			end = len(tr)
		}
		key := tr[:end]
		if spelled := sc.spelled[key]; spelled != "" {
			key = spelled
		}
		rest = key + tr[end:]
	}
	return at + "." + rest
}

// serverName: the characters MCP allows in tool names, since the name
// prefixes them; "__" would make the prefix ambiguous.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// clientKeys are the per-server fields passed to the client configuration
// as they are.
var clientKeys = []string{"restart", "timeouts", "protocol", "auth", "sampling_policy", "handlers", "client_info", "limits", "capabilities"}

// transportKeys are the mcpServers fields that describe the transport.
var transportKeys = []string{"command", "args", "env", "cwd", "env_inherit", "stderr", "url", "headers", "type"}

// ParseConfig validates a host configuration given as text (see
// ParseConfigWith).
func ParseConfig(raw []byte) (*Config, *core.Error) {
	return ParseConfigWith(raw, LoadOptions{})
}

// ParseConfigWith validates a host configuration:
//
//	{"mcpServers": {name: server, ...}, "tool_prefix": "always",
//	 "defaults": {fields every server gets unless it sets them},
//	 "start": "eager"|"lazy", "idle_ms": n, "strict": false}
//
// as Claude Desktop, Claude Code, Cursor, VS Code ("servers", "inputs",
// JSON with comments), Cline, Roo Code and Windsurf write it (dialects.go).
// Strings may use the references variables.go resolves; messages name a
// missing variable, never a value.
func ParseConfigWith(raw []byte, opts LoadOptions) (*Config, *core.Error) {
	r := &reader{opts: opts, strict: opts.Strict}
	root, err := parseRoot(raw, opts)
	if err != nil {
		return nil, err
	}
	cfg, err := r.parseHost(root)
	if err != nil {
		// A typo is often why the file is invalid ("mcpServer" makes
		// "mcpServers" missing): its warning goes with the error.
		return nil, withTypos(err, typoHints("config", root, hostKeys))
	}
	return cfg, nil
}

// parseRoot decodes the file's text into its top-level object, with the
// application's overrides laid over it.
func parseRoot(raw []byte, opts LoadOptions) (map[string]any, *core.Error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, invalid("config", "is empty (a JSON object with \"mcpServers\" is required)")
	}
	if !utf8.Valid(raw) {
		return nil, invalid("config", "is not valid UTF-8")
	}
	text := stripJSONC(raw)
	var doc any
	if err := json.Unmarshal(text, &doc); err != nil {
		return nil, invalid("config", "is not valid JSON"+syntaxWhere(text, err))
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, invalid("config", "must be a JSON object")
	}
	for k, v := range opts.Override {
		// An object lies over the file's member by member (an
		// application's "defaults": {"handlers"} keeps the file's timeouts).
		root[k] = mergeObjects(root[k], v)
	}
	return root, nil
}

// parseHost validates the top-level members of a config and its servers.
func (r *reader) parseHost(root map[string]any) (*Config, *core.Error) {
	opts := r.opts
	if v, ok := root["strict"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return nil, invalid("config.strict", "must be true or false")
		}
		r.strict = r.strict || b
	}
	cfg := &Config{ToolPrefix: PrefixAlways}
	start := StartEager
	idle := time.Duration(-1)
	var servers map[string]any
	for _, key := range sortedKeys(root) {
		v := root[key]
		switch key {
		case "mcpServers", "servers":
			if servers != nil {
				return nil, invalid("config", "has both \"mcpServers\" and \"servers\"; use one")
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, invalid("config."+key, "must be a JSON object of servers by name")
			}
			servers, r.serversKey = m, key
		case "tool_prefix":
			s, _ := v.(string)
			if s != PrefixAlways && s != PrefixOnCollision && s != PrefixNever {
				return nil, invalid("config.tool_prefix", `must be one of "always", "on_collision", "never"`)
			}
			cfg.ToolPrefix = s
		case "start":
			s, err := startMode("config.start", v)
			if err != nil {
				return nil, err
			}
			start = s
		case "idle_ms":
			d, err := idleMS("config.idle_ms", v)
			if err != nil {
				return nil, err
			}
			idle = d
		case "inputs":
			if err := r.parseInputs(v); err != nil {
				return nil, err
			}
		case "deferred_tools":
			d, err := parseDeferred(v)
			if err != nil {
				return nil, err
			}
			cfg.Deferred = d
		case "pins":
			p, err := parsePins(v)
			if err != nil {
				return nil, err
			}
			cfg.Pins = p
		case "defaults", "strict":
		default:
			if err := r.ignore("config", key, foreignKeys[key], hostKeys); err != nil {
				return nil, err
			}
		}
	}
	if opts.Start != "" {
		s, err := startMode("the start option", opts.Start)
		if err != nil {
			return nil, err
		}
		start = s
	}
	if servers == nil {
		return nil, invalid("config.mcpServers", "is required (or \"servers\", as VS Code writes it)")
	}
	var defaults map[string]any
	if v, ok := root["defaults"]; ok && v != nil {
		if defaults, ok = v.(map[string]any); !ok {
			return nil, invalid("config.defaults", "must be a JSON object")
		}
		for k := range defaults {
			if !contains(clientKeys, k) && !contains(sandboxKeys, k) {
				return nil, invalid("config.defaults."+k, "is not a field servers can share (known: "+strings.Join(append(append([]string(nil), clientKeys...), sandboxKeys...), ", ")+")")
			}
		}
	}
	for _, name := range sortedKeys(servers) {
		sc, err := r.parseServer(name, servers[name], defaults)
		if err != nil {
			return nil, err
		}
		if sc.Start == "" {
			sc.Start = start
		}
		if sc.Idle < 0 {
			sc.Idle = 0
			if idle > 0 && sc.Start == StartLazy {
				sc.Idle = idle // the host-wide value is for its lazy servers
			}
		}
		if sc.Idle > 0 && sc.Start != StartLazy {
			return nil, invalid(sc.At+".idle_ms", `stops a lazy server: it needs "start": "lazy" (the server's or the host's)`)
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	cfg.Warnings = r.warnings
	return cfg, nil
}

func startMode(at string, v any) (string, *core.Error) {
	s, _ := v.(string)
	if s != StartEager && s != StartLazy {
		return "", invalid(at, `must be "eager" or "lazy"`)
	}
	return s, nil
}

func idleMS(at string, v any) (time.Duration, *core.Error) {
	n, ok := v.(float64)
	if !ok || n < 1 || n != float64(int64(n)) || n > 1<<40 {
		return 0, invalid(at, "must be a whole number of milliseconds, at least 1")
	}
	return time.Duration(n) * time.Millisecond, nil
}

func (r *reader) parseServer(name string, v any, defaults map[string]any) (*ServerConfig, *core.Error) {
	top := "config." + r.serversKey
	at := top + "." + name
	if !serverName.MatchString(name) || strings.Contains(name, Separator) {
		return nil, invalid(top, "the server name "+jsonQuote(name)+" must use only letters, digits, '_', '-' and '.' (at most 64) and must not contain \"__\": it prefixes tool names")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, "must be a JSON object")
	}
	known := append(append(append([]string(nil), serverKeys...), clientKeys...), transportKeys...)
	for hk := range honouredServerKeys {
		known = append(known, hk)
	}
	sc := &ServerConfig{Name: name, Enabled: true, At: at, Idle: -1, spelled: map[string]string{}, typos: typoHints(at, m, known)}
	if err := r.parseServerMembers(sc, m, known, defaults); err != nil {
		// "comand" makes "command" missing: the typo's warning goes
		// with the error it causes.
		return nil, withTypos(err, sc.typos)
	}
	return sc, nil
}

// parseServerMembers reads a server's members m (known: those the host
// reads) into sc.
func (r *reader) parseServerMembers(sc *ServerConfig, m map[string]any, known []string, defaults map[string]any) *core.Error {
	at := sc.At
	client := map[string]any{}
	var sandboxOn, sandboxObj any // sandboxEnabled and sandbox, the server's over the defaults'
	for k, dv := range defaults {
		dv, err := r.expandAll("config.defaults."+k, dv)
		if err != nil {
			return err
		}
		switch k {
		case "sandboxEnabled":
			sandboxOn = dv
		case "sandbox":
			sandboxObj = dv
		default:
			client[k] = dv
		}
	}
	tr := map[string]any{}
	var envFile string
	timeoutSeconds := -1.0
	for _, k := range sortedKeys(m) {
		if !contains(known, k) {
			what := foreignKeys[k]
			if misspeltSandboxEnabled(k) {
				what = `a misspelling of "sandboxEnabled": the server runs unconfined`
			}
			if err := r.ignore(at, k, what, known); err != nil {
				return err
			}
			continue
		}
		fv, err := r.expandAll(at+"."+k, m[k])
		if err != nil {
			return err
		}
		switch {
		case k == "enabled":
			b, ok := fv.(bool)
			if !ok {
				return invalid(at+".enabled", "must be true or false")
			}
			sc.Enabled = b
		case k == "disabled": // Claude Code's, Cline's and Windsurf's spelling
			b, ok := fv.(bool)
			if !ok {
				return invalid(at+".disabled", "must be true or false")
			}
			sc.Enabled = !b
		case k == "sandboxEnabled":
			sandboxOn = fv
		case k == "sandbox":
			sandboxObj = mergeObjects(sandboxObj, fv)
		case k == "tools":
			if err := parseToolFilter(at+".tools", fv, sc); err != nil {
				return err
			}
		case k == "start":
			s, err := startMode(at+".start", fv)
			if err != nil {
				return err
			}
			sc.Start = s
		case k == "idle_ms":
			d, err := idleMS(at+".idle_ms", fv)
			if err != nil {
				return err
			}
			sc.Idle = d
		case k == "per_session":
			b, ok := fv.(bool)
			if !ok {
				return invalid(at+".per_session", "must be true or false")
			}
			sc.PerSession = b
		case k == "envFile":
			s, ok := fv.(string)
			if !ok || s == "" {
				return invalid(at+".envFile", "must be the path of a file of NAME=value lines")
			}
			envFile = s
		case k == "timeout":
			n, ok := fv.(float64)
			if !ok || n <= 0 || n > 1<<30 {
				return invalid(at+".timeout", "must be a positive number of seconds (Cline's request timeout)")
			}
			timeoutSeconds = n
		case k == "serverUrl" || k == "httpUrl":
			if _, dup := m["url"]; dup {
				return invalid(at+"."+k, "is another spelling of \"url\", which is also given; use one")
			}
			tr["url"], sc.spelled["url"] = fv, k
			if k == "httpUrl" {
				tr["type"] = "streamable_http"
			}
		case k == "transportType":
			if _, dup := m["type"]; dup {
				return invalid(at+".transportType", "is another spelling of \"type\", which is also given; use one")
			}
			tr["type"], sc.spelled["type"] = fv, k
		case k == "disabledTools":
			arr, ok := fv.([]any)
			if !ok {
				return invalid(at+".disabledTools", "must be an array of tool names")
			}
			for i, item := range arr {
				s, ok := item.(string)
				if !ok {
					return invalid(at+".disabledTools["+itoa(i)+"]", "must be a string")
				}
				sc.Deny = append(sc.Deny, globEscape(s))
			}
		case contains(clientKeys, k):
			client[k] = mergeObjects(client[k], fv)
		default: // transportKeys
			tr[k] = fv
		}
	}
	if sandboxOn != nil {
		on, ok := sandboxOn.(bool)
		if !ok {
			return invalid(at+".sandboxEnabled", "must be true or false")
		}
		if on {
			if sandboxObj == nil {
				sandboxObj = map[string]any{}
			}
			tr["sandbox"] = sandboxObj
			r.noteDomains(at+".sandbox.network.allowedDomains", sandboxObj)
		}
	} else if sandboxObj != nil {
		// VS Code ignores a sandbox without sandboxEnabled; a user who
		// wrote one expects a confined server, so it is said aloud.
		if err := r.ignore(at, "sandbox", `"sandboxEnabled" is not true, so the server runs unconfined (add "sandboxEnabled": true)`, nil); err != nil {
			return err
		}
	}
	if envFile != "" {
		if err := r.mergeEnvFile(at+".envFile", envFile, tr); err != nil {
			return err
		}
	}
	if timeoutSeconds > 0 {
		t, _ := client["timeouts"].(map[string]any)
		if _, set := t["call_ms"]; !set {
			t = mergeObjects(t, map[string]any{"call_ms": float64(int64(timeoutSeconds * 1000))}).(map[string]any)
			client["timeouts"] = t
		}
	}
	t, err := transportOf(at, tr)
	if err != nil {
		for canon, spelled := range sc.spelled {
			if p := at + "." + canon + ":"; strings.HasPrefix(err.Message, p) {
				err = &core.Error{Status: err.Status, Message: at + "." + spelled + ":" + strings.TrimPrefix(err.Message, p)}
			}
		}
		return err
	}
	client["transport"] = t
	sc.Client = jsonx.MustMarshal(client)
	return nil
}

// misspeltSandboxEnabled reports whether key is "sandboxEnabled" written
// another way ("sandbox_enabled", "SandboxEnabled", "sandboxEnable"): a
// server its author meant confined would otherwise run unconfined with
// nothing but a generic warning.
func misspeltSandboxEnabled(key string) bool {
	k := strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(key))
	return k != "sandbox" && key != "sandboxEnabled" && (k == "sandboxenabled" || k == "sandboxenable" || k == "enablesandbox" ||
		k == "sandboxed" || k == "sandboxon" || strings.HasPrefix(k, "sandboxenab") || strings.HasPrefix(k, "sanboxenab"))
}

// noteDomains warns of allowedDomains entries that grant more than they
// may seem to (a bare "localhost": every port of the machine's loopback).
// A malformed entry is the transport's to refuse, with its reason.
func (r *reader) noteDomains(at string, sandboxObj any) {
	sb, _ := sandboxObj.(map[string]any)
	nw, _ := sb["network"].(map[string]any)
	list, _ := nw["allowedDomains"].([]any)
	for i, v := range list {
		if s, ok := v.(string); ok {
			if w, err := sandbox.CheckDomain(s); err == nil && w != "" {
				r.warnings = append(r.warnings, at+"["+itoa(i)+"]: "+w)
			}
		}
	}
}

// secretFiles are the files of the library's own secrets this
// configuration names: the pin file and the token store files.
func (c *Config) secretFiles() []string {
	var out []string
	if c.Pins != nil && c.Pins.Store.Type == "file" {
		out = append(out, c.Pins.Store.Path)
	}
	for _, sc := range c.Servers {
		var client struct {
			Auth struct {
				TokenStore any `json:"token_store"`
			} `json:"auth"`
		}
		if json.Unmarshal(sc.Client, &client) != nil {
			continue
		}
		if ts, ok := client.Auth.TokenStore.(map[string]any); ok && ts["type"] == "file" {
			if p, ok := ts["path"].(string); ok {
				out = append(out, p)
			}
		}
	}
	return out
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
			sc.Deny = append(sc.Deny, globs...) // after disabledTools'
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
