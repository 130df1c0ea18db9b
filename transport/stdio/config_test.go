package stdio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lemonmcp/lemonmcp/transport"
)

func TestNewValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		message string // "" means valid
	}{
		{name: "empty command", cfg: Config{}, message: "command is empty"},
		{name: "whitespace command", cfg: Config{Command: " \t\n"}, message: "command is empty"},
		{name: "bad EnvInherit", cfg: Config{Command: "x", EnvInherit: "some"}, message: `EnvInherit must be "minimal" or "all", not "some"`},
		{name: "bad Stderr", cfg: Config{Command: "x", Stderr: "tee"}, message: `Stderr must be "capture", "merge" or "discard", not "tee"`},
		{name: "negative MaxMessageBytes", cfg: Config{Command: "x", MaxMessageBytes: -1}, message: "MaxMessageBytes must be between 1 and 1073741824, not -1"},
		{name: "negative CloseGrace", cfg: Config{Command: "x", CloseGrace: -time.Second}, message: "CloseGrace must not be negative (got -1s)"},
		{name: "too many tail lines", cfg: Config{Command: "x", StderrTailLines: 5000}, message: "StderrTailLines must be between 1 and 1000, not 5000"},
		{name: "env name with =", cfg: Config{Command: "x", Env: map[string]string{"A=B": "c"}}, message: `Env: invalid variable name "A=B"`},
		{name: "env value with NUL", cfg: Config{Command: "x", Env: map[string]string{"TOKEN": "se\x00cret"}}, message: "Env: the value of TOKEN contains a NUL byte"},
		{name: "arg with NUL", cfg: Config{Command: "x", Args: []string{"ok", "b\x00d"}}, message: "Args[1] contains a NUL byte"},
		{name: "valid", cfg: Config{Command: "npx", Args: []string{"-y", "server"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := New(tt.cfg)
			if tt.message == "" {
				require.NoError(t, err)
				require.Equal(t, "stdio", tr.Name())
				return
			}
			require.Nil(t, tr)
			require.Equal(t, transport.CodeInvalidArgument, codeOf(t, err))
			require.Equal(t, tt.message, err.Error())
		})
	}
}

func TestNewDefaults(t *testing.T) {
	tr, err := New(Config{Command: "srv"})
	require.NoError(t, err)
	require.Equal(t, EnvInheritMinimal, tr.cfg.EnvInherit)
	require.Equal(t, StderrCapture, tr.cfg.Stderr)
	require.Equal(t, 16<<20, tr.cfg.MaxMessageBytes)
	require.Equal(t, 2*time.Second, tr.cfg.CloseGrace)
	require.Equal(t, 20, tr.cfg.StderrTailLines)
}

// New copies Args and Env, so the caller may reuse its values.
func TestNewCopiesConfig(t *testing.T) {
	args := []string{"a"}
	env := map[string]string{"K": "v"}
	tr, err := New(Config{Command: "srv", Args: args, Env: env})
	require.NoError(t, err)
	args[0] = "changed"
	env["K"] = "changed"
	require.Equal(t, []string{"a"}, tr.cfg.Args)
	require.Equal(t, "v", tr.cfg.Env["K"])
}

func TestBuildEnv(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/u", "AWS_SECRET_ACCESS_KEY=s3cr3t",
		"LANG=en_US.UTF-8", "TERM=xterm", "PATH=/opt/bin", "NOEQUALS",
		"SSL_CERT_FILE=/etc/corp-ca.pem", "https_proxy=http://proxy:3128", "GITHUB_TOKEN=t",
	}
	tests := []struct {
		name  string
		mode  string
		extra map[string]string
		want  []string
	}{
		{
			name: "minimal filters and dedupes",
			mode: EnvInheritMinimal,
			want: []string{"PATH=/opt/bin", "HOME=/home/u", "LANG=en_US.UTF-8", "TERM=xterm", "SSL_CERT_FILE=/etc/corp-ca.pem", "https_proxy=http://proxy:3128"},
		},
		{
			name:  "minimal with overrides and extras",
			mode:  EnvInheritMinimal,
			extra: map[string]string{"LANG": "C", "API_KEY": "k", "B": "2"},
			want:  []string{"PATH=/opt/bin", "HOME=/home/u", "TERM=xterm", "SSL_CERT_FILE=/etc/corp-ca.pem", "https_proxy=http://proxy:3128", "API_KEY=k", "B=2", "LANG=C"},
		},
		{
			name: "all passes everything",
			mode: EnvInheritAll,
			want: []string{"PATH=/opt/bin", "HOME=/home/u", "AWS_SECRET_ACCESS_KEY=s3cr3t", "LANG=en_US.UTF-8", "TERM=xterm", "SSL_CERT_FILE=/etc/corp-ca.pem", "https_proxy=http://proxy:3128", "GITHUB_TOKEN=t"},
		},
		{
			name:  "all with override",
			mode:  EnvInheritAll,
			extra: map[string]string{"PATH": "/x"},
			want:  []string{"HOME=/home/u", "AWS_SECRET_ACCESS_KEY=s3cr3t", "LANG=en_US.UTF-8", "TERM=xterm", "SSL_CERT_FILE=/etc/corp-ca.pem", "https_proxy=http://proxy:3128", "GITHUB_TOKEN=t", "PATH=/x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, buildEnv(tt.mode, tt.extra, parent))
		})
	}
}

func TestResolveCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "srv"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "data"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "local"), []byte("#!/bin/sh\n"), 0o755))

	tests := []struct {
		name    string
		command string
		cwd     string
		path    string // child's PATH; "-" means unset
		want    string
		message string
	}{
		{name: "found in child PATH", command: "srv", path: "/nonexistent:" + bin, want: filepath.Join(bin, "srv")},
		{name: "not in child PATH", command: "srv", path: "/nonexistent", message: "executable not found: srv"},
		{name: "relative PATH entries skipped", command: "local", cwd: dir, path: ".::bin", message: "executable not found: local"},
		{name: "non-executable skipped in PATH", command: "data", path: bin, message: "executable not found: data"},
		{name: "slash relative to cwd", command: "./local", cwd: dir, path: "-", want: filepath.Join(dir, "local")},
		{name: "slash relative to cwd, nested", command: "bin/srv", cwd: dir, path: "-", want: filepath.Join(bin, "srv")},
		{name: "absolute path", command: filepath.Join(bin, "srv"), path: "-", want: filepath.Join(bin, "srv")},
		{name: "absolute missing", command: filepath.Join(dir, "nope"), path: "-", message: "executable not found: " + filepath.Join(dir, "nope")},
		{name: "not executable", command: "./bin/data", cwd: dir, path: "-", message: "not an executable file: ./bin/data"},
		{name: "directory", command: "./bin", cwd: dir, path: "-", message: "not an executable file: ./bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if tt.path != "-" {
				env = []string{"PATH=" + tt.path}
			}
			got, err := resolveCommand(tt.command, tt.cwd, env)
			if tt.message != "" {
				want := transport.CodeInvalidArgument
				if strings.HasPrefix(tt.message, "executable not found") {
					want = transport.CodeTransport // the server cannot be started
				}
				require.Equal(t, want, codeOf(t, err))
				require.Equal(t, tt.message, err.Error())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestExitReportNil(t *testing.T) {
	msg, code, sig := exitReport(0, false)
	require.Equal(t, "server exited; its exit status is unknown", msg)
	require.Equal(t, -1, code)
	require.Empty(t, sig)
}

func TestLogText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{name: "short", in: "hello", max: 10, want: "hello"},
		{name: "cut", in: "hello world", max: 5, want: "hello"},
		{name: "cut on rune boundary", in: "aé", max: 2, want: "a"},
		{name: "invalid utf8 replaced", in: "a\xffb", max: 10, want: "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, logText([]byte(tt.in), tt.max))
		})
	}
}
