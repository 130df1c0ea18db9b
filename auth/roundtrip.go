package auth

import (
	"context"
	"io"
	"net/http"
)

// transport is the wrapped RoundTripper.
type transport struct {
	m    *Manager
	base http.RoundTripper
}

// maxDrain bounds how much of a 401/403 body is read so its connection can
// be reused.
const maxDrain = 64 << 10

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A configured Authorization header means the host manages its own
	// token: the library stays out of the way entirely.
	if req.Header.Get("Authorization") != "" {
		return t.base.RoundTrip(req)
	}
	m := t.m
	ctx := req.Context()
	m.ensureLoaded(ctx)
	m.maybeRefresh(ctx, t.base, req)

	stepUps := 0
	retried401, nonceRetried := false, false
	adoptRetries := 0
	first := true
	for {
		tok, key, gen := m.current()
		bound := key != nil
		out, err := outgoing(req, tok, first)
		if err != nil {
			return nil, err
		}
		if bound {
			if err := m.addProof(out, tok, key); err != nil {
				return nil, err
			}
		}
		first = false
		resp, err := t.base.RoundTrip(out)
		if err != nil {
			return nil, err
		}
		if bound {
			key.learnNonce(out.URL, resp.Header)
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			ch := parseBearer(resp.Header.Values("WWW-Authenticate"))
			drain(resp)
			if bound && ch.dpopErr == "use_dpop_nonce" && !nonceRetried && resp.Header.Get("DPoP-Nonce") != "" {
				// RFC 9449 §9: the resource server wants its nonce in
				// the proof; once per request, the token is fine.
				nonceRetried = true
				break
			}
			if retried401 {
				// A token adopted from the shared store may have expired
				// already; then this process refreshes in turn.
				if !m.shared() || !m.isAdopted(gen) || adoptRetries >= maxAdoptRetries {
					return nil, m.challengeError(ch, "the server rejected the newly obtained token")
				}
				adoptRetries++
			}
			retried401 = true
			if err := m.obtain(ctx, gen, grantReq{mode: modeUnauthorized, ch: ch, trigger: req, base: t.base}); err != nil {
				return nil, err
			}
		case http.StatusForbidden:
			ch := parseBearer(resp.Header.Values("WWW-Authenticate"))
			if ch.err != "insufficient_scope" {
				return resp, nil
			}
			drain(resp)
			key := scopeKey(unionScopes(m.requestedScopes(), ch.scope))
			if stepUps >= m.maxStepUps || m.isExhausted(key) {
				// Remembered across requests, so later requests do not
				// re-run authorizations that cannot satisfy the server.
				m.markExhausted(key)
				return nil, m.challengeError(ch, "the server still requires more scope after re-authorization (insufficient_scope)")
			}
			stepUps++
			if err := m.obtain(ctx, gen, grantReq{mode: modeStepUp, ch: ch, trigger: req, base: t.base}); err != nil {
				return nil, err
			}
		default:
			return resp, nil
		}
		if !replayable(req) {
			return nil, m.challengeError(nil, "authorization was obtained but the request cannot be sent again (its body has no GetBody); send it again")
		}
	}
}

// outgoing is the request to send: a clone (a RoundTripper must not change
// its request) with the bearer, and on a retry a fresh body.
func outgoing(req *http.Request, tok string, first bool) (*http.Request, error) {
	if first && tok == "" {
		// Nothing to add (no token held yet, the common case of a server
		// without authorization): the request goes out as it is, without
		// a clone of its headers on every call.
		return req, nil
	}
	out := req.Clone(req.Context())
	if !first && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, &Error{Message: "authorization required: the request body cannot be replayed: " + err.Error(), Metadata: map[string]any{}}
		}
		out.Body = body
	}
	if tok != "" {
		out.Header.Set("Authorization", "Bearer "+tok)
	}
	return out, nil
}

// addProof presents a DPoP-bound token: the DPoP scheme and a fresh proof
// by the key it is bound to, for this method and URL, with ath and the
// server's nonce.
func (m *Manager) addProof(out *http.Request, tok string, key *dpopKey) error {
	p, err := key.proof(out.Method, out.URL, tok, m.now())
	if err != nil {
		return &Error{Message: "authorization required: signing the DPoP proof failed: " + err.Error(), Metadata: map[string]any{"resource": m.canonical}}
	}
	out.Header.Set("Authorization", "DPoP "+tok)
	out.Header.Set("DPoP", p)
	return nil
}

func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	resp.Body.Close()
}

// maybeRefresh refreshes before sending when the token's known expiry has
// passed (with skew) and a refresh token is held. Failure is not fatal: the
// request goes out and a 401 takes the full path.
func (m *Manager) maybeRefresh(ctx context.Context, base http.RoundTripper, req *http.Request) {
	m.mu.Lock()
	due := m.tok.access != "" && m.tok.refresh != "" && !m.tok.expiresAt.IsZero() &&
		!m.now().Add(expirySkew).Before(m.tok.expiresAt)
	gen := m.gen
	m.mu.Unlock()
	if !due {
		return
	}
	if err := m.obtain(ctx, gen, grantReq{mode: modeRefresh, trigger: req, base: base}); err != nil {
		m.logf("info", "proactive token refresh failed: %s", err.Error())
	}
}

// challengeError is an *Error with the last discovery's metadata and, when
// given, the challenge that caused it.
func (m *Manager) challengeError(ch *bearerChallenge, msg string) *Error {
	m.mu.Lock()
	var d discovery
	if m.lastDisc != nil {
		d = *m.lastDisc
	} else {
		d = discovery{canonical: m.canonical, resource: m.canonical}
	}
	m.mu.Unlock()
	if ch != nil {
		d.challenge = ch
	}
	return m.authError(&d, msg)
}

func (m *Manager) requestedScopes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tok.requested
}

func (m *Manager) isExhausted(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.exhausted[key]
}

func (m *Manager) markExhausted(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.exhausted[key] = true
}
