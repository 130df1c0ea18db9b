package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"sync"
	"testing"
	"time"

	"github.com/lemonmcp/lemonmcp/auth"
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/store"
	"github.com/stretchr/testify/require"
)

const httpTransport = `"transport":{"type":"streamable_http","url":"http://127.0.0.1:9/mcp"}`

func TestParseAuth(t *testing.T) {
	p, err := Parse([]byte(`{`+httpTransport+`,
		"handlers": {"authorization": {}},
		"auth": {"client_id":"id","client_secret":"s3cret","token_auth_method":"client_secret_basic",
		         "scopes":["tools","prompts"],"redirect_uri":"http://127.0.0.1:7777/cb","flow":"authorization_code",
		         "refresh_token":"r","token_store":{"type":"app"},"authorization_timeout_ms":1500,"max_step_ups":3,
		         "client_metadata_url":"https://client.example/meta.json","client_name":"host app",
		         "allow_insecure_http":true,
		         "client_issuer":"https://as.example",
		         "private_key_jwt":{"key_pem":`+jsonString(testKeyPEM(t))+`,"kid":"k1","alg":"ES256"}}
	}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.NotNil(t, p.Options.Auth, "an HTTP client always has an OAuth layer")
	require.True(t, p.Options.Handlers.Authorization)
	require.True(t, p.Options.AuthAppTokenStore)
	require.Equal(t, 1500*time.Millisecond, p.Options.AuthorizationTimeout)
	require.Equal(t, &auth.Config{
		ClientID: "id", ClientSecret: "s3cret", TokenAuthMethod: auth.MethodClientSecretBasic,
		Scopes: []string{"tools", "prompts"}, RedirectURI: "http://127.0.0.1:7777/cb", Flow: auth.FlowAuthorizationCode,
		RefreshToken: "r", TokenStoreSpec: &store.Spec{Type: "app"}, AuthorizationTimeout: 1500 * time.Millisecond, MaxStepUps: 3,
		ClientMetadataURL: "https://client.example/meta.json", ClientName: "host app", AllowInsecureHTTP: true,
		ClientIssuer: "https://as.example",
		PrivateKey:   &auth.PrivateKeyJWT{KeyPEM: testKeyPEM(t), KeyID: "k1", Alg: "ES256"},
	}, p.auth)

	p, err = Parse([]byte(`{`+httpTransport+`}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.NotNil(t, p.Options.Auth, "discovery runs on a 401 even without configuration")
	require.False(t, p.Options.Handlers.Authorization)

	p, err = Parse([]byte(`{`+httpTransport+`,"auth":{"client_id":"id"}}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.Equal(t, "lemonmcp", p.auth.ClientName, "client_name defaults to client_info.name")
	require.Equal(t, auth.FlowAuto, p.auth.Flow)
}

func TestParseAuthSharedTokenStore(t *testing.T) {
	path := t.TempDir() + "/tokens.json"
	p, err := Parse([]byte(`{`+httpTransport+`,"auth":{"client_id":"c","token_store":{"type":"file","path":`+jsonString(path)+`,"key":"grant-1","lease_ms":5000}}}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.Equal(t, &store.Spec{Type: "file", Path: path}, p.auth.TokenStoreSpec)
	require.Equal(t, "grant-1", p.auth.TokenStoreKey)
	require.Equal(t, 5*time.Second, p.auth.TokenStoreLease)
	require.False(t, p.Options.AuthAppTokenStore, "the host is not asked store_load / store_save")

	p, err = Parse([]byte(`{`+httpTransport+`,"auth":{"token_store":{"type":"app","key":"g"}}}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.Equal(t, &store.Spec{Type: "app"}, p.auth.TokenStoreSpec)
	require.Equal(t, "g", p.auth.TokenStoreKey)
	require.True(t, p.Options.AuthAppTokenStore, "the host answers store_load / store_save")

	// A generated DPoP key travels in the shared record with its grant.
	p, err = Parse([]byte(`{`+httpTransport+`,"auth":{"dpop":true,"token_store":{"type":"file","path":`+jsonString(path)+`}}}`), "1.2.3")
	require.Nil(t, errOrNil(err))
	require.Equal(t, "", p.auth.DPoP.KeyPEM)
}

func TestParseAuthExtensions(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want auth.Config
	}{
		{"workload identity", `"flow":"jwt_bearer","client_id":"w","assertion":"h.p.s"`,
			auth.Config{Flow: auth.FlowJWTBearer, ClientID: "w", Assertion: "h.p.s"}},
		{"enterprise-managed", `"client_id":"c","client_secret":"s","token_exchange":{"token_endpoint":"https://idp.example/token",
			"subject_token":"id.tok.en","subject_token_type":"urn:ietf:params:oauth:token-type:saml2",
			"requested_token_type":"urn:ietf:params:oauth:token-type:id-jag","audience":"https://as.example",
			"resource":"https://mcp.example/mcp","scopes":["a"],"client_id":"idp","client_secret":"idps","token_auth_method":"client_secret_post"}`,
			auth.Config{Flow: auth.FlowAuto, ClientID: "c", ClientSecret: "s", TokenExchange: &auth.TokenExchange{
				TokenEndpoint: "https://idp.example/token", SubjectToken: "id.tok.en", SubjectTokenType: auth.TokenTypeSAML2,
				RequestedTokenType: auth.TokenTypeIDJAG, Audience: "https://as.example", Resource: "https://mcp.example/mcp",
				Scopes: []string{"a"}, ClientID: "idp", ClientSecret: "idps", TokenAuthMethod: auth.MethodClientSecretPost}}},
		{"dpop true", `"dpop":true`, auth.Config{Flow: auth.FlowAuto, DPoP: &auth.DPoPConfig{}}},
		{"dpop false", `"dpop":false`, auth.Config{Flow: auth.FlowAuto}},
		{"dpop object", `"dpop":{"alg":"ES384"}`, auth.Config{Flow: auth.FlowAuto, DPoP: &auth.DPoPConfig{Alg: "ES384"}}},
		{"dpop key", `"dpop":{"key_pem":` + jsonString(testKeyPEM(t)) + `}`, auth.Config{Flow: auth.FlowAuto, DPoP: &auth.DPoPConfig{KeyPEM: testKeyPEM(t)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(`{`+httpTransport+`,"auth":{`+tc.in+`}}`), "1.2.3")
			require.Nil(t, errOrNil(err))
			want := tc.want
			want.ClientName = "lemonmcp"
			require.Equal(t, &want, p.auth)
		})
	}
}

func TestParseAuthErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"stdio", `"transport":{"type":"stdio","command":"x"},"auth":{"client_id":"a"}`, "config.auth: applies to the HTTP transports only"},
		{"stdio authorization handler", `"transport":{"type":"stdio","command":"x"},"handlers":{"authorization":{}}`, "config.handlers.authorization: applies to the HTTP transports only"},
		{"unknown field", httpTransport + `,"auth":{"client_idd":"a"}`, "config.auth.client_idd: is not a known field"},
		{"authorization handler field", httpTransport + `,"handlers":{"authorization":{"x":1}}`, "config.handlers.authorization.x: is not a known field"},
		{"empty id", httpTransport + `,"auth":{"client_id":""}`, "config.auth.client_id: must not be empty"},
		{"secret not a string", httpTransport + `,"auth":{"client_id":"a","client_secret":7}`, "config.auth.client_secret: must be a string"},
		{"secret without id", httpTransport + `,"auth":{"client_secret":"hunter2"}`, "config.auth.client_secret: needs auth.client_id"},
		{"bad method", httpTransport + `,"auth":{"token_auth_method":"magic"}`, "config.auth.token_auth_method: must be one of"},
		{"basic without secret", httpTransport + `,"auth":{"client_id":"a","token_auth_method":"client_secret_basic"}`, "needs auth.client_secret"},
		{"jwt without key", httpTransport + `,"auth":{"client_id":"a","token_auth_method":"private_key_jwt"}`, "needs auth.private_key_jwt"},
		{"key without pem", httpTransport + `,"auth":{"private_key_jwt":{}}`, "config.auth.private_key_jwt.key_pem: is required"},
		{"bad alg", httpTransport + `,"auth":{"private_key_jwt":{"key_pem":"k","alg":"none"}}`, "config.auth.private_key_jwt.alg: must be one of"},
		{"bad flow", httpTransport + `,"auth":{"flow":"implicit"}`, "config.auth.flow: must be one of"},
		{"client credentials without secret", httpTransport + `,"auth":{"client_id":"a","flow":"client_credentials"}`, "needs auth.client_secret or auth.private_key_jwt"},
		{"code flow without handler", httpTransport + `,"auth":{"flow":"authorization_code"}`, "needs handlers.authorization"},
		{"scope with space", httpTransport + `,"auth":{"scopes":["a b"]}`, "config.auth.scopes[0]: must be one non-empty scope token"},
		{"path store retired", httpTransport + `,"auth":{"token_store":"disk"}`, `config.auth.token_store: a path is retired: write {"type": "file", "path": "disk"}`},
		{"app store retired", httpTransport + `,"auth":{"token_store":"app"}`, `config.auth.token_store: "app" is retired: write {"type": "app"} and answer the store_load / store_save requests`},
		{"host store retired", httpTransport + `,"auth":{"token_store":"host"}`, `config.auth.token_store: "host" is retired: write {"type": "app"} and answer the store_load / store_save requests`},
		{"memory store retired", httpTransport + `,"auth":{"token_store":"memory"}`, `config.auth.token_store: "memory" is retired: write {"type": "memory"}`},
		{"encryption without key_env", httpTransport + `,"auth":{"token_store":{"type":"memory","encryption":{}}}`, "config.auth.token_store.encryption.key_env: is required"},
		{"zero authorization timeout", httpTransport + `,"auth":{"authorization_timeout_ms":0}`, "config.auth.authorization_timeout_ms: must be between"},
		{"step ups", httpTransport + `,"auth":{"max_step_ups":99}`, "config.auth.max_step_ups: must be between 1 and 10"},
		{"key not PEM", httpTransport + `,"auth":{"client_id":"a","private_key_jwt":{"key_pem":"hunter2"}}`, "config.auth.private_key_jwt: "},
		{"issuer without id", httpTransport + `,"auth":{"client_issuer":"https://as"}`, "config.auth.client_issuer: needs auth.client_id"},
		{"redirect not loopback", httpTransport + `,"auth":{"client_id":"a","redirect_uri":"http://example.com/cb"}`, "config.auth.redirect_uri: must be an https URL or an http URL on a loopback host"},
		{"bad flow jwt", httpTransport + `,"auth":{"flow":"jwt_bearer"}`, "config.auth.flow: \"jwt_bearer\" needs auth.assertion or auth.token_exchange"},
		{"assertion not a JWT", httpTransport + `,"auth":{"assertion":"hunter2"}`, "config.auth.assertion: must be a JWT"},
		{"assertion not a string", httpTransport + `,"auth":{"assertion":7}`, "config.auth.assertion: must be a string"},
		{"assertion and exchange", httpTransport + `,"auth":{"assertion":"a.b.hunter2","token_exchange":{"token_endpoint":"https://idp/t","subject_token":"x.y.z"}}`, "config.auth.assertion: set either"},
		{"exchange without endpoint", httpTransport + `,"auth":{"token_exchange":{"subject_token":"hunter2"}}`, "config.auth.token_exchange.token_endpoint: is required"},
		{"exchange without subject", httpTransport + `,"auth":{"token_exchange":{"token_endpoint":"https://idp/t"}}`, "config.auth.token_exchange.subject_token: is required"},
		{"exchange endpoint scheme", httpTransport + `,"auth":{"token_exchange":{"token_endpoint":"ftp://idp/t","subject_token":"hunter2"}}`, "config.auth.token_exchange.token_endpoint: must be an https:// URL"},
		{"exchange endpoint insecure", httpTransport + `,"auth":{"token_exchange":{"token_endpoint":"http://idp.example/t","subject_token":"hunter2"}}`, "config.auth.token_exchange.token_endpoint: "},
		{"exchange unknown field", httpTransport + `,"auth":{"token_exchange":{"token_endpoint":"https://idp/t","subject_token":"hunter2","issuer":"x"}}`, "config.auth.token_exchange.issuer: is not a known field"},
		{"exchange secret without id", httpTransport + `,"auth":{"token_exchange":{"token_endpoint":"https://idp/t","subject_token":"x","client_secret":"hunter2"}}`, "config.auth.token_exchange.client_secret: needs auth.token_exchange.client_id"},
		{"exchange bad method", httpTransport + `,"auth":{"token_exchange":{"token_endpoint":"https://idp/t","subject_token":"hunter2","token_auth_method":"private_key_jwt"}}`, "config.auth.token_exchange.token_auth_method: must be one of"},
		{"exchange token type", httpTransport + `,"auth":{"token_exchange":{"token_endpoint":"https://idp/t","subject_token":"hunter2","subject_token_type":"id_token"}}`, "config.auth.token_exchange.subject_token_type: must be a token type URN"},
		{"dpop string", httpTransport + `,"auth":{"dpop":"yes"}`, "config.auth.dpop: must be true, false or an object"},
		{"dpop bad alg", httpTransport + `,"auth":{"dpop":{"alg":"HS256"}}`, "config.auth.dpop.alg: must be one of"},
		{"dpop unknown field", httpTransport + `,"auth":{"dpop":{"kid":"x"}}`, "config.auth.dpop.kid: is not a known field"},
		{"dpop bad key", httpTransport + `,"auth":{"dpop":{"key_pem":"hunter2"}}`, "config.auth.dpop: key_pem is not PEM"},
		{"store not a string or object", httpTransport + `,"auth":{"token_store":7}`, "config.auth.token_store: must be an object"},
		{"store without type", httpTransport + `,"auth":{"token_store":{"path":"/tmp/x"}}`, "config.auth.token_store.type: is required"},
		{"store bad type", httpTransport + `,"auth":{"token_store":{"type":"sqlite"}}`, "config.auth.token_store.type: must be one of"},
		{"file store without path", httpTransport + `,"auth":{"token_store":{"type":"file"}}`, "config.auth.token_store.path: is required"},
		{"file store dir missing", httpTransport + `,"auth":{"token_store":{"type":"file","path":"/proc/lemonmcp-no-such-dir/t.json"}}`, "config.auth.token_store.path: the directory /proc/lemonmcp-no-such-dir does not exist"},
		{"postgres store without url", httpTransport + `,"auth":{"token_store":{"type":"postgres"}}`, "config.auth.token_store.url: is required"},
		{"postgres store bad url", httpTransport + `,"auth":{"token_store":{"type":"postgres","url":"mysql://u:hunter2@h/db"}}`, "config.auth.token_store.url: must be a postgres:// or postgresql:// URL"},
		{"redis store bad url", httpTransport + `,"auth":{"token_store":{"type":"redis","url":"http://:hunter2@h"}}`, "config.auth.token_store.url: must be a redis://"},
		{"store empty key", httpTransport + `,"auth":{"token_store":{"type":"file","path":"/tmp/t.json","key":" "}}`, "config.auth.token_store.key: must not be empty"},
		{"store short lease", httpTransport + `,"auth":{"token_store":{"type":"file","path":"/tmp/t.json","lease_ms":10}}`, "config.auth.token_store.lease_ms: must be between 1000"},
		{"store unknown field", httpTransport + `,"auth":{"token_store":{"type":"file","path":"/tmp/t.json","mode":"0644"}}`, "config.auth.token_store.mode: is not a known field"},
		{"bad url first", `"transport":{"type":"streamable_http","url":"ftp://h/"},"auth":{"client_id":"a"}`, "config.transport.url: must be an http:// or https:// URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(`{`+tc.in+`}`), "1.2.3")
			require.NotNil(t, err)
			require.Equal(t, core.StatusInvalidArgument, err.Status)
			require.Contains(t, err.Message, tc.want)
			require.NotContains(t, err.Message, "hunter2", "a secret is never echoed")
		})
	}
}

var keyPEM struct {
	once sync.Once
	pem  string
}

// testKeyPEM is a P-256 private key in PKCS#8 PEM, made once per run.
func testKeyPEM(t *testing.T) string {
	keyPEM.once.Do(func() {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			panic(err)
		}
		keyPEM.pem = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	})
	return keyPEM.pem
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
