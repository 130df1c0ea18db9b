package config

import (
	"strings"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/sandbox"
	"github.com/lemonmcp/lemonmcp/store"
)

// parseAuth reads the "auth" object (OAuth for the HTTP transports) into
// p.auth; parseHTTP builds the OAuth layer from it once the URL is known.
// Secret values (client_secret, refresh_token, key_pem, assertion,
// subject_token) are never echoed.
func parseAuth(root *object, p *Parsed) *core.Error {
	o, ok, err := root.sub("auth")
	if err != nil || !ok {
		return err
	}
	cfg := &auth.Config{}
	strs := []struct {
		key string
		dst *string
	}{
		{"client_id", &cfg.ClientID},
		{"client_issuer", &cfg.ClientIssuer},
		{"client_secret", &cfg.ClientSecret},
		{"client_metadata_url", &cfg.ClientMetadataURL},
		{"client_name", &cfg.ClientName},
		{"redirect_uri", &cfg.RedirectURI},
		{"refresh_token", &cfg.RefreshToken},
		{"assertion", &cfg.Assertion},
	}
	for _, f := range strs {
		s, ok, err := o.str(f.key)
		if err != nil {
			return err
		}
		if ok && strings.TrimSpace(s) == "" {
			return invalid(o.at(f.key), "must not be empty (leave the field out instead)")
		}
		*f.dst = s
	}
	if cfg.TokenAuthMethod, err = o.enum("token_auth_method", "",
		auth.MethodClientSecretBasic, auth.MethodClientSecretPost, auth.MethodNone, auth.MethodPrivateKeyJWT); err != nil {
		return err
	}
	flow, err := o.enum("flow", string(auth.FlowAuto),
		string(auth.FlowAuto), string(auth.FlowClientCredentials), string(auth.FlowAuthorizationCode), string(auth.FlowJWTBearer))
	if err != nil {
		return err
	}
	cfg.Flow = auth.Flow(flow)
	if scopes, ok, err := o.strList("scopes"); err != nil {
		return err
	} else if ok {
		for i, s := range scopes {
			if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
				return invalid(o.at("scopes")+"["+itoa(i)+"]", "must be one non-empty scope token (no spaces or quotes)")
			}
		}
		cfg.Scopes = scopes
	}
	if k, ok, err := o.sub("private_key_jwt"); err != nil {
		return err
	} else if ok {
		key := &auth.PrivateKeyJWT{}
		if key.KeyPEM, err = k.requiredStr("key_pem"); err != nil {
			return err
		}
		if key.KeyID, _, err = k.str("kid"); err != nil {
			return err
		}
		if key.Alg, err = k.enum("alg", "", jwtAlgs...); err != nil {
			return err
		}
		if err := k.finish(); err != nil {
			return err
		}
		cfg.PrivateKey = key
	}
	if cfg.TokenExchange, err = parseTokenExchange(o); err != nil {
		return err
	}
	if cfg.DPoP, err = parseDPoP(o); err != nil {
		return err
	}
	if err := parseTokenStore(o, cfg); err != nil {
		return err
	}
	if err := o.millis("authorization_timeout_ms", 1, &cfg.AuthorizationTimeout); err != nil {
		return err
	}
	if n, ok, err := o.integer("max_step_ups", 1, 10); err != nil {
		return err
	} else if ok {
		cfg.MaxStepUps = int(n)
	}
	if b, ok, err := o.boolean("allow_insecure_http"); err != nil {
		return err
	} else if ok {
		cfg.AllowInsecureHTTP = b
	}
	if err := o.finish(); err != nil {
		return err
	}
	switch {
	case cfg.Flow == auth.FlowClientCredentials && cfg.ClientSecret == "" && cfg.PrivateKey == nil:
		return invalid(o.at("flow"), "\"client_credentials\" needs auth.client_secret or auth.private_key_jwt")
	case cfg.Flow == auth.FlowAuthorizationCode && !p.Options.Handlers.Authorization:
		return invalid(o.at("flow"), "\"authorization_code\" needs handlers.authorization (the host runs the browser step)")
	case cfg.Flow == auth.FlowJWTBearer && cfg.Assertion == "" && cfg.TokenExchange == nil:
		return invalid(o.at("flow"), "\"jwt_bearer\" needs auth.assertion or auth.token_exchange")
	case cfg.Assertion != "" && cfg.TokenExchange != nil:
		return invalid(o.at("assertion"), "set either auth.assertion or auth.token_exchange, not both")
	case cfg.Assertion != "" && strings.Count(cfg.Assertion, ".") != 2:
		return invalid(o.at("assertion"), "must be a JWT (three dot-separated parts)")
	case cfg.ClientIssuer != "" && cfg.ClientID == "":
		return invalid(o.at("client_issuer"), "needs auth.client_id (it names the server that client is registered with)")
	case cfg.ClientSecret != "" && cfg.ClientID == "":
		return invalid(o.at("client_secret"), "needs auth.client_id")
	case cfg.TokenAuthMethod == auth.MethodPrivateKeyJWT && cfg.PrivateKey == nil:
		return invalid(o.at("token_auth_method"), "\"private_key_jwt\" needs auth.private_key_jwt")
	case (cfg.TokenAuthMethod == auth.MethodClientSecretBasic || cfg.TokenAuthMethod == auth.MethodClientSecretPost) && cfg.ClientSecret == "":
		return invalid(o.at("token_auth_method"), "\""+cfg.TokenAuthMethod+"\" needs auth.client_secret")
	}
	if cfg.ClientName == "" {
		cfg.ClientName = p.Options.ClientInfo.Name
	}
	p.Options.AuthAppTokenStore = cfg.TokenStoreSpec != nil && cfg.TokenStoreSpec.Type == "app"
	p.Options.AuthorizationTimeout = cfg.AuthorizationTimeout
	p.auth = cfg
	return nil
}

// parseTokenStore reads auth.token_store: the store's one form
// (store.ParseSpec) with "key"? (the grant's name) and "lease_ms"?
// (absent: the grant lives in this client's memory only). A store URL
// may carry a password: it is never echoed.
func parseTokenStore(o *object, cfg *auth.Config) *core.Error {
	v, ok := o.get("token_store")
	if !ok {
		return nil
	}
	spec, fe := store.ParseSpec(v, "key", "lease_ms")
	if fe != nil {
		return storeSpecError(o.at("token_store"), fe)
	}
	if spec.Type == "file" {
		// The tokens are the library's own secret: no server it confines
		// may read them, listed or not.
		sandbox.DenySecret(spec.Path)
	}
	t, _, err := o.sub("token_store")
	if err != nil {
		return err
	}
	for _, k := range []string{"type", "path", "url", "encryption"} {
		t.get(k)
	}
	if k, ok, err := t.str("key"); err != nil {
		return err
	} else if ok {
		if strings.TrimSpace(k) == "" {
			return invalid(t.at("key"), "must not be empty (leave the field out for the default key)")
		}
		cfg.TokenStoreKey = k
	}
	if err := t.millis("lease_ms", 1000, &cfg.TokenStoreLease); err != nil {
		return err
	}
	if err := t.finish(); err != nil {
		return err
	}
	cfg.TokenStoreSpec = spec
	return nil
}

// storeSpecError is a store configuration error at path.
func storeSpecError(path string, fe *store.FieldError) *core.Error {
	if fe.Field == "" {
		return invalid(path, fe.Message)
	}
	return invalid(path+"."+fe.Field, fe.Message)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// jwtAlgs are the JWS algorithms of private_key_jwt and DPoP proofs.
var jwtAlgs = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// parseTokenExchange reads auth.token_exchange (SEP-990).
func parseTokenExchange(o *object) (*auth.TokenExchange, *core.Error) {
	t, ok, err := o.sub("token_exchange")
	if err != nil || !ok {
		return nil, err
	}
	te := &auth.TokenExchange{}
	if te.TokenEndpoint, err = t.requiredStr("token_endpoint"); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(te.TokenEndpoint, "https://") && !strings.HasPrefix(te.TokenEndpoint, "http://") {
		return nil, invalid(t.at("token_endpoint"), "must be an https:// URL (http:// on loopback)")
	}
	if te.SubjectToken, err = t.requiredStr("subject_token"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"subject_token_type", &te.SubjectTokenType},
		{"requested_token_type", &te.RequestedTokenType},
		{"audience", &te.Audience},
		{"resource", &te.Resource},
		{"client_id", &te.ClientID},
		{"client_secret", &te.ClientSecret},
	} {
		s, ok, err := t.str(f.key)
		if err != nil {
			return nil, err
		}
		if ok && strings.TrimSpace(s) == "" {
			return nil, invalid(t.at(f.key), "must not be empty (leave the field out instead)")
		}
		*f.dst = s
	}
	if te.SubjectTokenType != "" && !strings.HasPrefix(te.SubjectTokenType, "urn:") {
		return nil, invalid(t.at("subject_token_type"), "must be a token type URN (urn:ietf:params:oauth:token-type:id_token, ...)")
	}
	if te.RequestedTokenType != "" && !strings.HasPrefix(te.RequestedTokenType, "urn:") {
		return nil, invalid(t.at("requested_token_type"), "must be a token type URN")
	}
	if scopes, ok, err := t.strList("scopes"); err != nil {
		return nil, err
	} else if ok {
		for i, s := range scopes {
			if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
				return nil, invalid(t.at("scopes")+"["+itoa(i)+"]", "must be one non-empty scope token (no spaces or quotes)")
			}
		}
		te.Scopes = scopes
	}
	if te.TokenAuthMethod, err = t.enum("token_auth_method", "",
		auth.MethodClientSecretBasic, auth.MethodClientSecretPost, auth.MethodNone); err != nil {
		return nil, err
	}
	if err := t.finish(); err != nil {
		return nil, err
	}
	switch {
	case te.ClientSecret != "" && te.ClientID == "":
		return nil, invalid(t.at("client_secret"), "needs auth.token_exchange.client_id")
	case (te.TokenAuthMethod == auth.MethodClientSecretBasic || te.TokenAuthMethod == auth.MethodClientSecretPost) && te.ClientSecret == "":
		return nil, invalid(t.at("token_auth_method"), "\""+te.TokenAuthMethod+"\" needs auth.token_exchange.client_secret")
	}
	return te, nil
}

// parseDPoP reads auth.dpop: false/absent (off), true (an ephemeral ES256
// key), or {"alg"?, "key_pem"?}.
func parseDPoP(o *object) (*auth.DPoPConfig, *core.Error) {
	v, ok := o.get("dpop")
	if !ok {
		return nil, nil
	}
	if b, isBool := v.(bool); isBool {
		if !b {
			return nil, nil
		}
		return &auth.DPoPConfig{}, nil
	}
	if _, isObj := v.(map[string]any); !isObj {
		return nil, invalid(o.at("dpop"), "must be true, false or an object {\"alg\"?, \"key_pem\"?}")
	}
	d, _, err := o.sub("dpop")
	if err != nil {
		return nil, err
	}
	c := &auth.DPoPConfig{}
	if c.Alg, err = d.enum("alg", "", jwtAlgs...); err != nil {
		return nil, err
	}
	if s, ok, err := d.str("key_pem"); err != nil {
		return nil, err
	} else if ok {
		if strings.TrimSpace(s) == "" {
			return nil, invalid(d.at("key_pem"), "must not be empty (leave the field out for an ephemeral key)")
		}
		c.KeyPEM = s
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return c, nil
}

// newAuthManager builds the OAuth layer of an HTTP transport. Every HTTP
// client gets one, configured or not: without configuration a 401 still
// runs discovery, so the host learns what the server wants.
func newAuthManager(o *object, p *Parsed, url, userAgent string) (*auth.Manager, *core.Error) {
	cfg := auth.Config{}
	if p.auth != nil {
		cfg = *p.auth
	}
	cfg.UserAgent = userAgent
	m, err := auth.New(cfg, url)
	if err != nil {
		msg := err.Error()
		// The OAuth layer names its own fields; the configuration's is
		// "private_key_jwt".
		msg = strings.Replace(msg, "auth.private_key:", "auth.private_key_jwt:", 1)
		if strings.HasPrefix(msg, "auth.") {
			return nil, core.Errorf(core.StatusInvalidArgument, "config.%s", msg)
		}
		return nil, core.Errorf(core.StatusInvalidArgument, "%s: %s", o.path, msg)
	}
	return m, nil
}
