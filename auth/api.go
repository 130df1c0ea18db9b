package auth

import (
	"context"
	"time"

	"github.com/lemonmcp/lemonmcp/store"
)

// Flow selects how a token is obtained once refreshing is not possible.
type Flow string

const (
	// FlowAuto picks, in this order, the first flow the configuration can
	// run and the authorization server's grant_types_supported (when
	// published) lists: the jwt-bearer grant when an assertion or a token
	// exchange is configured, the authorization code grant when the host
	// can authorize (Host.CanAuthorize), client credentials when a client
	// secret or a private key is configured. With none, the request fails
	// with an AuthRequired error carrying the discovered metadata.
	FlowAuto Flow = "auto"
	// FlowClientCredentials always uses the client credentials grant.
	FlowClientCredentials Flow = "client_credentials"
	// FlowAuthorizationCode always uses the authorization code grant with
	// PKCE (S256) through Host.Authorize.
	FlowAuthorizationCode Flow = "authorization_code"
	// FlowJWTBearer always uses the RFC 7523 jwt-bearer grant: workload
	// identity federation (SEP-1933) with Config.Assertion, or
	// enterprise-managed authorization (SEP-990) with the ID-JAG that
	// Config.TokenExchange obtains from the enterprise IdP. No browser.
	FlowJWTBearer Flow = "jwt_bearer"
)

// Grant type identifiers (token requests and grant_types_supported).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantRefreshToken      = "refresh_token"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// Token type identifiers of RFC 8693 token exchange.
const (
	TokenTypeIDToken     = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeSAML2       = "urn:ietf:params:oauth:token-type:saml2"
	TokenTypeJWT         = "urn:ietf:params:oauth:token-type:jwt"
	// TokenTypeIDJAG is the Identity Assertion JWT Authorization Grant of
	// SEP-990 (draft-ietf-oauth-identity-assertion-authz-grant).
	TokenTypeIDJAG = "urn:ietf:params:oauth:token-type:id-jag"
)

// TokenExchange configures SEP-990 enterprise-managed authorization: an
// RFC 8693 token exchange at the enterprise IdP turns SubjectToken (the
// user's ID token, usually) into an ID-JAG, which the jwt-bearer grant then
// presents at the MCP server's authorization server. It runs on every
// grant (ID-JAGs are short-lived); refresh tokens are used first.
type TokenExchange struct {
	// TokenEndpoint is the IdP's token endpoint (required).
	TokenEndpoint string
	// SubjectToken is the token exchanged (required; a secret).
	SubjectToken string
	// SubjectTokenType is TokenTypeIDToken when empty.
	SubjectTokenType string
	// RequestedTokenType is TokenTypeIDJAG when empty.
	RequestedTokenType string
	// Audience is the discovered authorization server's issuer when empty.
	Audience string
	// Resource is the MCP server's resource identifier when empty.
	Resource string
	// Scopes are the grant's scopes when empty.
	Scopes []string
	// ClientID and ClientSecret are the client's credentials at the IdP
	// (client_secret_basic with a secret, client_id in the form without).
	ClientID     string
	ClientSecret string
	// TokenAuthMethod forces client_secret_basic, client_secret_post or
	// none at the IdP.
	TokenAuthMethod string
}

// DPoPConfig turns on DPoP (RFC 9449, SEP-1932): sender-constrained
// tokens. Every token request carries a proof; a token issued with
// token_type DPoP is sent as "Authorization: DPoP" with a fresh proof on
// every request, and the servers' use_dpop_nonce challenges are answered
// (one retry each). An authorization server that ignores DPoP issues a
// Bearer token, which is used as such.
type DPoPConfig struct {
	// Alg is the proof algorithm (ES256 when empty, or the key's).
	Alg string
	// KeyPEM, when set, is the proof key (PKCS#8, PKCS#1 or SEC 1), so
	// stored DPoP-bound tokens stay usable across restarts. Empty means an
	// ephemeral key generated per client; stored DPoP tokens are then not
	// reused.
	KeyPEM string
}

// Client authentication methods at the token endpoint (RFC 8414
// token_endpoint_auth_methods_supported values).
const (
	MethodClientSecretBasic = "client_secret_basic"
	MethodClientSecretPost  = "client_secret_post"
	MethodNone              = "none"
	MethodPrivateKeyJWT     = "private_key_jwt"
)

// PrivateKeyJWT configures private_key_jwt client authentication (RFC 7523
// §2.2) and the JWT client assertion of the client credentials grant.
type PrivateKeyJWT struct {
	// KeyPEM is a PKCS#8, PKCS#1 (RSA) or SEC 1 (EC) private key in PEM.
	KeyPEM string
	// KeyID, when set, is the JWT header "kid".
	KeyID string
	// Alg is the signing algorithm: ES256, ES384, ES512, RS256, RS384,
	// RS512, PS256, PS384, PS512 or EdDSA. Empty picks from the key type
	// (ES256 / ES384 / ES512 by curve, RS256, EdDSA).
	Alg string
}

// Config is the host's OAuth configuration (the "auth" object of the client
// configuration). Every field is optional: with none set, a 401 still runs
// discovery and the request fails with AuthRequired metadata.
type Config struct {
	// ClientID and ClientSecret are pre-registered client credentials; they
	// are used before Client ID Metadata Documents and dynamic registration.
	ClientID     string
	ClientSecret string
	// ClientIssuer, when set, is the issuer of the authorization server
	// ClientID was registered with: credentials are bound to their server
	// (SEP-2352), so when discovery finds another one the request fails
	// with an AuthRequired error instead of presenting them there.
	ClientIssuer string
	// TokenAuthMethod forces the token endpoint authentication method;
	// empty selects it from the registration and the server's metadata.
	TokenAuthMethod string
	// ClientMetadataURL is the HTTPS URL of the client's Client ID Metadata
	// Document (SEP-991), used as client_id when the authorization server
	// advertises client_id_metadata_document_supported.
	ClientMetadataURL string
	// ClientName is the client_name of dynamic registration.
	ClientName string
	// Scopes, when set, are requested when the server's challenge names
	// none (the challenge's scope is authoritative for its request).
	Scopes []string
	// RedirectURI is the registered redirect URI of the authorization code
	// flow (a loopback http URL or https).
	RedirectURI string
	// Flow is FlowAuto when empty.
	Flow Flow
	// RefreshToken is a refresh token the host already holds.
	RefreshToken string
	// PrivateKey, when set, authenticates the client with private_key_jwt.
	PrivateKey *PrivateKeyJWT
	// Assertion is the JWT the jwt-bearer grant presents (RFC 7523 §2.1):
	// a workload identity token whose audience is the authorization server
	// (a secret).
	Assertion string
	// TokenExchange, when set, obtains the jwt-bearer assertion from an
	// enterprise IdP (SEP-990) instead of Assertion.
	TokenExchange *TokenExchange
	// DPoP, when set, sender-constrains tokens with DPoP.
	DPoP *DPoPConfig
	// TokenStore, when set, is a store shared with other processes (see
	// package store, the collection of package tokenstore): the grant is loaded from it before the first
	// request, reloaded before every refresh and after every 401, and a
	// refresh token is redeemed only under a lease claimed there, so it is
	// never redeemed twice.
	TokenStore store.Store
	// TokenStoreSpec, when set (and TokenStore is not), names the store
	// (auth.token_store {"type": "memory" | "file" | "postgres" | "redis" |
	// "app", ...}); New opens it and Close closes it.
	TokenStoreSpec *store.Spec
	// TokenStoreKey names the grant in TokenStore; empty means the MCP
	// server's canonical resource and ClientID.
	TokenStoreKey string
	// TokenStoreLease is how long a refresh's lease lasts; the refresh's
	// token request is cut off before it ends. Zero means 10 seconds.
	TokenStoreLease time.Duration
	// AuthorizationTimeout bounds one Host.Authorize. Zero means 5 minutes.
	AuthorizationTimeout time.Duration
	// MaxStepUps bounds the insufficient_scope re-authorizations of one
	// request. Zero means 2.
	MaxStepUps int
	// AllowInsecureHTTP permits http:// authorization servers and metadata
	// on hosts other than loopback (development only).
	AllowInsecureHTTP bool
	// UserAgent is sent on metadata, registration and token requests.
	UserAgent string
}

// AuthorizationRequest is what the host gets to run the user-facing part of
// the authorization code flow: open AuthorizationURL (validated: https, or
// http on loopback) and report where the authorization server redirected.
type AuthorizationRequest struct {
	AuthorizationURL      string `json:"authorization_url"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	Issuer                string `json:"issuer"`
	ClientID              string `json:"client_id"`
	RedirectURI           string `json:"redirect_uri"`
	Scope                 string `json:"scope,omitempty"`
	Resource              string `json:"resource"`
	State                 string `json:"state"`
	CodeChallenge         string `json:"code_challenge"`
	CodeChallengeMethod   string `json:"code_challenge_method"`
	CodeVerifier          string `json:"code_verifier"`
}

// AuthorizationReply is the host's answer: either RedirectURL (the full
// URL the browser was sent to: its query is parsed) or the parameters
// themselves. State is always checked; Iss is checked as RFC 9207 says.
type AuthorizationReply struct {
	RedirectURL      string `json:"redirect_url,omitempty"`
	Code             string `json:"code,omitempty"`
	State            string `json:"state,omitempty"`
	Iss              string `json:"iss,omitempty"`
	Error            string `json:"error,omitempty"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// Host is the host boundary: the library owns no UI, listener or secret
// store. The core implements it over app requests. Every method may block
// (bounded by ctx) and is called from a library goroutine.
type Host interface {
	// CanAuthorize reports whether Authorize can be used.
	CanAuthorize() bool
	// Authorize runs the user-facing step of the authorization code flow.
	Authorize(ctx context.Context, req *AuthorizationRequest) (*AuthorizationReply, error)
	// AskStore puts the application's store request kind (store_load,
	// store_save: auth.token_store {"type": "app"}) to the host and
	// answers its reply.
	AskStore(ctx context.Context, kind string, payload []byte) ([]byte, error)
	// Log reports a diagnostic (never containing a token, code, verifier or
	// secret). level is "debug", "info", "warning" or "error".
	Log(level, message string)
}

// Error is what the wrapped round tripper returns when authorization could
// not be obtained. Its message is safe to show (no token, secret, code or
// URL query); Metadata is what discovery learned, for the host:
// resource, authorization_servers, resource_metadata_url, www_authenticate,
// scope, error, error_description, authorization_server_metadata: [{issuer,
// metadata_url, authorization_endpoint, token_endpoint,
// registration_endpoint, ...}].
type Error struct {
	Message  string
	Metadata map[string]any
}

func (e *Error) Error() string { return e.Message }
