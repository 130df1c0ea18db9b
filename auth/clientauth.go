package auth

import (
	"net/url"

	"golang.org/x/oauth2"
)

// authMethod picks the token endpoint authentication method:
//  1. the configured TokenAuthMethod;
//  2. private_key_jwt when a key is configured and the server lists it
//     (or lists nothing);
//  3. the method dynamic registration returned, when the server lists it
//     or lists nothing;
//  4. a server that lists nothing: client_secret_basic with a secret (the
//     RFC 8414 default), none without;
//  5. otherwise client_secret_basic, client_secret_post, none, in that
//     order of preference, among the listed methods the client can use.
//
// A CIMD client has no secret: none, or private_key_jwt with a key.
func (m *Manager) authMethod(as *asMeta, reg *registration) string {
	if m.cfg.TokenAuthMethod != "" {
		return m.cfg.TokenAuthMethod
	}
	listed := as.TokenEndpointAuthMethodsSupported
	canUse := func(meth string) bool { return len(listed) == 0 || contains(listed, meth) }
	if m.signer != nil && canUse(MethodPrivateKeyJWT) {
		return MethodPrivateKeyJWT
	}
	if reg.method != "" && canUse(reg.method) && (reg.method != MethodPrivateKeyJWT || m.signer != nil) &&
		(reg.secret != "" || reg.method == MethodNone) {
		return reg.method
	}
	if len(listed) == 0 {
		if reg.secret != "" {
			return MethodClientSecretBasic
		}
		return MethodNone
	}
	if reg.secret != "" {
		for _, meth := range []string{MethodClientSecretBasic, MethodClientSecretPost} {
			if contains(listed, meth) {
				return meth
			}
		}
	}
	if contains(listed, MethodNone) {
		return MethodNone
	}
	// Nothing listed fits what the client holds: try the closest, and
	// let the server's answer say what is wrong.
	if reg.secret != "" {
		return MethodClientSecretBasic
	}
	return MethodNone
}

// clientAuth is how one token request authenticates the client, in the
// terms x/oauth2 takes: the id and secret it places by style (Basic header
// or form), and extra form parameters for what it cannot do itself
// (private_key_jwt's client assertion).
type clientAuth struct {
	id, secret string
	style      oauth2.AuthStyle
	params     url.Values
}

// secretAuth is a secret-based (or no) authentication method. x/oauth2
// never probes: the style is always explicit, so a refused request is not
// resent in another form. Basic credentials are form-urlencoded before
// base64 by x/oauth2 (RFC 6749 §2.3.1).
func secretAuth(method, id, secret string) clientAuth {
	switch method {
	case MethodClientSecretBasic:
		return clientAuth{id: id, secret: secret, style: oauth2.AuthStyleInHeader}
	case MethodClientSecretPost:
		return clientAuth{id: id, secret: secret, style: oauth2.AuthStyleInParams}
	}
	// none: client_id in the form when there is one, no secret.
	return clientAuth{id: id, style: oauth2.AuthStyleInParams}
}

// clientAuthFor builds the client authentication of one token request. It
// is rebuilt for every request: a client assertion's jti must not repeat.
func (m *Manager) clientAuthFor(method string, as *asMeta, reg *registration) (clientAuth, error) {
	if method != MethodPrivateKeyJWT {
		return secretAuth(method, reg.clientID, reg.secret), nil
	}
	aud := as.Issuer
	if aud == "" {
		aud = as.TokenEndpoint
	}
	a, err := m.signer.assertion(reg.clientID, aud, m.now())
	if err != nil {
		return clientAuth{}, err
	}
	return clientAuth{id: reg.clientID, style: oauth2.AuthStyleInParams, params: url.Values{
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {a},
	}}, nil
}
