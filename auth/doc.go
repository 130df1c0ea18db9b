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
// issuers, the challenge) travels as Error.Metadata and StoredToken.Metadata;
// tokens, secrets, codes and verifiers never appear in messages, logs or
// metadata. Metadata, registration and token requests use their own
// *http.Client with metadata-only headers, never the configured MCP headers
// and never a bearer token.
//
// Files: manager.go (state, New/Bind/Close), roundtrip.go (the wrapper),
// flight.go (single-flight grants), grant.go (what one grant does),
// challenge.go (WWW-Authenticate), resource.go (canonical URIs and URL
// policy), fetch.go (bounded metadata HTTP), discovery.go (PRM and AS
// metadata), metadata.go (what hosts see), client.go (client identity),
// clientauth.go (token endpoint authentication), jwt.go (private_key_jwt),
// authcode.go (authorization code + PKCE), token.go (token requests),
// jwtbearer.go (jwt-bearer grant, token exchange), dpop.go (DPoP keys,
// proofs, nonces),
// scope.go (scope selection), store.go (host token store).
package auth
