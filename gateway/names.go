package gateway

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/lemonmcp/lemonmcp/host"
)

// maxExposedName is the longest tool or prompt name the gateway exposes:
// clients cap names at 64 characters (sparfenyuk/mcp-proxy#45).
const maxExposedName = 64

// boundName keeps a host name within maxExposedName: a longer one becomes
// its first characters, "_" and a hash of the whole, so it is the same on
// every listing and two long names stay distinct.
func boundName(name string) string {
	if len(name) <= maxExposedName {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	sum := strconv.FormatUint(uint64(h.Sum32()), 16)
	for len(sum) < 8 {
		sum = "0" + sum
	}
	return name[:maxExposedName-len(sum)-1] + "_" + sum
}

// target is what an exposed prompt name or resource URI stands for.
type target struct {
	server string
	name   string // the server's prompt name, resource URI or template
}

// nameTable maps exposed names to what they stand for, as the last
// listing of each kind made them; every field is replaced whole.
type nameTable struct {
	tools     map[string]toolTarget // exposed tool name → the host's name and server
	prompts   map[string]target
	resources map[string]target
	uris      map[target]string // (server, URI) → exposed URI, for updates and reads
	templates []templateTarget
}

type toolTarget struct {
	hostName string
	server   string
	original string // the server's own name of the tool
}

type templateTarget struct {
	exposed string
	target
	prefix string // the template's text before its first expression
}

// sharedPrefix marks a resource URI two servers share: "server+uri"
// names which one (a URI scheme may hold '+').
func sharedURI(server, uri string) string { return server + "+" + uri }

// splitShared reads a sharedURI back when server is one of the host's.
func splitShared(uri string, servers []string) (target, bool) {
	i := strings.Index(uri, "+")
	if i <= 0 {
		return target{}, false
	}
	for _, name := range servers {
		if name == uri[:i] {
			return target{name, uri[i+1:]}, true
		}
	}
	return target{}, false
}

// promptName exposes a prompt name: as the server has it unless two
// servers offer it, then server__name.
func promptName(server, name string, shared bool) string {
	if !shared {
		return boundName(name)
	}
	return boundName(server + host.Separator + name)
}

func templatePrefix(t string) string {
	if i := strings.IndexByte(t, '{'); i >= 0 {
		return t[:i]
	}
	return t
}
