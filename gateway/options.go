package gateway

import (
	"os"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// Options configure a Server; ParseOptions reads them from the JSON the C
// ABI's lmcp_server_new takes (documented in include/lemonmcp.h):
//
//	{"name": "lemonmcp", "instructions": "...",
//	 "auth": {"bearer_env": NAME} | {"jwks_url", "issuer", "audience", "resource_metadata"?},
//	 "allowed_origins": ["https://app.example"], "allow_non_loopback": false,
//	 "session_idle_timeout_ms": 1800000, "max_sessions": 1024,
//	 "max_body_bytes": 4194304, "stop_timeout_ms": 10000,
//	 "resume_grace_ms": 30000}
type Options struct {
	Name         string
	Version      string // serverInfo.version: the library's (set by its caller)
	Instructions string
	Auth         *AuthOptions
	// AllowedOrigins are the Origin values an HTTP request may carry
	// besides loopback ones.
	AllowedOrigins   []string
	AllowNonLoopback bool
	SessionIdle      time.Duration // a front session unused this long is closed
	MaxSessions      int           // open front sessions; a new one past it gets 503
	MaxBodyBytes     int64         // one message (a POST body, a stdio line)
	StopTimeout      time.Duration // Stop's bound when the caller gives none
	// ResumeGrace is how long a call whose HTTP stream dropped waits for
	// the front to resume it (Last-Event-ID) before it is cancelled.
	ResumeGrace time.Duration
}

// AuthOptions is the HTTP front's authentication: a static bearer token
// read from an environment variable, or an OAuth 2.1 resource server.
type AuthOptions struct {
	BearerEnv string
	token     string // the variable's value, read once at parse time

	JWKSURL  string
	Issuer   string
	Audience string
}

// Defaults.
const (
	DefaultSessionIdle  = 30 * time.Minute
	DefaultMaxSessions  = 1024
	DefaultMaxBodyBytes = 4 << 20
	DefaultStopTimeout  = 10 * time.Second
	DefaultResumeGrace  = 30 * time.Second
)

// ParseOptions validates the options JSON; empty text means defaults.
func ParseOptions(raw []byte) (*Options, *core.Error) {
	o := &Options{Name: "lemonmcp", SessionIdle: DefaultSessionIdle, MaxSessions: DefaultMaxSessions, MaxBodyBytes: DefaultMaxBodyBytes, StopTimeout: DefaultStopTimeout, ResumeGrace: DefaultResumeGrace}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return o, nil
	}
	var m map[string]jsonx.RawMessage
	if jsonx.Unmarshal(raw, &m) != nil || m == nil {
		return nil, bad("options", "must be a JSON object")
	}
	for key, v := range m {
		var err *core.Error
		switch key {
		case "name":
			err = str("options.name", v, &o.Name, false)
		case "instructions":
			err = str("options.instructions", v, &o.Instructions, true)
		case "allowed_origins":
			if jsonx.Unmarshal(v, &o.AllowedOrigins) != nil {
				err = bad("options.allowed_origins", "must be an array of origins such as \"https://app.example\"")
			}
			for i, origin := range o.AllowedOrigins {
				if !strings.Contains(origin, "://") || strings.HasSuffix(origin, "/") {
					err = bad("options.allowed_origins["+itoa(int64(i))+"]", "must be an origin: scheme://host[:port], no path")
				}
			}
		case "allow_non_loopback":
			if jsonx.Unmarshal(v, &o.AllowNonLoopback) != nil {
				err = bad("options.allow_non_loopback", "must be true or false")
			}
		case "session_idle_timeout_ms":
			err = millis("options.session_idle_timeout_ms", v, &o.SessionIdle)
		case "stop_timeout_ms":
			err = millis("options.stop_timeout_ms", v, &o.StopTimeout)
		case "resume_grace_ms":
			err = millis("options.resume_grace_ms", v, &o.ResumeGrace)
		case "max_sessions":
			var n int64
			if err = count("options.max_sessions", v, &n); err == nil {
				o.MaxSessions = int(n)
			}
		case "max_body_bytes":
			err = count("options.max_body_bytes", v, &o.MaxBodyBytes)
		case "auth":
			o.Auth, err = parseAuth(v)
		default:
			err = bad("options."+key, "is not a known option (name, instructions, auth, allowed_origins, allow_non_loopback, session_idle_timeout_ms, max_sessions, max_body_bytes, stop_timeout_ms, resume_grace_ms)")
		}
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

func parseAuth(v []byte) (*AuthOptions, *core.Error) {
	var m map[string]string
	if jsonx.Unmarshal(v, &m) != nil || m == nil {
		return nil, bad("options.auth", `must be {"bearer_env": NAME} or {"jwks_url", "issuer", "audience"} (strings)`)
	}
	a := &AuthOptions{}
	for k, s := range m {
		switch k {
		case "bearer_env":
			a.BearerEnv = s
		case "jwks_url":
			a.JWKSURL = s
		case "issuer":
			a.Issuer = s
		case "audience":
			a.Audience = s
		default:
			return nil, bad("options.auth."+k, "is not a known field (bearer_env, or jwks_url, issuer, audience)")
		}
	}
	switch {
	case a.BearerEnv != "" && (a.JWKSURL != "" || a.Issuer != "" || a.Audience != ""):
		return nil, bad("options.auth", "takes bearer_env or a JWT check (jwks_url, issuer, audience), not both")
	case a.BearerEnv != "":
		tok, ok := os.LookupEnv(a.BearerEnv)
		if !ok || len(tok) < 16 {
			return nil, bad("options.auth.bearer_env", "names "+a.BearerEnv+", which must be set to a token of at least 16 characters")
		}
		a.token = tok
	case a.JWKSURL == "" || a.Issuer == "" || a.Audience == "":
		return nil, bad("options.auth", "a JWT check needs jwks_url, issuer and audience (this gateway's URL)")
	default:
		if !strings.HasPrefix(a.JWKSURL, "https://") && !isLoopbackURL(a.JWKSURL) {
			return nil, bad("options.auth.jwks_url", "must be an https URL (http only on loopback)")
		}
	}
	return a, nil
}

func str(field string, v []byte, dst *string, emptyOK bool) *core.Error {
	if jsonx.Unmarshal(v, dst) != nil || (!emptyOK && *dst == "") {
		return bad(field, "must be a non-empty string")
	}
	return nil
}

func count(field string, v []byte, dst *int64) *core.Error {
	n, ok := jsonx.Integer(v)
	if !ok || n <= 0 {
		return bad(field, "must be a positive integer")
	}
	*dst = n
	return nil
}

func millis(field string, v []byte, dst *time.Duration) *core.Error {
	var n int64
	if err := count(field, v, &n); err != nil {
		return err
	}
	*dst = time.Duration(n) * time.Millisecond
	return nil
}

func bad(field, why string) *core.Error {
	return core.Errorf(core.StatusInvalidArgument, "%s: %s", field, why)
}
