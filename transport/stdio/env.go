package stdio

import (
	"sort"
	"strings"
)

// minimalEnv lists what a server gets from this process under
// EnvInherit "minimal": enough to find programs, resolve the home directory
// and locale, format time, and reach the network the way this machine
// does: its CA bundles (a TLS-inspecting proxy's root: without them `uvx
// mcp-server-time` fails with UnknownIssuer) and its proxy. Everything else
// in a host's environment (cloud credentials, tokens) stays behind unless
// the configuration passes it explicitly.
var minimalEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL",
	"LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
}

// buildEnv returns the child's environment. parent is this process's
// environment in os.Environ form; it is a parameter so tests need not
// mutate the real one. Inherited variables keep their order, extra ones
// follow sorted by name so the result is deterministic, and every name
// appears once (a duplicated parent variable keeps its first position and
// its last value, the way os/exec deduplicates).
func buildEnv(mode string, extra map[string]string, parent []string) []string {
	keep := func(string) bool { return true }
	if mode != EnvInheritAll {
		keep = func(name string) bool {
			for _, m := range minimalEnv {
				if name == m {
					return true
				}
			}
			return false
		}
	}

	env := make([]string, 0, len(extra)+len(minimalEnv))
	index := make(map[string]int)
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !keep(name) {
			continue
		}
		if _, overridden := extra[name]; overridden {
			continue
		}
		if i, seen := index[name]; seen {
			env[i] = kv
			continue
		}
		index[name] = len(env)
		env = append(env, kv)
	}

	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		env = append(env, name+"="+extra[name])
	}
	return env
}

// lookupEnv finds name in an os.Environ-style list, last entry winning.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
