package sandbox

import (
	_ "embed"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// domainRules holds allowedDomains and deniedDomains. An entry is a name
// ("example.com"), a wildcard ("*.example.com": every subdomain, not
// example.com itself) or an address ("127.0.0.1", "::1"), each optionally
// with a port ("registry.example:8443", "127.0.0.1:4873", "[::1]:4873"),
// which then matches that port only.
type domainRules struct {
	allowed, denied []string
}

// domainEntry is one entry of the lists, parsed.
type domainEntry struct {
	host string // lower case, no trailing dot; an address in its canonical form
	port string // "" for any port
}

// parseDomainEntry splits an entry into its host and port and says what
// is wrong with it, in the words a user needs to fix it.
func parseDomainEntry(entry string) (domainEntry, error) {
	e := strings.TrimSpace(entry)
	switch {
	case e == "":
		return domainEntry{}, errors.New("names no host")
	case strings.Contains(e, "://"):
		return domainEntry{}, errors.New("write the host name, not a URL (\"registry.npmjs.org\", not \"http://registry.npmjs.org\")")
	case strings.Contains(e, "/"):
		return domainEntry{}, errors.New("write the host name alone, without a path or a trailing slash")
	case e == "*":
		return domainEntry{}, errors.New("\"*\" alone would allow every domain: list the names the server needs")
	}
	host, port := e, ""
	switch {
	case strings.HasPrefix(e, "["):
		if !strings.Contains(e, "]:") {
			if !strings.HasSuffix(e, "]") {
				return domainEntry{}, errors.New("is not an address in brackets with a port (\"[::1]:4873\")")
			}
			host = strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")
			break
		}
		var err error
		if host, port, err = net.SplitHostPort(e); err != nil {
			return domainEntry{}, errors.New("is not an address in brackets with a port (\"[::1]:4873\")")
		}
	case strings.Count(e, ":") == 1:
		host, port, _ = strings.Cut(e, ":")
	case strings.Count(e, ":") > 1 && !isAddr(e):
		return domainEntry{}, errors.New("an IPv6 address with a port takes brackets (\"[2001:db8::1]:443\")")
	}
	if port != "" || strings.HasSuffix(e, ":") {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return domainEntry{}, errors.New("the port must be a number from 1 to 65535")
		}
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return domainEntry{}, errors.New("names no host")
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Zone() != "" {
		// fe80::1%eth0: a zone names one of the machine's interfaces,
		// which only a link-local address needs.
		if a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() {
			return domainEntry{}, errLinkLocal
		}
		return domainEntry{}, errors.New("carries an interface zone (%" + a.Zone() + "): write the address alone")
	}
	if ip := net.ParseIP(host); ip != nil {
		if a, _ := reached(ip); a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() {
			return domainEntry{}, errLinkLocal
		}
		if addressClass(ip) == classNever {
			return domainEntry{}, errors.New("is a multicast, broadcast or reserved address, which the proxy never dials")
		}
		return domainEntry{host: ip.String(), port: port}, nil
	}
	if strings.HasPrefix(e, "[") {
		return domainEntry{}, errors.New("holds no IPv6 address between its brackets")
	}
	name := host
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		name = rest
		if publicSuffix(rest) {
			return domainEntry{}, errors.New("covers a whole top-level domain or public suffix (" + rest +
				"): name the domains the server needs, or a wildcard beneath one (\"*.example." + lastLabel(rest) + "\")")
		}
	}
	if !validName(name) {
		if strings.Contains(name, "*") {
			return domainEntry{}, errors.New("a wildcard is written \"*.example.com\", in front only")
		}
		return domainEntry{}, errors.New("is not a host name (letters, digits, '-', '_' and dots)")
	}
	return domainEntry{host: host, port: port}, nil
}

var errLinkLocal = errors.New("is a link-local address (cloud metadata lives there), which the sandbox never reaches")

// isAddr reports whether s is an IP address, an IPv6 zone allowed.
func isAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

func lastLabel(name string) string { return name[strings.LastIndexByte(name, '.')+1:] }

// validName reports whether name is a DNS name: dot-separated labels of
// letters, digits, '-' and '_', each 1 to 63 bytes, 253 in all.
func validName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c >= 0x80) {
				return false
			}
		}
	}
	return true
}

// loopback reports whether the entry names this machine's loopback.
func (e domainEntry) loopback() bool {
	if e.host == "localhost" {
		return true
	}
	ip := net.ParseIP(e.host)
	return ip != nil && ip.IsLoopback()
}

// CheckDomain says what is wrong with an allowedDomains or deniedDomains
// entry (err), or what it grants beyond what it may seem to (warning, for
// the server's warnings): a bare "localhost" opens every port of the
// machine's loopback.
func CheckDomain(entry string) (warning string, err error) {
	e, err := parseDomainEntry(entry)
	if err != nil {
		return "", err
	}
	if e.loopback() && e.port == "" {
		return entry + " lets the server reach every port of this machine's loopback; " +
			"\"" + entry + ":PORT\" (such as \"localhost:8080\") names one service", nil
	}
	return "", nil
}

// matches reports whether the entry covers host:port (host already in
// the entry's form).
func (e domainEntry) matches(host, port string) bool {
	if e.port != "" && e.port != port {
		return false
	}
	if rest, ok := strings.CutPrefix(e.host, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	if e.host == "localhost" {
		ip := net.ParseIP(host)
		return host == "localhost" || ip != nil && ip.IsLoopback()
	}
	return host == e.host
}

// normalHost puts a requested host in the entries' form.
func normalHost(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	return host
}

// reach is which internal addresses a request may be dialled to, by the
// entry that allowed it.
type reach struct {
	permitted bool
	// rule names the entry that decided, for a refusal's warning.
	rule string
	// loopback: an entry that names this machine (localhost, 127.0.0.1,
	// ::1, with a port or not: the user chose the machine itself).
	loopback bool
	// private: an exact name the user wrote (a company's registry), or an
	// address, may resolve to a private network. Wildcards may not: their
	// names are the DNS owner's to point anywhere (rebinding).
	private bool
}

// match finds the entries covering host:port: permitted when an allowed
// one does and no denied one does. Entries that do not parse (the
// configuration refuses them) match nothing.
func (d domainRules) match(host, port string) reach {
	host = normalHost(host)
	if host == "" {
		return reach{rule: "no host"}
	}
	for _, a := range d.denied {
		if e, err := parseDomainEntry(a); err == nil && e.matches(host, port) {
			return reach{rule: "deniedDomains " + a}
		}
	}
	r := reach{rule: "not in allowedDomains"}
	for _, a := range d.allowed {
		e, err := parseDomainEntry(a)
		if err != nil || !e.matches(host, port) {
			continue
		}
		r.permitted, r.rule = true, "allowedDomains "+a
		wildcard := strings.HasPrefix(e.host, "*.")
		r.loopback = r.loopback || e.loopback()
		r.private = r.private || !wildcard && !e.loopback()
	}
	return r
}

//go:embed public_suffixes.txt
var publicSuffixList string

// suffixRules is the ICANN section of the Public Suffix List
// (publicsuffix.org, from Debian's publicsuffix 20230209), shipped in the
// library so the check needs no network: the rules ("co.uk"), the
// wildcards ("*.ck") and the exceptions ("!www.ck").
var suffixRules = sync.OnceValue(func() map[string]byte {
	m := map[string]byte{}
	for _, line := range strings.Split(publicSuffixList, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "!"):
			m[line[1:]] = '!'
		case strings.HasPrefix(line, "*."):
			m[line[2:]] = '*'
		default:
			if m[line] == 0 {
				m[line] = '='
			}
		}
	}
	return m
})

// publicSuffix reports whether name is a public suffix: a top-level domain
// (known or not: any single label), a rule of the list, or a name under a
// wildcard rule that no exception names.
func publicSuffix(name string) bool {
	if !strings.Contains(name, ".") {
		return true
	}
	rules := suffixRules()
	if k, ok := rules[name]; ok && k != '!' {
		return true
	}
	if rules[name] == '!' {
		return false
	}
	_, parent, _ := strings.Cut(name, ".")
	return rules[parent] == '*'
}
