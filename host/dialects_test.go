package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDialects(t *testing.T) {
	t.Setenv("LMCP_DIALECT_TEST_VAR", "from-env")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vars.env"), []byte("# comment\nA=1\nexport B='two'\nC=\"x=y\"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.env"), []byte("A=1\nnot a line\n"), 0o600))
	tests := []struct {
		name     string
		config   string
		opts     LoadOptions
		err      string
		warnings []string
		client   string // the first server's client config, when set
		check    func(t *testing.T, c *Config)
	}{
		{name: "unknown members are one warning each", config: `{"globalShortcut":"x","mcpServers":{"a":{"command":"x","comand":"y","autoApprove":["t"]}}}`,
			warnings: []string{
				"config.globalShortcut: ignored: Claude Desktop's keyboard shortcut",
				"config.mcpServers.a.autoApprove: ignored: Cline's and Windsurf's tools approved without asking: LemonMCP asks for no approval, so every permitted tool runs",
				`config.mcpServers.a.comand: is not a member LemonMCP knows; ignored (did you mean "command"?)`,
			}},
		{name: "strict option refuses them", config: `{"mcpServers":{"a":{"command":"x","alwaysAllow":[]}}}`, opts: LoadOptions{Strict: true},
			err: `config.mcpServers.a.alwaysAllow: refused under "strict": Roo Code's tools approved`},
		{name: "messages spell servers as the file does", config: `{"servers":{"a":{"command":"x","bogus":1}}}`,
			warnings: []string{"config.servers.a.bogus: is not a member LemonMCP knows; ignored"}},
		{name: "an error spells servers as the file does", config: `{"servers":{"a":{"command":"x","headers":{}}}}`,
			err: "config.servers.a.headers: applies to URL servers only"},
		{name: "JSON with comments and trailing commas", config: "// c\n{\"servers\": {/* s */ \"a\": {\"command\": \"x\", \"args\": [\"http://h//p\",],},},}",
			client: `{"transport":{"type":"stdio","command":"x","args":["http://h//p"]}}`},
		{name: "a syntax error names line and column", config: "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}",
			err: "config: is not valid JSON at line 3, column"},
		{name: "Cline timeout in seconds", config: `{"mcpServers":{"a":{"command":"x","timeout":30,"disabled":false}}}`,
			client: `{"timeouts":{"call_ms":30000},"transport":{"type":"stdio","command":"x"}}`},
		{name: "timeouts.call_ms wins over timeout", config: `{"mcpServers":{"a":{"command":"x","timeout":30,"timeouts":{"call_ms":5}}}}`,
			client: `{"timeouts":{"call_ms":5},"transport":{"type":"stdio","command":"x"}}`},
		{name: "bad timeout", config: `{"mcpServers":{"a":{"command":"x","timeout":"30s"}}}`, err: "config.mcpServers.a.timeout: must be a positive number of seconds"},
		{name: "Windsurf serverUrl and disabledTools", config: `{"mcpServers":{"a":{"serverUrl":"https://h/mcp","disabledTools":["drop*"]}}}`,
			client: `{"transport":{"type":"http","url":"https://h/mcp"}}`,
			check: func(t *testing.T, c *Config) {
				require.False(t, c.Servers[0].Permits("drop*"))
				require.True(t, c.Servers[0].Permits("dropped"), "a disabled tool name is not a glob")
			}},
		{name: "Cline transportType", config: `{"mcpServers":{"a":{"url":"https://h/mcp","transportType":"streamableHttp"}}}`,
			client: `{"transport":{"type":"streamable_http","url":"https://h/mcp"}}`},
		{name: "env, workspace and predefined variables", opts: LoadOptions{WorkspaceFolder: "/ws/proj"},
			config: `{"mcpServers":{"a":{"command":"${workspaceFolder}/bin","args":["${workspaceFolderBasename}","${env:LMCP_DIALECT_TEST_VAR}","a${/}b","${pathSeparator}"]}}}`,
			client: `{"transport":{"type":"stdio","command":"/ws/proj/bin","args":["proj","from-env","a/b","/"]}}`},
		{name: "unset env: variable", config: `{"mcpServers":{"a":{"command":"x","env":{"K":"${env:LMCP_DIALECT_UNSET}"}}}}`,
			err: "config.mcpServers.a.env.K: uses ${env:LMCP_DIALECT_UNSET}, which is not set in the environment"},
		{name: "unknown reference", config: `{"mcpServers":{"a":{"command":"${command:pickFile}"}}}`,
			err: "config.mcpServers.a.command: uses ${command:pickFile}, which LemonMCP cannot resolve"},
		{name: "input given by the application", opts: LoadOptions{Inputs: map[string]string{"tok": "v1"}},
			config: `{"inputs":[{"type":"promptString","id":"tok","password":true}],"servers":{"a":{"command":"x","env":{"T":"${input:tok}"}}}}`,
			client: `{"transport":{"type":"stdio","command":"x","env":{"T":"v1"}}}`},
		{name: "input default", config: `{"inputs":[{"type":"promptString","id":"r","default":"eu"}],"servers":{"a":{"command":"x","args":["${input:r}"]}}}`,
			client: `{"transport":{"type":"stdio","command":"x","args":["eu"]}}`},
		{name: "input without a value", config: `{"inputs":[{"type":"promptString","id":"tok","password":true}],"servers":{"a":{"command":"x","env":{"T":"${input:tok}"}}}}`,
			err: "config.servers.a.env.T: uses ${input:tok}, which has no value (an editor would prompt for it; LemonMCP does not): give it a value (lemonmcp --input tok=VALUE"},
		{name: "input not declared", config: `{"servers":{"a":{"command":"x","args":["${input:nope}"]}}}`,
			err: "uses ${input:nope}, which is not declared in \"inputs\" and has no value"},
		{name: "bad inputs", config: `{"inputs":{},"servers":{}}`, err: "config.inputs: must be an array"},
		{name: "envFile, env wins", config: `{"mcpServers":{"a":{"command":"x","envFile":"` + filepath.Join(dir, "vars.env") + `","env":{"A":"env"}}}}`,
			client: `{"transport":{"type":"stdio","command":"x","env":{"A":"env","B":"two","C":"x=y"}}}`},
		{name: "envFile relative to the workspace", opts: LoadOptions{WorkspaceFolder: dir}, config: `{"mcpServers":{"a":{"command":"x","envFile":"vars.env"}}}`,
			client: `{"transport":{"type":"stdio","command":"x","env":{"A":"1","B":"two","C":"x=y"}}}`},
		{name: "envFile missing", config: `{"mcpServers":{"a":{"command":"x","envFile":"/nonexistent/.env"}}}`,
			err: "config.mcpServers.a.envFile: the file /nonexistent/.env does not exist"},
		{name: "envFile malformed names the line", config: `{"mcpServers":{"a":{"command":"x","envFile":"` + filepath.Join(dir, "bad.env") + `"}}}`,
			err: "bad.env is not NAME=value"},
		{name: "start", config: `{"start":"lazy","mcpServers":{"a":{"command":"x"},"b":{"command":"x","start":"eager"}}}`,
			check: func(t *testing.T, c *Config) {
				require.Equal(t, StartLazy, c.Servers[0].Start)
				require.Equal(t, StartEager, c.Servers[1].Start)
			}},
		{name: "idle_ms", config: `{"start":"lazy","idle_ms":500,"mcpServers":{"a":{"command":"x"},"b":{"command":"x","start":"eager"},"c":{"command":"x","idle_ms":9}}}`,
			check: func(t *testing.T, c *Config) {
				require.Equal(t, int64(500), c.Servers[0].Idle.Milliseconds())
				require.Zero(t, c.Servers[1].Idle, "the host-wide idle_ms is for lazy servers")
				require.Equal(t, int64(9), c.Servers[2].Idle.Milliseconds())
			}},
		{name: "idle_ms on an eager server", config: `{"mcpServers":{"a":{"command":"x","idle_ms":5}}}`, err: `config.mcpServers.a.idle_ms: stops a lazy server: it needs "start": "lazy"`},
		{name: "bad idle_ms", config: `{"idle_ms":0,"mcpServers":{}}`, err: "config.idle_ms: must be a whole number of milliseconds, at least 1"},
		{name: "start option overrides the file", opts: LoadOptions{Start: StartLazy}, config: `{"start":"eager","mcpServers":{"a":{"command":"x"}}}`,
			check: func(t *testing.T, c *Config) { require.Equal(t, StartLazy, c.Servers[0].Start) }},
		{name: "bad start", config: `{"mcpServers":{"a":{"command":"x","start":"later"}}}`, err: `config.mcpServers.a.start: must be "eager" or "lazy"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfigWith([]byte(tc.config), tc.opts)
			if tc.err != "" {
				require.NotNil(t, err)
				require.Contains(t, err.Message, tc.err)
				require.NotContains(t, err.Message, "from-env", "values are never echoed")
				return
			}
			require.Nil(t, err)
			if tc.warnings != nil {
				require.Equal(t, tc.warnings, c.Warnings)
			} else {
				require.Empty(t, c.Warnings)
			}
			if tc.client != "" {
				require.JSONEq(t, tc.client, string(c.Servers[0].Client))
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {`), 0o600))
	warn := filepath.Join(dir, ".vscode", "mcp.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(warn), 0o700))
	require.NoError(t, os.WriteFile(warn, []byte(`{"servers":{"a":{"command":"${workspaceFolder}/x","dev":{}}}}`), 0o600))
	tests := []struct {
		name, path, err string
	}{
		{name: "missing", path: filepath.Join(dir, "none.json"), err: filepath.Join(dir, "none.json") + ": no such config file"},
		{name: "directory", path: dir, err: dir + ": is a directory"},
		{name: "malformed names the file", path: bad, err: bad + ": config: is not valid JSON"},
		{name: "empty path", path: "", err: "the config file path is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadFile(tc.path, LoadOptions{})
			require.NotNil(t, err)
			require.Contains(t, err.Message, tc.err)
		})
	}
	t.Run("warnings name the file; the workspace is the parent of .vscode", func(t *testing.T) {
		c, err := LoadFile(warn, LoadOptions{})
		require.Nil(t, err)
		require.Equal(t, []string{warn + ": config.servers.a.dev: ignored: VS Code's development mode (watch and debug)"}, c.Warnings)
		var client map[string]map[string]any
		require.NoError(t, json.Unmarshal(c.Servers[0].Client, &client))
		require.Equal(t, filepath.Join(dir, "x"), client["transport"]["command"])
	})
}

func TestStripJSONC(t *testing.T) {
	tests := map[string]string{
		`{"a":"//not a comment","b":"/*nor this*/"}`: `{"a":"//not a comment","b":"/*nor this*/"}`,
		"{\"a\":1, // c\n}":                          "{\"a\":1      \n}",
		`{"a":[1,2,],}`:                              `{"a":[1,2 ] }`,
		`{"a":"\",}"}`:                               `{"a":"\",}"}`,
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) { require.Equal(t, want, string(stripJSONC([]byte(in)))) })
	}
}

func TestParseLoadOptions(t *testing.T) {
	tests := []struct {
		name, raw, err string
		check          func(t *testing.T, o LoadOptions)
	}{
		{name: "none", raw: ``, check: func(t *testing.T, o LoadOptions) { require.Equal(t, LoadOptions{}, o) }},
		{name: "all", raw: `{"strict":true,"inputs":{"a":"b"},"workspace_folder":"/w","start":"lazy","override":{"tool_prefix":"never"}}`,
			check: func(t *testing.T, o LoadOptions) {
				require.True(t, o.Strict)
				require.Equal(t, map[string]string{"a": "b"}, o.Inputs)
				require.Equal(t, "/w", o.WorkspaceFolder)
				require.Equal(t, StartLazy, o.Start)
				require.Equal(t, map[string]any{"tool_prefix": "never"}, o.Override)
			}},
		{name: "unknown", raw: `{"strct":true}`, err: `options.strct: is not a known option (known: strict, inputs, workspace_folder, start, override, only, stdio); did you mean "strict"?`},
		{name: "bad input", raw: `{"inputs":{"a":1}}`, err: "options.inputs.a: must be a string"},
		{name: "bad start", raw: `{"start":"soon"}`, err: `options.start: must be "eager" or "lazy"`},
		{name: "only", raw: `{"only":["a"]}`, check: func(t *testing.T, o LoadOptions) { require.Equal(t, []string{"a"}, o.Only) }},
		{name: "only empty", raw: `{"only":[]}`, err: "options.only: must be a non-empty array of server names"},
		{name: "stdio", raw: `{"stdio":{"env":{"A":"1"},"cwd":"/w","env_inherit":"all"}}`, check: func(t *testing.T, o LoadOptions) {
			require.Equal(t, &StdioOverride{Env: map[string]string{"A": "1"}, Cwd: "/w", InheritAll: true}, o.Stdio)
		}},
		{name: "stdio inherit minimal", raw: `{"stdio":{"env_inherit":"minimal"}}`, err: `options.stdio.env_inherit: must be "all" (the file's own is kept otherwise)`},
		{name: "not an object", raw: `[]`, err: "options: must be a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseLoadOptions([]byte(tc.raw))
			if tc.err != "" {
				require.NotNil(t, err)
				require.Equal(t, tc.err, err.Message)
				return
			}
			require.Nil(t, err)
			tc.check(t, o)
		})
	}
	t.Run("override lies over the file", func(t *testing.T) {
		c, err := ParseConfigWith([]byte(`{"tool_prefix":"always","mcpServers":{"a":{"command":"x"}}}`), LoadOptions{Override: map[string]any{"tool_prefix": "never"}})
		require.Nil(t, err)
		require.Equal(t, PrefixNever, c.ToolPrefix)
	})
}

// TestAnInvalidConfigNamesItsTypos: the warning that names a misspelt
// member goes with the error the misspelling causes, since a failed parse
// returns no warnings.
func TestAnInvalidConfigNamesItsTypos(t *testing.T) {
	const comand = `config.mcpServers.x.comand: is not a member LemonMCP knows (did you mean "command"?)`
	tests := []struct {
		name, config string
		strict       bool
		err          string
	}{
		{name: "a misspelt command", config: `{"mcpServers": {"x": {"comand": "python3"}}}`,
			err: `config.mcpServers.x: needs "command" (a stdio server) or "url" (an HTTP server); ` + comand},
		{name: "a typo after the member in error", config: `{"mcpServers": {"x": {"disabled": "no", "urll": "http://h"}}}`,
			err: `config.mcpServers.x.disabled: must be true or false; config.mcpServers.x.urll: is not a member LemonMCP knows (did you mean "url"?)`},
		{name: "a typo of the client configuration", config: `{"mcpServers": {"x": {"command": "y", "timout": 5, "timeouts": {"call_ms": "soon"}}}}`,
			err: `config.mcpServers.x.timeouts.call_ms: must be a whole number; config.mcpServers.x.timout: is not a member LemonMCP knows (did you mean "timeout"?)`},
		{name: "a top-level typo", config: `{"mcpServer": {"x": {"command": "y"}}}`,
			err: `config.mcpServers: is required (or "servers", as VS Code writes it); config.mcpServer: is not a member LemonMCP knows (did you mean "mcpServers"?)`},
		{name: "strict names the typo once", config: `{"mcpServers": {"x": {"comand": "python3"}}}`, strict: true,
			err: `config.mcpServers.x.comand: is not a member LemonMCP knows; refused under "strict" (did you mean "command"?)`},
		{name: "only typos, not foreign members", config: `{"mcpServers": {"x": {"autoApprove": [], "bogus": 1}}}`,
			err: `config.mcpServers.x: needs "command" (a stdio server) or "url" (an HTTP server)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.config), "test")
			if tc.strict {
				_, err = ParseConfigWith([]byte(tc.config), LoadOptions{Strict: true})
			}
			require.NotNil(t, err)
			require.Equal(t, tc.err, err.Message)
		})
	}
}

func TestClientConfigErrorsSpellTheFilesMember(t *testing.T) {
	tests := []struct{ name, config, err string }{
		{"Windsurf serverUrl", `{"mcpServers":{"w":{"serverUrl":"ftp://x"}}}`, "config.mcpServers.w.serverUrl: must be an http:// or https:// URL"},
		{"url", `{"mcpServers":{"w":{"url":"ftp://x"}}}`, "config.mcpServers.w.url: must be an http:// or https:// URL"},
		{"VS Code env", `{"servers":{"v":{"command":"x","env":{"A":1}}}}`, "config.servers.v.env.A: must be a string"},
		{"Cline transportType", `{"mcpServers":{"c":{"url":"http://h","transportType":"websocket"}}}`, `config.mcpServers.c.transportType: must be one of`},
		{"timeouts", `{"mcpServers":{"a":{"command":"x","timeouts":{"call_ms":"soon"}}}}`, "config.mcpServers.a.timeouts.call_ms: must be a whole number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.config), "test")
			require.NotNil(t, err)
			require.Contains(t, err.Message, tc.err)
		})
	}
}
