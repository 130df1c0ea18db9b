package auth

import "strings"

// selectScopes is the scope of a first (or renewed) authorization, in the
// 2025-11-25 order: the challenge's scope (authoritative for its request),
// else the configured scopes, else the PRM's scopes_supported, else none
// (scope omitted).
func selectScopes(ch *bearerChallenge, cfg []string, d *discovery) []string {
	switch {
	case ch != nil && len(ch.scope) > 0:
		return dedupe(ch.scope)
	case len(cfg) > 0:
		return dedupe(cfg)
	case d != nil && d.prm != nil && len(d.prm.ScopesSupported) > 0:
		return dedupe(d.prm.ScopesSupported)
	}
	return nil
}

// unionScopes is the step-up scope (SEP-2350): what was requested before
// plus what the challenge asks for, order kept.
func unionScopes(prev, add []string) []string {
	return dedupe(append(append([]string(nil), prev...), add...))
}

// withOfflineAccess adds offline_access when the authorization server lists
// it (SEP-2207: MAY, to get a refresh token); never otherwise
// (conformance auth/offline-access-not-supported).
func withOfflineAccess(scopes []string, as *asMeta) []string {
	if as == nil || !contains(as.ScopesSupported, "offline_access") || contains(scopes, "offline_access") {
		return scopes
	}
	return append(append([]string(nil), scopes...), "offline_access")
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func joinScopes(s []string) string { return strings.Join(s, " ") }

// scopeKey identifies a scope set regardless of order.
func scopeKey(s []string) string {
	c := dedupe(s)
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j] < c[j-1]; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	return strings.Join(c, " ")
}
