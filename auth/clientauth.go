package auth

import (
	"encoding/base64"
	"net/http"
	"net/url"
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

// applyClientAuth adds client authentication to a token request.
func (m *Manager) applyClientAuth(method string, as *asMeta, reg *registration, form url.Values, hdr http.Header) error {
	switch method {
	case MethodClientSecretBasic:
		// RFC 6749 §2.3.1: each part form-urlencoded before base64.
		cred := url.QueryEscape(reg.clientID) + ":" + url.QueryEscape(reg.secret)
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	case MethodClientSecretPost:
		form.Set("client_id", reg.clientID)
		form.Set("client_secret", reg.secret)
	case MethodPrivateKeyJWT:
		aud := as.Issuer
		if aud == "" {
			aud = as.TokenEndpoint
		}
		a, err := m.signer.assertion(reg.clientID, aud, m.now())
		if err != nil {
			return err
		}
		form.Set("client_id", reg.clientID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", a)
	default:
		if reg.clientID != "" {
			form.Set("client_id", reg.clientID)
		}
	}
	return nil
}
