package host

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
)

// varRef is any ${...} reference; what is inside decides its kind.
var varRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// envRef is ${NAME} or ${NAME:-default} (the shells' and Claude Code's
// forms).
var envRef = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(:-(.*))?$`)

// envName is a variable name an envFile may set.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// knownRefs is how a message lists the references the host resolves.
const knownRefs = "${VAR}, ${VAR:-default}, ${env:VAR}, ${input:id}, ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${pathSeparator}"

// expandAll expands variables in every string of v. Messages name the
// field and the variable, never a value.
func (r *reader) expandAll(at string, v any) (any, *core.Error) {
	switch x := v.(type) {
	case string:
		return r.expand(at, x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			e, err := r.expandAll(at+"."+k, item)
			if err != nil {
				return nil, err
			}
			out[k] = e
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			e, err := r.expandAll(at+"["+itoa(i)+"]", item)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	default:
		return v, nil
	}
}

// expand resolves the references of one string: the environment (${VAR},
// ${VAR:-default}, VS Code's and Cursor's ${env:VAR}), VS Code's inputs
// (${input:id}), and the editors' predefined ${workspaceFolder},
// ${workspaceFolderBasename}, ${userHome} and ${pathSeparator} (${/}).
func (r *reader) expand(at, s string) (string, *core.Error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var failure *core.Error
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		if failure != nil {
			return ""
		}
		val, err := r.resolve(at, ref[2:len(ref)-1])
		if err != nil {
			failure = err
		}
		return val
	})
	if failure != nil {
		return "", failure
	}
	return out, nil
}

func (r *reader) resolve(at, name string) (string, *core.Error) {
	switch name {
	case "workspaceFolder":
		return r.workspace(), nil
	case "workspaceFolderBasename":
		return filepath.Base(r.workspace()), nil
	case "userHome":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", invalid(at, "uses ${userHome}, but the home directory is unknown (HOME is not set)")
		}
		return home, nil
	case "pathSeparator", "/":
		return string(filepath.Separator), nil
	}
	if v, ok := strings.CutPrefix(name, "env:"); ok {
		if val, set := os.LookupEnv(v); set {
			return val, nil
		}
		return "", invalid(at, "uses ${env:"+v+"}, which is not set in the environment")
	}
	if id, ok := strings.CutPrefix(name, "input:"); ok {
		return r.input(at, id)
	}
	m := envRef.FindStringSubmatch(name)
	if m == nil {
		return "", invalid(at, "uses ${"+name+"}, which LemonMCP cannot resolve (it knows "+knownRefs+")")
	}
	if val, ok := os.LookupEnv(m[1]); ok && (val != "" || m[2] == "") {
		return val, nil
	}
	if m[2] != "" {
		return m[3], nil
	}
	return "", invalid(at, "uses ${"+m[1]+"}, which is not set in the environment (write ${"+m[1]+":-default} for a fallback)")
}

// input resolves ${input:id}: a value the application gave, else the
// default the file's "inputs" declares. LemonMCP never prompts, so an
// input without either is an error naming it.
func (r *reader) input(at, id string) (string, *core.Error) {
	if v, ok := r.opts.Inputs[id]; ok {
		return v, nil
	}
	decl, declared := r.inputs[id]
	if declared && decl.hasDefault {
		return decl.def, nil
	}
	how := "give it a value (lemonmcp --input " + id + "=VALUE, or the inputs option of the host)"
	if !declared {
		return "", invalid(at, "uses ${input:"+id+"}, which is not declared in \"inputs\" and has no value: "+how)
	}
	return "", invalid(at, "uses ${input:"+id+"}, which has no value (an editor would prompt for it; LemonMCP does not): "+how)
}

// workspace is ${workspaceFolder}: the option when given, else the project
// directory of the file (the parent of a .vscode or .cursor directory, or
// the file's own directory), else the current directory.
func (r *reader) workspace() string {
	if r.opts.WorkspaceFolder != "" {
		return r.opts.WorkspaceFolder
	}
	if r.opts.File != "" {
		dir := filepath.Dir(r.absFile())
		switch filepath.Base(dir) {
		case ".vscode", ".cursor":
			return filepath.Dir(dir)
		}
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

func (r *reader) absFile() string {
	abs, err := filepath.Abs(r.opts.File)
	if err != nil {
		return r.opts.File
	}
	return abs
}
