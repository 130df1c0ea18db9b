package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSandboxObject(t *testing.T) {
	tests := []struct{ name, sandbox, err string }{
		{name: "every member", sandbox: `{"filesystem":{"allowWrite":["/tmp/a"],"denyRead":["/root/.ssh"],"denyWrite":["/tmp/a/ro"]},
			"network":{"allowedDomains":[],"deniedDomains":["evil.example"]},"limits":{"processes":64,"openFiles":256,"memoryBytes":1073741824}}`},
		{name: "empty", sandbox: `{}`},
		{name: "a relative path", sandbox: `{"filesystem":{"allowWrite":["out"]}}`,
			err: "config.transport.sandbox.filesystem.allowWrite[0]: must be an absolute path"},
		{name: "a typo", sandbox: `{"filesystem":{"allowwrite":["/tmp"]}}`,
			err: "config.transport.sandbox.filesystem.allowwrite: is not a known field"},
		{name: "an unknown member", sandbox: `{"seccomp":true}`, err: "config.transport.sandbox.seccomp: is not a known field"},
		{name: "a limit out of range", sandbox: `{"limits":{"processes":0}}`, err: "config.transport.sandbox.limits.processes: must be between 1"},
		{name: "an address with its port", sandbox: `{"network":{"allowedDomains":["127.0.0.1:4873","[::1]:4873","::1","localhost:8080","*.example.com:443"]}}`},
		{name: "a port out of range", sandbox: `{"network":{"allowedDomains":["example.com","127.0.0.1:0"]}}`,
			err: "config.transport.sandbox.network.allowedDomains[1]: the port must be a number from 1 to 65535"},
		{name: "a port that is no number", sandbox: `{"network":{"deniedDomains":["evil.example:http"]}}`,
			err: "config.transport.sandbox.network.deniedDomains[0]: the port must be a number"},
		{name: "no host", sandbox: `{"network":{"allowedDomains":[":4873"]}}`,
			err: "config.transport.sandbox.network.allowedDomains[0]: names no host"},
		{name: "Unix sockets allowed", sandbox: `{"network":{"allowAllUnixSockets":true}}`},
		{name: "Unix sockets, not a boolean", sandbox: `{"network":{"allowAllUnixSockets":"yes"}}`,
			err: "config.transport.sandbox.network.allowAllUnixSockets: must be"},
		{name: "not an object", sandbox: `true`, err: "config.transport.sandbox: must be a JSON object"},
		// The helper is not installed next to this test binary: a required
		// sandbox fails at once and says what is missing.
		{name: "required and unavailable", sandbox: `{"required":true}`,
			err: "config.transport.sandbox: is required, but this machine lacks the sandbox helper (lemonmcp-sandbox)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"/bin/cat","sandbox":`+tc.sandbox+`}}`), "test")
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				return
			}
			require.Nil(t, err)
			require.NotNil(t, p.Sandbox)
		})
	}
}

// TestSandboxInServerInfo: a bare client's server info says what confines
// its server.
func TestSandboxInServerInfo(t *testing.T) {
	p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"/bin/cat","sandbox":{}}}`), "test")
	require.Nil(t, err)
	require.Equal(t, p.Sandbox, p.Options.Sandbox)
	p, err = Parse([]byte(`{"transport":{"type":"stdio","command":"/bin/cat"}}`), "test")
	require.Nil(t, err)
	require.Nil(t, p.Options.Sandbox)
}
