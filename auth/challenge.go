package auth

import (
	"strings"
)

// challenge is one parsed WWW-Authenticate challenge (RFC 9110 §11.6.1).
type challenge struct {
	scheme string            // lower-cased
	params map[string]string // lower-cased names
}

// bearerChallenge is what the library acts on: the Bearer challenge's
// parameters plus the raw header for the host.
type bearerChallenge struct {
	raw              string
	resourceMetadata string
	scope            []string
	err              string
	errorDescription string
	dpopErr          string // the DPoP challenge's error (use_dpop_nonce), when there is one
}

// parseBearer picks the Bearer challenge from the WWW-Authenticate header
// values (several headers and several challenges per header are allowed).
// When no Bearer challenge exists, a resource_metadata parameter of any
// other challenge is still used for discovery: it names the server's PRM no
// matter which scheme carries it.
func parseBearer(values []string) *bearerChallenge {
	bc := &bearerChallenge{raw: strings.Join(values, ", ")}
	var all []challenge
	for _, v := range values {
		all = append(all, parseChallenges(v)...)
	}
	var pick, dpop *challenge
	for i := range all {
		switch all[i].scheme {
		case "bearer":
			if pick == nil {
				pick = &all[i]
			}
		case "dpop":
			if dpop == nil {
				dpop = &all[i]
			}
		}
	}
	if dpop != nil {
		bc.dpopErr = dpop.params["error"]
		if pick == nil {
			// A DPoP-only server (RFC 9449 §7.1): its challenge carries
			// the same parameters.
			pick = dpop
		}
	}
	if pick == nil {
		for i := range all {
			if all[i].params["resource_metadata"] != "" {
				bc.resourceMetadata = all[i].params["resource_metadata"]
				break
			}
		}
		return bc
	}
	bc.resourceMetadata = pick.params["resource_metadata"]
	if sc := strings.Fields(pick.params["scope"]); len(sc) > 0 {
		bc.scope = sc
	}
	bc.err = pick.params["error"]
	bc.errorDescription = pick.params["error_description"]
	return bc
}

// parseChallenges parses one header value into challenges. It is lenient:
// a malformed part ends the parse and what was read so far is kept.
func parseChallenges(s string) []challenge {
	var out []challenge
	p := &hparser{s: s}
	for {
		p.skipSep()
		if p.eof() {
			return out
		}
		name := p.token()
		if name == "" {
			return out // not a token where one must be: stop
		}
		ch := challenge{scheme: strings.ToLower(name), params: map[string]string{}}
		p.skipSpace()
		// After the scheme: a token68, or auth-params, or nothing.
		if !p.eof() && p.peek() != ',' {
			save := p.i
			tok := p.token68()
			p.skipSpace()
			if tok != "" && (p.eof() || p.peek() == ',') && !looksLikeParam(tok) {
				// token68 (e.g. "Basic dXNlcg=="): nothing for us in it.
			} else {
				p.i = save
			}
		}
		// auth-params, comma separated, until something that is not
		// name=value (which begins the next challenge).
		for {
			p.skipSep()
			if p.eof() {
				break
			}
			save := p.i
			k := p.token()
			p.skipSpace()
			if k == "" || p.eof() || p.peek() != '=' {
				p.i = save
				break
			}
			p.i++ // '='
			p.skipSpace()
			var v string
			if !p.eof() && p.peek() == '"' {
				v = p.quoted()
			} else {
				v = p.token()
			}
			lk := strings.ToLower(k)
			if _, dup := ch.params[lk]; !dup {
				ch.params[lk] = v
			}
		}
		out = append(out, ch)
	}
}

// looksLikeParam reports a token68 candidate that is really "name=value".
func looksLikeParam(t string) bool {
	i := strings.IndexByte(t, '=')
	return i > 0 && i < len(t)-1 && strings.Trim(t[i:], "=") != ""
}

type hparser struct {
	s string
	i int
}

func (p *hparser) eof() bool  { return p.i >= len(p.s) }
func (p *hparser) peek() byte { return p.s[p.i] }

func (p *hparser) skipSpace() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *hparser) skipSep() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func isTChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *hparser) token() string {
	st := p.i
	for !p.eof() && isTChar(p.s[p.i]) {
		p.i++
	}
	return p.s[st:p.i]
}

func (p *hparser) token68() string {
	st := p.i
	for !p.eof() && (isTChar(p.s[p.i]) || p.s[p.i] == '/' || p.s[p.i] == '=') {
		p.i++
	}
	return p.s[st:p.i]
}

// quoted reads a quoted-string, undoing backslash escapes; an unterminated
// string takes the rest of the header.
func (p *hparser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if !p.eof() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
