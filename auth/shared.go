package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/lemonmcp/lemonmcp/auth/tokenstore"
)

// A grant shared with other processes through Config.TokenStore. The
// rules (RFC 9700 §4.14.2: a rotated refresh token is redeemed once):
//
//   - Before refreshing, and after any 401, the store is reloaded; a
//     record of a newer generation with a valid access token is adopted
//     without a network call.
//   - A refresh token is redeemed only by the holder of the record's
//     lease, claimed by compare-and-save; the new tokens are committed and
//     the lease released in one compare-and-save before they are used.
//     A process that finds the lease held waits for the record to change
//     (or the lease to expire), reloads and adopts.
//   - On invalid_grant the store is reloaded: a changed refresh token is
//     adopted; otherwise the record is marked needs_reauth (never
//     deleted) and the request fails with an authorization error unless
//     this process can run the configured flow.
//   - A refresh whose outcome is unknown (network error, timeout) keeps
//     its lease: once it expires, the same refresh token is tried again
//     (unredeemed, it simply works; within the server's reuse grace it
//     answers the same tokens).
//   - The configured flow (the browser step, too) runs under the lease
//     as well, so one process authorizes while the others wait.
//   - A DPoP-bound grant is presented only with the key it is bound to
//     (grantKey): a process without a configured key (auth.dpop without
//     key_pem) adopts the key the record carries with the grant, and
//     writes its key into the records it commits; a process with a
//     configured key uses only grants bound to that key.
//
// The store is never consulted while m.mu is held.

const (
	defaultLease = 10 * time.Second
	// maxLeaseMargin: the token request is cut off this long (at most a
	// quarter of the lease) before the lease ends, so a live holder never
	// redeems under an expired lease.
	maxLeaseMargin = 2 * time.Second
	// maxLeaseWaitPoll bounds the pause between two reloads while another
	// process holds the lease.
	maxLeaseWaitPoll = 100 * time.Millisecond
	// maxAdoptRetries bounds how often one request retries with a token
	// adopted from the store that the server then refused too.
	maxAdoptRetries = 2
)

var errOtherDPoPKey = errors.New("the shared grant is bound to a DPoP key this process does not hold (every process sharing it must be configured with the same auth.dpop.key_pem, or all without one)")

var errDPoPNotConfigured = errors.New("the shared grant is DPoP-bound, but auth.dpop is not configured in this process")

var errNeedsReauth = errors.New("the shared grant needs authorization again (another process's refresh token was refused)")

func (m *Manager) shared() bool { return m.grants != nil }

func (m *Manager) leaseDuration() time.Duration {
	if m.cfg.TokenStoreLease > 0 {
		return m.cfg.TokenStoreLease
	}
	return defaultLease
}

// defaultStoreKey names the grant: the MCP server and the client. The
// issuer is not part of it: it is known only after discovery, while the
// record is loaded before the first request; the record carries its
// issuer instead, and a record of another authorization server is never
// redeemed there (SEP-2352).
func defaultStoreKey(canonical, clientID string) string {
	return canonical + " " + clientID
}

// loadShared runs once before the first request: the stored record wins;
// a configured refresh token only seeds an empty store.
func (m *Manager) loadShared(ctx context.Context) {
	rec, ver, err := m.grants.Load(ctx, m.storeKey)
	if err != nil {
		m.logf("warning", "loading the shared token failed: %s", err)
		return
	}
	if rec == nil && m.cfg.RefreshToken != "" {
		seed := &tokenstore.Record{RefreshToken: m.cfg.RefreshToken, Generation: 1, State: tokenstore.StateOK, Resource: m.canonical}
		_, won, err := m.grants.CompareAndSave(ctx, m.storeKey, ver, seed)
		if err != nil {
			m.logf("warning", "seeding the shared token store failed: %s", err)
			return
		}
		if won == nil {
			m.mu.Lock()
			m.storeGen = seed.Generation
			m.mu.Unlock()
			return
		}
		rec = won
	}
	if rec != nil {
		m.adoptRecord(rec)
	}
}

// adoptRecord installs a stored record, as the process's own tokens.
func (m *Manager) adoptRecord(rec *tokenstore.Record) {
	if rec.State == tokenstore.StateNeedsReauth {
		m.mu.Lock()
		m.storeGen = rec.Generation
		m.mu.Unlock()
		return
	}
	st := rec.Clone()
	key, err := m.grantKey(rec)
	if err != nil {
		st.AccessToken = "" // bound to a key this process does not hold
		m.logf("warning", "the shared grant's tokens are not used: %s", err)
	}
	m.adopt(st, key)
	m.mu.Lock()
	m.storeGen = rec.Generation
	m.adoptedGen = m.gen
	m.mu.Unlock()
}

// usable reports whether rec holds an access token this process can send
// now.
func (m *Manager) usable(rec *tokenstore.Record) bool {
	if rec == nil || rec.AccessToken == "" || rec.State == tokenstore.StateNeedsReauth {
		return false
	}
	if rec.ExpiresAt != 0 && rec.ExpiresAt <= m.now().UnixMilli() {
		return false
	}
	if strings.EqualFold(rec.TokenType, "dpop") && !m.mayHoldKeyOf(rec) {
		return false
	}
	return true
}

// mayHoldKeyOf reports whether this process holds, or may adopt, the key
// rec's DPoP-bound grant is bound to (grantKey decides).
func (m *Manager) mayHoldKeyOf(rec *tokenstore.Record) bool {
	cur := m.proofKey()
	return rec.DPoPJKT != "" && cur != nil && (cur.jkt == rec.DPoPJKT || (cur.ephemeral && rec.DPoPKey != ""))
}

// grantKey is the DPoP key rec's grant is bound to, as this process holds
// it: nil for a grant bound to none; this process's key when the
// thumbprints match; otherwise, when this process has no configured key,
// the key the record carries, which becomes this process's key from then
// on (its token requests sign with it and its commits store it). A
// configured key is never replaced: the configuration says which key the
// process signs with, so a grant bound to another one (or one whose record
// carries no key) is errOtherDPoPKey, and the process neither sends its
// tokens nor redeems its refresh token (the server would refuse it and the
// grant would be marked needs_reauth for every process).
func (m *Manager) grantKey(rec *tokenstore.Record) (*dpopKey, error) {
	if rec == nil || rec.DPoPJKT == "" {
		return nil, nil
	}
	m.dpopAdoptMu.Lock()
	defer m.dpopAdoptMu.Unlock()
	cur := m.proofKey()
	switch {
	case cur == nil:
		return nil, errDPoPNotConfigured
	case cur.jkt == rec.DPoPJKT:
		return cur, nil
	case !cur.ephemeral || rec.DPoPKey == "":
		return nil, errOtherDPoPKey
	}
	k, err := storedDPoP(rec.DPoPKey, m.cfg.DPoP.Alg, rec.DPoPJKT)
	if err != nil {
		return nil, err
	}
	k.inheritNonces(cur)
	m.dpop.Store(k)
	m.logf("info", "signing DPoP proofs with the shared grant's key (thumbprint %s)", k.jkt)
	return k, nil
}

// adoptNewer reloads the store and adopts a usable record of a newer
// generation than the one this process holds: another process already
// did the work.
func (m *Manager) adoptNewer(ctx context.Context) (bool, error) {
	rec, _, err := m.grants.Load(ctx, m.storeKey)
	if err != nil {
		return false, err
	}
	return m.adoptIfNewer(rec), nil
}

func (m *Manager) adoptIfNewer(rec *tokenstore.Record) bool {
	m.mu.Lock()
	newer := rec != nil && rec.Generation > m.storeGen
	m.mu.Unlock()
	if !newer || !m.usable(rec) {
		return false
	}
	m.adoptRecord(rec)
	return true
}

// claim makes this process the lease holder of the stored grant. It
// returns the record as claimed and its version, or adopted when another
// process's newer record was adopted instead. A held lease is waited out.
// check, when non-nil, may end the attempt for a record it cannot use.
func (m *Manager) claim(ctx context.Context, lease time.Duration, check func(*tokenstore.Record) error) (*tokenstore.Record, tokenstore.Version, bool, error) {
	for {
		rec, ver, err := m.grants.Load(ctx, m.storeKey)
		if err != nil {
			return nil, 0, false, m.storeError(err)
		}
		if m.adoptIfNewer(rec) {
			return nil, 0, true, nil
		}
		now := m.now()
		if rec != nil && rec.Lease != nil && rec.Lease.Until > now.UnixMilli() {
			// Another process is redeeming or authorizing (or this one
			// lost a response: its lease is waited out as well).
			if err := m.waitLease(ctx, ver, rec.Lease.Until); err != nil {
				return nil, 0, false, err
			}
			continue
		}
		if check != nil {
			if err := check(rec); err != nil {
				return nil, 0, false, err
			}
		}
		// An expired lease: its holder died or lost the answer, and what
		// this process redeems may be the server's grace answer to that
		// earlier redemption, with an access token that already expired.
		m.mu.Lock()
		m.afterStaleLease = rec != nil && rec.Lease != nil
		m.mu.Unlock()
		claimed := &tokenstore.Record{Generation: 0, State: tokenstore.StateOK, Resource: m.canonical}
		if rec != nil {
			claimed = rec.Clone()
		}
		claimed.Lease = &tokenstore.Lease{Owner: m.owner, Until: now.Add(lease).UnixMilli()}
		v, won, err := m.grants.CompareAndSave(ctx, m.storeKey, ver, claimed)
		if err != nil {
			return nil, 0, false, m.storeError(err)
		}
		if won == nil {
			return claimed, v, false, nil
		}
	}
}

// waitLease polls the store until its version moves on from ver, the
// lease ends, or ctx ends.
func (m *Manager) waitLease(ctx context.Context, ver tokenstore.Version, until int64) error {
	pause := 5 * time.Millisecond
	for {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if m.now().UnixMilli() >= until {
			return nil
		}
		_, v, err := m.grants.Load(ctx, m.storeKey)
		if err != nil {
			return m.storeError(err)
		}
		if v != ver {
			return nil
		}
		pause = min(pause*2, maxLeaseWaitPoll)
	}
}

// sharedRefresh redeems the stored refresh token under the lease.
func (m *Manager) sharedRefresh(ctx context.Context, f *fetcher, d *discovery) error {
	for {
		claimed, ver, adopted, err := m.claim(ctx, m.leaseDuration(), func(rec *tokenstore.Record) error {
			switch {
			case rec == nil || rec.RefreshToken == "":
				return errNoRefresh
			case rec.State == tokenstore.StateNeedsReauth:
				return errNeedsReauth
			case rec.Issuer != "" && rec.Issuer != d.as.Issuer:
				// Another authorization server's grant (SEP-2352).
				return errNoRefresh
			}
			// Its refresh token works only with the key it is bound
			// to: presented with another, the server would refuse it
			// and the grant would be marked for every process.
			_, err := m.grantKey(rec)
			return err
		})
		if err != nil || adopted {
			return err
		}
		key := m.proofKey()
		if claimed.DPoPJKT != "" {
			if key, err = m.grantKey(claimed); err != nil {
				m.release(ctx, claimed, ver)
				return err
			}
		}
		reg := m.knownClientOf(d, claimed)
		if reg == nil {
			m.release(ctx, claimed, ver)
			return errors.New("no client identity is known for the refresh")
		}
		rt := claimed.RefreshToken
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "resource": {d.resource}}
		lease := m.leaseDuration()
		rctx, cancel := context.WithTimeout(ctx, lease-min(maxLeaseMargin, lease/4))
		tr, err := m.tokenRequestWith(rctx, key, f, d.as, reg, grantCall(d.as.TokenEndpoint, form), []string{rt})
		cancel()
		if err == nil {
			return m.commit(ctx, claimed, ver, tr, d, nil, false)
		}
		var oe *oauthError
		if !errors.As(err, &oe) {
			// The outcome is unknown: the lease stays, and the same
			// refresh token is tried again once it has expired.
			return err
		}
		if oe.code != "invalid_grant" {
			m.release(ctx, claimed, ver)
			return err
		}
		// invalid_grant: if another process rotated the token meanwhile
		// (a lease that expired under a slow holder), use the new one.
		cur, cver, lerr := m.grants.Load(ctx, m.storeKey)
		if lerr != nil {
			return m.storeError(lerr)
		}
		if cur != nil && cur.RefreshToken != rt {
			continue
		}
		if cur != nil {
			marked := cur.Clone()
			marked.State = tokenstore.StateNeedsReauth
			marked.Lease = nil
			if _, won, err := m.grants.CompareAndSave(ctx, m.storeKey, cver, marked); err != nil {
				return m.storeError(err)
			} else if won != nil {
				continue
			}
			m.mu.Lock()
			m.storeGen = cur.Generation
			m.tok.refresh = ""
			m.mu.Unlock()
		}
		return err
	}
}

// release ends this process's lease without changing the grant (a
// refusal whose outcome is known: nothing was redeemed).
func (m *Manager) release(ctx context.Context, claimed *tokenstore.Record, ver tokenstore.Version) {
	rec := claimed.Clone()
	rec.Lease = nil
	if _, _, err := m.grants.CompareAndSave(ctx, m.storeKey, ver, rec); err != nil {
		m.logf("warning", "releasing the shared token's lease failed: %s", err)
	}
}

// commit stores the tokens of a grant this process obtained under its
// lease, releasing it, then installs them. If the lease was taken over
// meanwhile (it expired under this process) and the other process
// already committed a newer grant, that one is adopted instead.
func (m *Manager) commit(ctx context.Context, claimed *tokenstore.Record, ver tokenstore.Version, tr *tokenResult, d *discovery, requested []string, setRequested bool) error {
	next := &tokenstore.Record{
		AccessToken: tr.access, TokenType: tokenTypeName(tr.key != nil), RefreshToken: tr.refresh,
		Generation: claimed.Generation + 1, State: tokenstore.StateOK, Scope: tr.scope,
		Issuer: d.as.Issuer, Resource: m.canonical, ClientID: claimed.ClientID, ClientSecret: claimed.ClientSecret,
	}
	if next.RefreshToken == "" && !setRequested {
		next.RefreshToken = claimed.RefreshToken // not rotated
	}
	if !tr.expiresAt.IsZero() {
		next.ExpiresAt = tr.expiresAt.UnixMilli()
	}
	if tr.key != nil {
		next.DPoPJKT = tr.key.jkt
		if tr.key.ephemeral {
			// No process is configured with it: the others adopt it
			// from here (grantKey).
			next.DPoPKey = tr.key.pkcs8
		}
	}
	if next.Scope == "" && setRequested {
		next.Scope = joinScopes(requested)
	} else if next.Scope == "" {
		next.Scope = claimed.Scope
	}
	m.mu.Lock()
	if r := m.regs[d.as.Issuer]; r != nil && r.fromDCR {
		next.ClientID, next.ClientSecret = r.clientID, r.secret
	}
	m.mu.Unlock()
	for {
		v, won, err := m.grants.CompareAndSave(ctx, m.storeKey, ver, next)
		if err != nil {
			// Not stored: the tokens are not used either (another
			// process could not find them, and would redeem the old
			// refresh token once the lease expires).
			return m.storeError(err)
		}
		if won == nil {
			break
		}
		if won.RefreshToken != claimed.RefreshToken || won.Generation > claimed.Generation {
			m.adoptIfNewer(won)
			return nil
		}
		ver = v
		next.Generation = won.Generation + 1
	}
	m.install(tr, d.as.Issuer, requested, setRequested)
	m.mu.Lock()
	m.storeGen = next.Generation
	if m.afterStaleLease {
		// Treated like an adopted token: when the server refuses it, the
		// request refreshes once more instead of failing.
		m.adoptedGen = m.gen
	}
	m.mu.Unlock()
	return nil
}

// knownClientOf is knownClient, also trusting the client a stored record
// was registered as.
func (m *Manager) knownClientOf(d *discovery, rec *tokenstore.Record) *registration {
	if reg := m.knownClient(d); reg != nil {
		return reg
	}
	if rec != nil && rec.ClientID != "" && rec.Issuer == d.as.Issuer {
		return &registration{clientID: rec.ClientID, secret: rec.ClientSecret, fromDCR: true}
	}
	return nil
}

// storeError is a store failure as the request's error. The store never
// puts a token in its messages.
func (m *Manager) storeError(err error) error {
	if isCtxErr(err) {
		return err
	}
	return fmt.Errorf("the shared token store failed: %w", err)
}

// isAdopted reports whether the token of generation gen came from the
// store rather than from this process's own grant.
func (m *Manager) isAdopted(gen uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.adoptedGen == gen && gen != 0
}

// sharedFlowMayFollow: after these refresh failures the configured flow
// runs (under the lease); any other (the store failed, the outcome is
// unknown, the server is down) ends the attempt, so no process starts a
// browser step because of a network error.
func sharedFlowMayFollow(err error) bool {
	var oe *oauthError
	return errors.Is(err, errNoRefresh) || errors.Is(err, errNeedsReauth) ||
		(errors.As(err, &oe) && oe.code == "invalid_grant")
}

// sharedFlow runs the configured flow under the lease: one process
// authorizes (the browser step included) while the others wait for its
// record and adopt it.
func (m *Manager) sharedFlow(ctx context.Context, f *fetcher, d *discovery, flow Flow, reg *registration, scopes []string) error {
	lease := m.leaseDuration()
	if flow == FlowAuthorizationCode {
		lease += m.authTimeout
	}
	claimed, ver, adopted, err := m.claim(ctx, lease, nil)
	if err != nil {
		return m.authError(d, err.Error())
	}
	if adopted {
		return nil
	}
	tr, err := m.runFlow(ctx, f, d, flow, reg, scopes)
	if err != nil {
		m.release(context.WithoutCancel(ctx), claimed, ver)
		return err
	}
	return m.commit(ctx, claimed, ver, tr, d, scopes, true)
}
