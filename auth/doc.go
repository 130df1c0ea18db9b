// Package auth is OAuth 2.1 for MCP's HTTP transports: it turns 401 and
// 403 insufficient_scope answers into tokens and retries.
//
// A Manager owns the OAuth state of one MCP server URL. Its wrapped
// RoundTripper (Manager.Wrap) puts "Authorization: Bearer" on every request
// once a token is held, refreshes proactively when the known expiry has
// passed, and on a 401 runs, single-flight for all requests in flight:
//
//  1. discovery: Protected Resource Metadata (RFC 9728: the challenge's
//     resource_metadata, then the path-aware and root well-known URLs), the
//     authorization server's metadata (RFC 8414 and OpenID Discovery in the
//     2025-11-25 order, issuer checked exactly), or, when the server
//     publishes no PRM at all, the 2025-03-26 fallback at the MCP origin;
//  2. the refresh_token grant, when a refresh token is held;
//  3. the configured flow, checked first against the authorization
//     server's grant_types_supported: authorization code with PKCE (S256)
//     through Host.Authorize, client credentials (client secret or
//     private_key_jwt), or the RFC 7523 jwt-bearer grant with a
//     host-supplied assertion (SEP-1933) or the ID-JAG an RFC 8693 token
//     exchange at the enterprise IdP returns (SEP-990), with a client
//     identity that is pre-registered, a Client ID Metadata Document URL,
//     or dynamically registered (RFC 7591) and bound to the issuing
//     authorization server.
//
// With Config.DPoP (RFC 9449, SEP-1932) token requests carry a DPoP proof,
// and a DPoP-bound token goes out as "Authorization: DPoP" with a fresh
// proof per request; use_dpop_nonce answers are retried once. Without it
// the per-request path is unchanged.
//
// Everything the library learns that a host may need (discovered URLs,
// issuers, the challenge) travels as Error.Metadata;
// tokens, secrets, codes and verifiers never appear in messages, logs or
// metadata. Metadata, registration and token requests use their own
// *http.Client with metadata-only headers, never the configured MCP headers
// and never a bearer token.
//
// golang.org/x/oauth2 does what it provides: the PKCE verifier and S256
// challenge, the authorization URL, the code exchange, the client
// credentials request, token response and token error parsing, and the
// client_secret_basic / client_secret_post / none authentication styles.
// Every token request goes through it, on the package's own http.Client
// (oauth2.HTTPClient). What it cannot do is written here by hand and
// marked "by hand" below.
//
// Files:
//   - api.go: the public types (Config, Flow, Host, Error).
//   - manager.go: state, New/Bind/Close.
//   - identity.go: TokenDigest, a cache key that does not reveal the token.
//   - roundtrip.go: the wrapper (bearer and DPoP Authorization, 401/403).
//   - flight.go: single-flight grants.
//   - grant.go: what one grant does; the refresh_token grant is sent
//     through x/oauth2's clientcredentials request with grant_type
//     overridden, by hand only because x/oauth2's refresh cannot send
//     resource (RFC 8707).
//   - challenge.go: WWW-Authenticate parsing (by hand: x/oauth2 has none).
//   - resource.go: canonical URIs and URL policy (by hand).
//   - fetch.go: bounded metadata HTTP, metadata-only headers, and the one
//     door to x/oauth2 (fetcher.token), which maps its errors to messages
//     without URLs or secrets.
//   - discovery.go: PRM (RFC 9728) and AS metadata (RFC 8414, OpenID) by
//     hand: x/oauth2 has no discovery.
//   - metadata.go: what hosts see.
//   - client.go: client identity; dynamic registration (RFC 7591) and
//     Client ID Metadata Documents by hand: x/oauth2 has neither.
//   - clientauth.go: which token endpoint authentication method to use
//     (ours), mapped onto x/oauth2's AuthStyle; private_key_jwt's
//     assertion is added by hand.
//   - jwt.go: private_key_jwt assertions (RFC 7523 §2.2), by hand.
//   - authcode.go: authorization code + PKCE via x/oauth2 (AuthCodeURL,
//     GenerateVerifier, S256ChallengeOption, Exchange); the reply check
//     (state, RFC 9207 iss) by hand.
//   - token.go: one token request via x/oauth2 with DPoP proofs on it and
//     the use_dpop_nonce retry (by hand: RFC 9449 is not in x/oauth2);
//     the token type and lifetime checks.
//   - jwtbearer.go: the jwt-bearer grant and the RFC 8693 token exchange,
//     sent through x/oauth2's clientcredentials request with grant_type
//     overridden.
//   - dpop.go: DPoP keys (generated, configured, or a shared record's),
//     proofs, nonces (by hand).
//   - random.go: state and jti values.
//   - scope.go: scope selection.
//   - store.go: the stored grant loaded before the first request, and
//     adopted.
//   - shared.go: a grant shared with other processes through the store
//     (package store, the collection tokenstore.Grants): reload and adopt, the redemption lease, commit by
//     compare-and-save, needs_reauth; a refresh token is never redeemed
//     twice (RFC 9700 §4.14.2); a DPoP-bound grant is presented only with
//     its key, which a process without a configured key adopts from the
//     record.
//   - appstore.go: the application's store ({"type": "app"}) over the
//     bound Host (store_load / store_save).
package auth
