package config

import (
	"strings"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/core"
)

// parseAuth reads the "auth" object (OAuth for the HTTP transports) into
// p.auth; parseHTTP builds the OAuth layer from it once the URL is known.
// Secret values (client_secret, refresh_token, key_pem) are never echoed.
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
		string(auth.FlowAuto), string(auth.FlowClientCredentials), string(auth.FlowAuthorizationCode))
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
		if key.Alg, err = k.enum("alg", "", "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"); err != nil {
			return err
		}
		if err := k.finish(); err != nil {
			return err
		}
		cfg.PrivateKey = key
	}
	store, err := o.enum("token_store", "memory", "memory", "host")
	if err != nil {
		return err
	}
	cfg.HostTokenStore = store == "host"
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
	p.Options.AuthHostTokenStore = cfg.HostTokenStore
	p.Options.AuthorizationTimeout = cfg.AuthorizationTimeout
	p.auth = cfg
	return nil
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
