package helper

import (
	"os"
	"path/filepath"
	"strings"
)

// Landlock grants access beneath the directories a rule names; it has no
// "everything except". So "read everything but denyRead" is built by
// enumeration: a directory with no denied path beneath it gets one rule;
// one that holds a denied path is not granted itself, but each of its
// entries is, recursively, skipping the denied ones. The costs, written
// in docs/sandbox.md: a partially denied directory cannot be listed, and
// an entry created in it after the server started is not readable.

// fsRule grants access beneath path.
type fsRule struct {
	path   string
	access uint64
}

// devices are the character devices every program may read and write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// fsRules computes the rules for reads everywhere but beneath readDeny and
// writes beneath write but not beneath writeDeny (nor denied, the whole
// denyRead list, hidden by mounts or not).
func fsRules(handled uint64, readDeny, allDenied, write, writeDeny []string) []fsRule {
	noRead := canonical(readDeny)
	noWrite := append(canonical(writeDeny), canonical(allDenied)...)
	var rules []fsRule
	grant(&rules, "/", fsRead, noRead)
	for _, w := range write {
		if real, err := filepath.EvalSymlinks(w); err == nil {
			grant(&rules, real, handled&^fsRead, noWrite)
		}
	}
	for _, d := range devices {
		if !denied(d, noWrite) {
			rules = append(rules, fsRule{d, handled & fileRights})
		}
	}
	return rules
}

// canonical cleans each path and adds its resolved form: a denial of
// ~/link must also hold for the directory the link points to.
func canonical(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		out = append(out, p)
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			out = append(out, real)
		}
	}
	return out
}

// beneath reports whether path is dir or lies beneath it.
func beneath(path, dir string) bool {
	if dir == "/" || path == dir {
		return true
	}
	return strings.HasPrefix(path, dir+"/")
}

func denied(path string, excluded []string) bool {
	for _, e := range excluded {
		if beneath(path, e) {
			return true
		}
	}
	return false
}

// grant adds rules for access beneath path except beneath excluded.
func grant(rules *[]fsRule, path string, access uint64, excluded []string) {
	if denied(path, excluded) {
		return
	}
	holds := false
	for _, e := range excluded {
		if beneath(e, path) {
			holds = true
			break
		}
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return
	}
	if !fi.IsDir() {
		if fi.Mode()&os.ModeSymlink == 0 { // a symlink's target is granted, or not, where it lies
			*rules = append(*rules, fsRule{path, access & fileRights})
		}
		return
	}
	if !holds {
		*rules = append(*rules, fsRule{path, access})
		return
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return
	}
	for _, e := range entries {
		grant(rules, filepath.Join(path, e.Name()), access, excluded)
	}
}
