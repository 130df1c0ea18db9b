package config

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/sandbox"
	"github.com/lemonmcp/lemonmcp/transport"
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
		{name: "a URL", sandbox: `{"network":{"allowedDomains":["http://registry.npmjs.org"]}}`,
			err: "config.transport.sandbox.network.allowedDomains[0]: write the host name, not a URL"},
		{name: "a trailing slash", sandbox: `{"network":{"allowedDomains":["registry.npmjs.org/"]}}`,
			err: "allowedDomains[0]: write the host name alone, without a path or a trailing slash"},
		{name: "every domain", sandbox: `{"network":{"allowedDomains":["*"]}}`, err: "allowedDomains[0]: \"*\" alone would allow every domain"},
		{name: "a top-level domain", sandbox: `{"network":{"allowedDomains":["*.com"]}}`,
			err: "allowedDomains[0]: covers a whole top-level domain or public suffix (com)"},
		{name: "a public suffix", sandbox: `{"network":{"deniedDomains":["*.co.uk"]}}`,
			err: "deniedDomains[0]: covers a whole top-level domain or public suffix (co.uk)"},
		{name: "IPv6 with a port, no brackets", sandbox: `{"network":{"allowedDomains":["fd00::1:::8080"]}}`,
			err: "allowedDomains[0]: an IPv6 address with a port takes brackets"},
		{name: "cloud metadata", sandbox: `{"network":{"allowedDomains":["169.254.169.254"]}}`, err: "allowedDomains[0]: is a link-local address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// "required": false: the helper is not installed next to this
			// test binary (TestSandboxFailsClosed).
			sb := `{"required":false,` + tc.sandbox[1:]
			if tc.sandbox == `{}` {
				sb = `{"required":false}`
			}
			if tc.sandbox == "true" {
				sb = tc.sandbox
			}
			p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"/bin/cat","sandbox":`+sb+`}}`), "test")
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				return
			}
			require.Nil(t, err)
			require.True(t, p.Sandboxed)
		})
	}
}

// TestSandboxFailsClosed: a sandbox is required unless the configuration
// says "required": false. The helper is not installed next to this test
// binary: the start fails, naming the layer and why, and for good.
func TestSandboxFailsClosed(t *testing.T) {
	for _, sb := range []string{`{}`, `{"required":true}`, `{"filesystem":{"allowWrite":["/tmp"]}}`} {
		p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"/bin/cat","sandbox":`+sb+`}}`), "test")
		require.Nil(t, err, sb)
		serr := p.Transport.Start(context.Background(), nopSink{})
		require.Error(t, serr, sb)
		var te *transport.Error
		require.ErrorAs(t, serr, &te)
		require.Equal(t, transport.CauseSandboxUnavailable, te.Cause)
		require.True(t, te.Permanent)
		require.Contains(t, te.Message, "sandbox: cannot be set up in full")
		require.Contains(t, te.Message, "the helper: lemonmcp-sandbox was not found beside the library")
	}
	p, err := Parse([]byte(`{"transport":{"type":"stdio","command":"/bin/cat","sandbox":{"required":false}}}`), "test")
	require.Nil(t, err)
	require.NoError(t, p.Transport.Start(context.Background(), nopSink{}))
	require.Equal(t, []string{"the helper: lemonmcp-sandbox was not found beside the library (nor in $LEMONMCP_SANDBOX_HELPER)"},
		p.Transport.(transport.SandboxReporter).SandboxReport().(*sandbox.Report).Missing)
	require.NoError(t, p.Transport.Close(context.Background()))
}

type nopSink struct{}

func (nopSink) Receive([]byte)                        {}
func (nopSink) Log(transport.LogLine)                 {}
func (nopSink) RequestFailed(int64, *transport.Error) {}
func (nopSink) Closed(*transport.ClosedError)         {}
