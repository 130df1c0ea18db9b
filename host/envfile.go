package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
)

// maxEnvFileBytes bounds an envFile: it holds variables, not data.
const maxEnvFileBytes = 1 << 20

// mergeEnvFile reads VS Code's and Cursor's "envFile" (NAME=value lines,
// "#" comments, an optional "export ", values optionally quoted) into the
// server's env; a variable the server's "env" sets wins. A relative path
// is taken from the workspace folder. Messages name the file and the line,
// never a value.
func (r *reader) mergeEnvFile(at, file string, tr map[string]any) *core.Error {
	if !filepath.IsAbs(file) {
		file = filepath.Join(r.workspace(), file)
	}
	info, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return invalid(at, "the file "+file+" does not exist")
	case err != nil:
		return invalid(at, "cannot read the file "+file)
	case info.IsDir():
		return invalid(at, file+" is a directory, not a file of NAME=value lines")
	case info.Size() > maxEnvFileBytes:
		return invalid(at, "the file "+file+" is over 1 MiB")
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return invalid(at, "cannot read the file "+file)
	}
	env, _ := tr["env"].(map[string]any)
	if _, isObj := tr["env"].(map[string]any); tr["env"] != nil && !isObj {
		return nil // transport validation names the bad "env"
	}
	merged := make(map[string]any, len(env))
	for i, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !envName.MatchString(name) {
			return invalid(at, "line "+itoa(i+1)+" of "+file+" is not NAME=value")
		}
		value = strings.TrimSpace(value)
		if n := len(value); n >= 2 && (value[0] == '"' || value[0] == '\'') && value[n-1] == value[0] {
			value = value[1 : n-1]
		}
		merged[name] = value
	}
	for k, v := range env {
		merged[k] = v
	}
	tr["env"] = merged
	return nil
}
