package config

import (
	"slices"
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
	"github.com/lemonmcp/lemonmcp/sandbox"
	"github.com/lemonmcp/lemonmcp/transport"
	"github.com/lemonmcp/lemonmcp/transport/stdio"
)

// Parsed is a validated configuration.
type Parsed struct {
	Options   core.Options
	Transport transport.Transport // built, not started
	// Sandboxed: a stdio server given a "sandbox" object; what confines
	// it is the transport's report of each start
	// (transport.SandboxReporter).
	Sandboxed bool

	auth           *auth.Config // the "auth" object, for parseHTTP
	restartDefault bool         // supervise unless "restart" says otherwise
}

// Transports lists the transport types this build supports.
var Transports = []string{"stdio", "streamable_http", "sse", "http"}

// knownTransports are every type the configuration language has.
var knownTransports = []string{"stdio", "streamable_http", "sse", "http"}

// Parse validates raw and builds the client's options and transport.
func Parse(raw []byte, libraryVersion string) (*Parsed, *core.Error) {
	return parse(raw, libraryVersion, false)
}

func parse(raw []byte, libraryVersion string, restartDefault bool) (*Parsed, *core.Error) {
	if len(raw) == 0 {
		return nil, core.Errorf(core.StatusInvalidArgument, "config: is empty (a JSON object with at least \"transport\" is required)")
	}
	if _, err := jsonx.CheckValue(raw); err != nil {
		return nil, core.Errorf(core.StatusInvalidArgument, "config: %s", err.Error())
	}
	var doc any
	if err := jsonx.Unmarshal(raw, &doc); err != nil {
		return nil, core.Errorf(core.StatusInvalidArgument, "config: not valid JSON")
	}
	root, err := newObject("config", doc)
	if err != nil {
		return nil, err
	}
	p := &Parsed{Options: core.DefaultOptions(libraryVersion), restartDefault: restartDefault}
	steps := []func(*object, *Parsed) *core.Error{
		parseClientInfo, parseProtocol, parseTimeouts, parseLimits, parseHandlers, parseSamplingPolicy,
		parseCapabilities, parseResultFormat, parseAuth, parseRestart, parseTrace,
		// last: it uses the timeouts and limits
		func(root *object, p *Parsed) *core.Error { return parseTransport(root, p, libraryVersion) },
	}
	for _, step := range steps {
		if err := step(root, p); err != nil {
			return nil, err
		}
	}
	if err := root.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

func parseClientInfo(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("client_info")
	if err != nil || !ok {
		return err
	}
	ci := &p.Options.ClientInfo
	if send, ok, err := o.boolean("send"); err != nil {
		return err
	} else if ok {
		p.Options.OmitClientInfo = !send
	}
	for key, dst := range map[string]*string{"name": &ci.Name, "version": &ci.Version, "title": &ci.Title, "description": &ci.Description, "website_url": &ci.WebsiteURL} {
		s, ok, err := o.str(key)
		if err != nil {
			return err
		}
		if ok {
			if (key == "name" || key == "version") && s == "" {
				return invalid(o.at(key), "must not be empty")
			}
			*dst = s
		}
	}
	return o.finish()
}

// parseProtocol reads {"mode","versions"}. versions may mix both eras;
// each era keeps the library's newest-first order, and the mode decides
// which are used.
func parseProtocol(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("protocol")
	if err != nil || !ok {
		return err
	}
	mode, err := o.enum("mode", core.ModeAuto, core.ModeLegacy, core.ModeAuto, core.ModeModern)
	if err != nil {
		return err
	}
	p.Options.Mode = mode
	if err := parseModern(o, p); err != nil {
		return err
	}
	versions, ok, err := o.strList("versions")
	if err != nil {
		return err
	}
	if ok {
		if len(versions) == 0 {
			return invalid(o.at("versions"), "must list at least one protocol version")
		}
		all := append(append([]string(nil), core.ModernVersions...), core.LegacyVersions...)
		for i, v := range versions {
			if !slices.Contains(all, v) {
				return invalid(o.at("versions")+"["+itoa(i)+"]", "is not a protocol version this build supports (supported: "+quoteAll(all)+")")
			}
		}
		p.Options.Versions = ordered(core.LegacyVersions, versions)
		p.Options.Modern = ordered(core.ModernVersions, versions)
	}
	switch {
	case mode == core.ModeLegacy && len(p.Options.Versions) == 0:
		return invalid(o.at("versions"), "lists no legacy-era version, which protocol.mode \"legacy\" needs (supported: "+quoteAll(core.LegacyVersions)+")")
	case mode == core.ModeModern && len(p.Options.Modern) == 0:
		return invalid(o.at("versions"), "lists no 2026-07-28-era version, which protocol.mode \"modern\" needs (supported: "+quoteAll(core.ModernVersions)+")")
	case mode == core.ModeModern:
		p.Options.Versions = nil
	}
	return o.finish()
}

// ordered keeps the versions of era that are listed, in era's order
// (newest first: the first is the one offered).
func ordered(era, listed []string) []string {
	var out []string
	for _, v := range era {
		if slices.Contains(listed, v) {
			out = append(out, v)
		}
	}
	return out
}

func parseTimeouts(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("timeouts")
	if err != nil || !ok {
		return err
	}
	t := &p.Options.Timeouts
	fields := []struct {
		key string
		min int64
		dst *time.Duration
	}{
		{"ready_ms", 1, &t.Ready},
		{"call_ms", 0, &t.Call},
		{"max_total_ms", 0, &t.MaxTotal},
		{"app_request_ms", 1, &t.AppRequest},
		{"close_grace_ms", 1, &t.CloseGrace}, // 0 would mean the stdio default
	}
	for _, f := range fields {
		if err := o.millis(f.key, f.min, f.dst); err != nil {
			return err
		}
	}
	if b, ok, err := o.boolean("reset_timeout_on_progress"); err != nil {
		return err
	} else if ok {
		t.ResetOnProgress = b
	}
	return o.finish()
}

func parseLimits(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("limits")
	if err != nil || !ok {
		return err
	}
	if n, ok, err := o.integer("max_message_bytes", 1024, 1<<31-1); err != nil {
		return err
	} else if ok {
		p.Options.MaxMessageBytes = int(n)
	}
	if n, ok, err := o.integer("max_pages", 1, 1<<20); err != nil {
		return err
	} else if ok {
		p.Options.MaxPages = int(n)
	}
	return o.finish()
}

func parseHandlers(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("handlers")
	if err != nil || !ok {
		return err
	}
	h := &p.Options.Handlers
	if r, ok, err := o.sub("roots"); err != nil {
		return err
	} else if ok {
		h.Roots = true
		if b, ok, err := r.boolean("list_changed"); err != nil {
			return err
		} else if ok {
			h.RootsListChange = b
		}
		if err := r.finish(); err != nil {
			return err
		}
	}
	if s, ok, err := o.sub("sampling"); err != nil {
		return err
	} else if ok {
		h.Sampling = true
		if b, ok, err := s.boolean("tools"); err != nil {
			return err
		} else if ok {
			h.SamplingTools = b
		}
		if b, ok, err := s.boolean("context"); err != nil {
			return err
		} else if ok {
			h.SamplingContext = b
		}
		if err := s.finish(); err != nil {
			return err
		}
	}
	if a, ok, err := o.sub("authorization"); err != nil {
		return err
	} else if ok {
		h.Authorization = true
		if err := a.finish(); err != nil {
			return err
		}
	}
	if e, ok, err := o.sub("elicitation"); err != nil {
		return err
	} else if ok {
		h.Elicitation, h.ElicitForm = true, true
		if b, ok, err := e.boolean("form"); err != nil {
			return err
		} else if ok {
			h.ElicitForm = b
		}
		if b, ok, err := e.boolean("url"); err != nil {
			return err
		} else if ok {
			h.ElicitURL = b
		}
		if !h.ElicitForm && !h.ElicitURL {
			return invalid(e.path, "must enable at least one of \"form\" and \"url\"")
		}
		if err := e.finish(); err != nil {
			return err
		}
	}
	return o.finish()
}

// parseSamplingPolicy reads {"mode","max_tokens","allowed_models",
// "max_messages","max_text_chars"}. A policy advertises sampling even in
// deny mode, so that the server's requests get a structured refusal.
func parseSamplingPolicy(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("sampling_policy")
	if err != nil || !ok {
		return err
	}
	sp := &core.SamplingPolicy{MaxTokens: 1024}
	if sp.Mode, err = o.enum("mode", core.PolicyDeny, core.PolicyDeny, core.PolicyModel, core.PolicyReviewedModel); err != nil {
		return err
	}
	if n, ok, err := o.integer("max_tokens", 1, 1<<40); err != nil {
		return err
	} else if ok {
		sp.MaxTokens = n
	}
	if models, _, err := o.strList("allowed_models"); err != nil {
		return err
	} else {
		sp.AllowedModels = models
	}
	if n, ok, err := o.integer("max_messages", 0, 1<<31-1); err != nil {
		return err
	} else if ok {
		sp.MaxMessages = int(n)
	}
	if n, ok, err := o.integer("max_text_chars", 0, 1<<40); err != nil {
		return err
	} else if ok {
		sp.MaxTextChars = int(n)
	}
	p.Options.SamplingPolicy = sp
	return o.finish()
}

// parseCapabilities reads static capabilities. Only "experimental" may be
// given: roots, sampling and elicitation are advertised from "handlers" and
// "sampling_policy", so a capability is never claimed without something
// that can answer for it.
func parseCapabilities(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("capabilities")
	if err != nil || !ok {
		return err
	}
	for _, k := range []string{"roots", "sampling", "elicitation"} {
		if _, has := o.m[k]; has {
			instead := "handlers." + k
			if k == "sampling" {
				instead += " or sampling_policy"
			}
			return invalid(o.at(k), "cannot be declared statically; configure "+instead+" instead")
		}
	}
	if exp, ok, err := o.sub("experimental"); err != nil {
		return err
	} else if ok {
		p.Options.Experimental = jsonx.MustMarshal(exp.m)
		exp.used = map[string]bool{}
		for k := range exp.m {
			exp.used[k] = true
		}
	}
	return o.finish()
}

// parseResultFormat accepts the one result format, "json", so that a
// configuration naming it stays valid. ("etf", the Erlang term format, was
// removed: the Elixir binding decodes JSON faster than it decoded terms.)
func parseResultFormat(root *object, _ *Parsed) *core.Error {
	f, err := root.enum("result_format", "json", "json")
	if err == nil || f != "" {
		return err
	}
	if s, _, _ := root.str("result_format"); s == "etf" {
		return invalid(root.at("result_format"), `must be "json" (the "etf" format was removed; payloads are always JSON)`)
	}
	return err
}

func parseTransport(root *object, p *Parsed, libraryVersion string) *core.Error {
	v, ok := root.get("transport")
	if !ok {
		return invalid("config.transport", "is required")
	}
	o, err := newObject("config.transport", v)
	if err != nil {
		return err
	}
	kind, err := o.requiredStr("type")
	if err != nil {
		return err
	}
	if !slices.Contains(knownTransports, kind) {
		return invalid(o.at("type"), "must be one of "+quoteAll(knownTransports))
	}
	if !slices.Contains(Transports, kind) {
		return core.Errorf(core.StatusUnsupported, "config.transport.type: %q is not supported by this build (supported: %s)", kind, quoteAll(Transports))
	}
	var tr transport.Transport
	if kind == "stdio" {
		switch {
		case p.auth != nil:
			return invalid("config.auth", "applies to the HTTP transports only (a stdio server takes its credentials from its environment)")
		case p.Options.Handlers.Authorization:
			return invalid("config.handlers.authorization", "applies to the HTTP transports only")
		}
		tr, err = parseStdio(o, p)
	} else {
		tr, err = parseHTTP(kind, o, p, libraryVersion)
	}
	if err != nil {
		return err
	}
	p.Transport = tr
	return o.finish()
}

// stdioFields are the fields of a stdio transport object.
var stdioFields = []string{"type", "command", "args", "env", "env_inherit", "cwd", "stderr", "sandbox"}

func parseStdio(o *object, p *Parsed) (transport.Transport, *core.Error) {
	// A typo ("comand") is reported as the unknown field it is, before the
	// field it was meant to be is found missing.
	if err := o.onlyKnown(stdioFields...); err != nil {
		return nil, err
	}
	command, err := o.requiredStr("command")
	if err != nil {
		return nil, err
	}
	args, _, err := o.strList("args")
	if err != nil {
		return nil, err
	}
	env, err := o.strMap("env")
	if err != nil {
		return nil, err
	}
	inherit, err := o.enum("env_inherit", "minimal", "minimal", "all")
	if err != nil {
		return nil, err
	}
	cwd, _, err := o.str("cwd")
	if err != nil {
		return nil, err
	}
	stderr, err := o.enum("stderr", "capture", "capture", "merge", "discard")
	if err != nil {
		return nil, err
	}
	policy, err := parseSandbox(o)
	if err != nil {
		return nil, err
	}
	cfg := stdio.Config{
		Command:         command,
		Args:            args,
		Env:             env,
		EnvInherit:      inherit,
		Cwd:             cwd,
		Stderr:          stderr,
		MaxMessageBytes: p.Options.MaxMessageBytes,
		CloseGrace:      p.Options.Timeouts.CloseGrace,
	}
	grace := cfg.CloseGrace
	if grace == 0 {
		grace = stdio.DefaultCloseGrace
	}
	// Through the helper when it is installed, so nothing the server
	// starts (a daemon that left its process group) outlives it.
	cfg.Launcher = sandbox.Reaper(grace)
	if policy != nil {
		// A sandbox this machine cannot give fails the start (the
		// launcher's error names the layer and why), not the reading: a
		// host's other servers start all the same.
		cfg.Launcher = sandbox.Confine(*policy, grace)
		p.Sandboxed = true
	}
	tr, terr := stdio.New(cfg)
	if p.Options.Restart != nil {
		p.Options.NewTransport = func() (transport.Transport, error) { return stdio.New(cfg) }
	}
	if terr != nil {
		e := core.AsError(terr)
		return nil, core.Errorf(e.Status, "config.transport: %s", e.Message)
	}
	return tr, nil
}
