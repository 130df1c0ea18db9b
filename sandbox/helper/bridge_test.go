package helper

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProxyEnvOverridesProxySettings: whatever proxy setting the server's
// environment brings, in any case or spelling, is dropped, and the
// sandbox's proxy is set for every convention, npm's included.
func TestProxyEnvOverridesProxySettings(t *testing.T) {
	in := []string{"PATH=/bin", "NO_PROXY=127.0.0.1", "no_proxy=*", "HTTPS_PROXY=http://corp:3128", "proxy=http://corp:3128",
		"npm_config_proxy=http://corp:3128", "NPM_CONFIG_HTTPS_PROXY=http://corp:3128", "npm_config_https-proxy=http://corp:3128",
		"Npm_Config_NoProxy=registry.example", "npm_config_registry=https://registry.example/", "NODE_USE_ENV_PROXY=0",
		"GOPROXY=https://goproxy.example", "UV_INDEX_URL=https://pypi.example/simple"}
	got := map[string]string{}
	for _, kv := range proxyEnv(in, "http://127.0.0.1:9") {
		k, v, _ := cutEnv(kv)
		_, dup := got[k]
		require.False(t, dup, "%s twice", k)
		got[k] = v
	}
	const url = "http://127.0.0.1:9"
	require.Equal(t, map[string]string{
		"PATH": "/bin", "npm_config_registry": "https://registry.example/", "GOPROXY": "https://goproxy.example",
		"UV_INDEX_URL": "https://pypi.example/simple",
		"HTTP_PROXY":   url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url, "ALL_PROXY": url, "all_proxy": url,
		"NODE_USE_ENV_PROXY": "1", "npm_config_proxy": url, "npm_config_https_proxy": url,
	}, got)
}
