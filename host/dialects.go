package host

import (
	"sort"
	"strings"

	"github.com/lemonmcp/lemonmcp/core"
)

// Config files belong to other applications: Claude Desktop, Claude Code
// (.mcp.json), Cursor, VS Code (mcp.json: "servers", "inputs"), Cline,
// Roo Code and Windsurf each write their own members beside the common
// ones. The host reads them all: what means something here is honoured,
// what does not is ignored with one warning naming it (an error under
// "strict"), so that a file works as the other program wrote it.

// LoadOptions are the application's choices for reading a config file.
type LoadOptions struct {
	// Strict makes every member the host ignores an error instead of a
	// warning.
	Strict bool
	// Inputs are the values of ${input:id} references (VS Code's inputs,
	// which an editor would prompt for).
	Inputs map[string]string
	// WorkspaceFolder is ${workspaceFolder}; empty: the file's project
	// directory (the parent of .vscode or .cursor), else the current one.
	WorkspaceFolder string
	// File is the file's path: messages start with it, and envFile and
	// ${workspaceFolder} are found from it. Empty for a config given as text.
	File string
	// Start, when set, overrides the file's host-wide "start" ("eager" or
	// "lazy"); a server's own "start" still wins.
	Start string
	// Override holds top-level members laid over the file's own (an
	// application's "tool_prefix" or "defaults"), read as the file's.
	Override map[string]any
	// Only, when set, keeps only these servers of the file (lemonmcp
	// --config FILE --server NAME): the host's options, pins and guard
	// stay those of the file.
	Only []string
	// Stdio, when set, is laid over the transport of every server kept,
	// each of which must be a stdio server (the command line's --env,
	// --cwd and --inherit-env).
	Stdio *StdioOverride
}

// StdioOverride is what a program that starts a file's servers changes
// in how they start: Env adds to (and wins over) each server's env, Cwd
// replaces its working directory, InheritAll gives it the whole
// environment (env_inherit "all").
type StdioOverride struct {
	Env        map[string]string
	Cwd        string
	InheritAll bool
}

// Start modes ("start"): an eager server starts with Connect, a lazy one
// on its first call or list.
const (
	StartEager = "eager"
	StartLazy  = "lazy"
)

// hostKeys are the top-level members the host reads.
var hostKeys = []string{"mcpServers", "servers", "tool_prefix", "defaults", "deferred_tools", "inputs", "strict", "start", "idle_ms", "pins"}

// serverKeys are the server members the host reads besides clientKeys and
// transportKeys (and the foreign ones it honours, in honouredServerKeys).
var serverKeys = []string{"enabled", "disabled", "tools", "start", "idle_ms", "sandboxEnabled", "sandbox", "per_session"}

// sandboxKeys are VS Code's sandbox members, which a server and the
// defaults may both give: "sandbox" is passed on to the stdio transport
// when "sandboxEnabled" is true, and ignored otherwise, as VS Code does.
var sandboxKeys = []string{"sandboxEnabled", "sandbox"}

// honouredServerKeys are other clients' server members that mean something
// here, and what they become.
var honouredServerKeys = map[string]string{
	"envFile":       "VS Code's and Cursor's file of environment variables",
	"timeout":       "Cline's and Roo Code's request timeout in seconds (timeouts.call_ms)",
	"serverUrl":     "Windsurf's URL of a remote server (url)",
	"httpUrl":       "Gemini CLI's URL of a Streamable HTTP server (url)",
	"transportType": "Cline's transport (type)",
	"disabledTools": "Windsurf's tools turned off (tools.deny)",
}

// foreignKeys are members other clients define that mean nothing here,
// with what they are, for the warning.
var foreignKeys = map[string]string{
	// top level
	"globalShortcut": "Claude Desktop's keyboard shortcut",
	"preferences":    "Claude Desktop's preferences",
	"$schema":        "the file's JSON schema reference",
	// server level
	"autoApprove":    "Cline's and Windsurf's tools approved without asking: LemonMCP asks for no approval, so every permitted tool runs",
	"alwaysAllow":    "Roo Code's tools approved without asking: LemonMCP asks for no approval, so every permitted tool runs",
	"dev":            "VS Code's development mode (watch and debug)",
	"gallery":        "VS Code's gallery entry",
	"version":        "VS Code's installed version",
	"description":    "a description for people",
	"networkTimeout": "Roo Code's network timeout",
	"trust":          "Gemini CLI's confirmation bypass",
	"oauth":          "another client's OAuth settings (LemonMCP's are \"auth\")",
}

// reader is one reading of a config: its options, the warnings so far,
// and what the file declares that references need.
type reader struct {
	opts       LoadOptions
	strict     bool
	serversKey string // "mcpServers" or "servers", as the file spells it
	inputs     map[string]inputDecl
	warnings   []string
}

type inputDecl struct {
	def        string
	hasDefault bool
}

// ignore records a member the host does not use: a warning, or under
// strict an error. what says what the member is ("" when unknown) and
// known lists the members that would be read there, for a suggestion.
func (r *reader) ignore(at, key, what string, known []string) *core.Error {
	var msg string
	switch {
	case what != "":
		msg = "ignored: " + what
	default:
		msg = "is not a member LemonMCP knows; ignored"
		if s := closest(key, known); s != "" {
			msg += " (did you mean " + jsonQuote(s) + "?)"
		}
	}
	if r.strict {
		return invalid(at+"."+key, strings.Replace(msg, "ignored", "refused under \"strict\"", 1))
	}
	r.warnings = append(r.warnings, at+"."+key+": "+msg)
	return nil
}

// typoHints are the "did you mean" notes for the members of m (at at)
// that the host does not know but one of known is close to: what the
// warnings say of them, for an error the typo may have caused.
func typoHints(at string, m map[string]any, known []string) []string {
	var hints []string
	for _, k := range sortedKeys(m) {
		if contains(known, k) || foreignKeys[k] != "" {
			continue
		}
		if s := closest(k, known); s != "" {
			hints = append(hints, at+"."+k+": is not a member LemonMCP knows (did you mean "+jsonQuote(s)+"?)")
		}
	}
	return hints
}

// withTypos adds hints (typoHints) to err, but for a member err already
// names (as "strict" refusing it does).
func withTypos(err *core.Error, hints []string) *core.Error {
	msg := err.Message
	for _, h := range hints {
		member := h[:strings.Index(h, ": ")+1] // "config.mcpServers.x.comand:"
		if !strings.Contains(msg, member) {
			msg += "; " + h
		}
	}
	if msg == err.Message {
		return err
	}
	return &core.Error{Status: err.Status, Message: msg}
}

// parseInputs reads VS Code's "inputs" declarations:
// [{"type","id","description","password","default"?}, ...]. Only "id" and
// "default" matter here (LemonMCP never prompts).
func (r *reader) parseInputs(v any) *core.Error {
	arr, ok := v.([]any)
	if !ok {
		return invalid("config.inputs", "must be an array of input declarations ({\"id\", ...})")
	}
	r.inputs = map[string]inputDecl{}
	for i, item := range arr {
		at := "config.inputs[" + itoa(i) + "]"
		m, ok := item.(map[string]any)
		if !ok {
			return invalid(at, "must be a JSON object with an \"id\"")
		}
		id, ok := m["id"].(string)
		if !ok || id == "" {
			return invalid(at+".id", "must be a non-empty string")
		}
		d := inputDecl{}
		if def, ok := m["default"].(string); ok {
			d.def, d.hasDefault = def, true
		}
		r.inputs[id] = d
	}
	return nil
}

// closest is the member of known nearest to key (at most two edits, or a
// difference of case), or "".
func closest(key string, known []string) string {
	best, bestD := "", 3
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	for _, k := range sorted {
		if strings.EqualFold(k, key) {
			return k
		}
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// globEscape makes a tool name a glob that matches only itself.
func globEscape(name string) string {
	var b strings.Builder
	for _, c := range name {
		if c == '*' || c == '?' || c == '[' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
