package frontmatter

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Number is a plain scalar the core schema resolves to a number, kept
// exact so that it compares with a JSON number without rounding. Rat is nil
// for .inf and .nan, which no JSON number equals.
type Number struct{ Rat *big.Rat }

type fmLine struct {
	n      int    // 1-based line number within the file
	raw    string // the line without its line break
	indent int    // leading spaces
	text   string // raw without the leading spaces and trailing whitespace
}

func (l fmLine) blank() bool   { return l.text == "" }
func (l fmLine) comment() bool { return strings.HasPrefix(l.text, "#") }

type fmParser struct {
	lines []fmLine
	pos   int
}

// ErrNoFrontmatter: the text does not open with a "---" line.
var ErrNoFrontmatter = errors.New("the file does not begin with a YAML frontmatter block (a --- line)")

// Parse parses the frontmatter block that opens text: a "---" line, YAML,
// and a closing "---" (or "...") line. The block must be a mapping. Values
// are nil, bool, Number, string, []any and map[string]any.
func Parse(text string) (map[string]any, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	rows := strings.Split(text, "\n")
	if len(rows) == 0 || strings.TrimRight(rows[0], " \t\r") != "---" {
		return nil, ErrNoFrontmatter
	}
	p := &fmParser{}
	closed := false
	for i := 1; i < len(rows); i++ {
		raw := strings.TrimSuffix(rows[i], "\r")
		if t := strings.TrimRight(raw, " \t"); t == "---" || t == "..." {
			closed = true
			break
		}
		l := fmLine{n: i + 1, raw: raw}
		l.indent = len(raw) - len(strings.TrimLeft(raw, " "))
		l.text = strings.TrimRight(raw[l.indent:], " \t")
		if strings.HasPrefix(l.text, "\t") {
			return nil, p.errAt(l, "a tab in indentation")
		}
		p.lines = append(p.lines, l)
	}
	if !closed {
		return nil, errors.New("the YAML frontmatter block has no closing --- line")
	}
	if !p.skip() {
		return map[string]any{}, nil
	}
	l := p.lines[p.pos]
	if isSeqItem(l.text) {
		return nil, p.errAt(l, "the frontmatter is a sequence, not a mapping")
	}
	m, err := p.mapping(l.indent)
	if err != nil {
		return nil, err
	}
	if p.skip() {
		return nil, p.errAt(p.lines[p.pos], "unexpected indentation")
	}
	return m, nil
}

func (p *fmParser) errAt(l fmLine, format string, args ...any) error {
	return fmt.Errorf("YAML frontmatter line %d: %s", l.n, fmt.Sprintf(format, args...))
}

// skip moves past blank and comment lines and reports whether a line is
// left.
func (p *fmParser) skip() bool {
	for p.pos < len(p.lines) && (p.lines[p.pos].blank() || p.lines[p.pos].comment()) {
		p.pos++
	}
	return p.pos < len(p.lines)
}

func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// mapping parses the block mapping whose keys sit at indent.
func (p *fmParser) mapping(indent int) (map[string]any, error) {
	m := map[string]any{}
	for p.skip() {
		l := p.lines[p.pos]
		if l.indent < indent {
			break
		}
		if l.indent > indent {
			return nil, p.errAt(l, "unexpected indentation")
		}
		if isSeqItem(l.text) {
			return nil, p.errAt(l, "a sequence item where a mapping key was expected")
		}
		key, rest, err := splitKey(l.text)
		if err != nil {
			return nil, p.errAt(l, "%s", err.Error())
		}
		if _, dup := m[key]; dup {
			return nil, p.errAt(l, "the key %s appears twice", quoteShort(key))
		}
		p.pos++
		v, err := p.value(l, indent, rest)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	return m, nil
}

// value parses what follows "key:" (or "- ") on line l, whose node sits at
// indent: rest on the same line, or a nested block on the lines below.
func (p *fmParser) value(l fmLine, indent int, rest string) (any, error) {
	if rest = strings.TrimLeft(rest, " "); rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		s, after, err := quoted(rest)
		if err != nil {
			return nil, p.errAt(l, "%s", err.Error())
		}
		if stripComment(after) != "" {
			return nil, p.errAt(l, "text after a quoted scalar")
		}
		return s, nil
	}
	rest = stripComment(rest)
	if rest == "" {
		if !p.skip() {
			return nil, nil
		}
		next := p.lines[p.pos]
		switch {
		case next.indent > indent && isSeqItem(next.text):
			return p.sequence(next.indent)
		case next.indent > indent:
			return p.mapping(next.indent)
		case next.indent == indent && isSeqItem(next.text):
			// YAML lets a mapping's sequence value sit at the key's indent.
			return p.sequence(indent)
		}
		return nil, nil
	}
	switch rest[0] {
	case '|', '>':
		return p.blockScalar(l, indent, rest)
	case '[', '{':
		v, err := flow(rest)
		if err != nil {
			return nil, p.errAt(l, "%s", err.Error())
		}
		return v, nil
	case '&', '*', '!', '%', '@', '`', '?':
		return nil, p.errAt(l, "unsupported YAML syntax %q (anchors, aliases, tags, directives and complex keys are refused)", rest[0])
	}
	s, err := p.plain(l, indent, rest)
	if err != nil {
		return nil, err
	}
	return resolvePlain(s), nil
}

// sequence parses the block sequence whose "-" sit at indent.
func (p *fmParser) sequence(indent int) ([]any, error) {
	out := []any{}
	for p.skip() {
		l := p.lines[p.pos]
		if l.indent < indent || (l.indent == indent && !isSeqItem(l.text)) {
			break
		}
		if l.indent > indent {
			return nil, p.errAt(l, "unexpected indentation")
		}
		rest := strings.TrimLeft(l.text[1:], " ")
		col := l.indent + len(l.text) - len(rest)
		if _, _, err := splitKey(rest); err == nil && rest != "" && !strings.ContainsAny(rest[:1], "\"'[{|>") {
			// "- key: value": a mapping whose first key shares the item's
			// line; its other keys sit at the same column.
			p.lines[p.pos] = fmLine{n: l.n, raw: l.raw, indent: col, text: rest}
			m, err := p.mapping(col)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
			continue
		}
		p.pos++
		v, err := p.value(l, indent, rest)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// splitKey splits "key: rest" (a plain or quoted key).
func splitKey(text string) (key, rest string, err error) {
	if text == "" {
		return "", "", errors.New("an empty line where a key was expected")
	}
	if text[0] == '"' || text[0] == '\'' {
		k, after, qerr := quoted(text)
		if qerr != nil {
			return "", "", qerr
		}
		if after != ":" && !strings.HasPrefix(after, ": ") {
			return "", "", errors.New("a quoted key without a following colon")
		}
		return k, after[1:], nil
	}
	if strings.ContainsRune("-?[]{}&*!|>%@`#,", rune(text[0])) && !(text[0] == '-' && len(text) > 1 && text[1] != ' ') {
		return "", "", fmt.Errorf("unsupported YAML syntax %q where a key was expected", text[0])
	}
	i := strings.Index(text, ": ")
	if i < 0 {
		if !strings.HasSuffix(text, ":") {
			return "", "", errors.New("a line that is not a \"key: value\" pair")
		}
		i = len(text) - 1
	}
	if c := strings.Index(text, " #"); c >= 0 && c < i {
		return "", "", errors.New("a line that is not a \"key: value\" pair")
	}
	return strings.TrimRight(text[:i], " "), text[i+1:], nil
}

// stripComment trims surrounding blanks and a " #" comment off rest (never
// called on a quoted scalar: those are cut first).
func stripComment(rest string) string {
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, "#") {
		return ""
	}
	if i := strings.Index(rest, " #"); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimRight(rest, " \t")
}

// plain reads a plain scalar: rest, continued by the more-indented lines
// that follow (folded with spaces, a blank line becoming a line break).
func (p *fmParser) plain(l fmLine, indent int, rest string) (string, error) {
	if err := checkPlain(rest); err != nil {
		return "", p.errAt(l, "%s", err.Error())
	}
	var b strings.Builder
	b.WriteString(rest)
	for {
		j, breaks := p.pos, 0
		for j < len(p.lines) && p.lines[j].blank() {
			j, breaks = j+1, breaks+1
		}
		if j == len(p.lines) || p.lines[j].indent <= indent {
			return b.String(), nil
		}
		next := p.lines[j]
		if next.comment() {
			return "", p.errAt(next, "a comment inside a multi-line plain scalar")
		}
		if strings.Contains(next.text, " #") || checkPlain(next.text) != nil {
			return "", p.errAt(next, "a continuation line that is not plain text")
		}
		if breaks == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(strings.Repeat("\n", breaks))
		}
		b.WriteString(next.text)
		p.pos = j + 1
	}
}

// checkPlain refuses text a plain scalar cannot hold in block context.
func checkPlain(s string) error {
	if strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return errors.New("a plain scalar containing \": \" (quote it)")
	}
	return nil
}

// resolvePlain types a plain scalar by the YAML 1.2 core schema.
func resolvePlain(s string) any {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return Number{}
	}
	if isCoreInt(s) || isCoreFloat(s) {
		r := new(big.Rat)
		if strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "0x") {
			n, ok := new(big.Int).SetString(s, 0)
			if !ok {
				return s
			}
			return Number{r.SetInt(n)}
		}
		if _, ok := r.SetString(strings.TrimPrefix(s, "+")); ok {
			return Number{r}
		}
	}
	return s
}

func isCoreInt(s string) bool {
	switch {
	case strings.HasPrefix(s, "0o") && len(s) > 2:
		return allIn(s[2:], "01234567")
	case strings.HasPrefix(s, "0x") && len(s) > 2:
		return allIn(s[2:], "0123456789abcdefABCDEF")
	}
	d := strings.TrimLeft(s, "+-")
	return len(s)-len(d) <= 1 && d != "" && allIn(d, "0123456789")
}

// isCoreFloat: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
func isCoreFloat(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if exp == "" || !allIn(exp, "0123456789") {
			return false
		}
	}
	whole, frac, dot := strings.Cut(mant, ".")
	if !allIn(whole, "0123456789") || !allIn(frac, "0123456789") {
		return false
	}
	if dot {
		return whole != "" || frac != ""
	}
	return whole != ""
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// quoted reads a one-line quoted scalar at the start of s and returns it
// with what follows the closing quote.
func quoted(s string) (string, string, error) {
	if s[0] == '\'' {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '\'' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:], nil
		}
		return "", "", errors.New("a single-quoted scalar that does not close on its line (multi-line quoted scalars are refused)")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			return b.String(), s[i+1:], nil
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) {
			break
		}
		i++
		if r, ok := simpleEscapes[s[i]]; ok {
			b.WriteRune(r)
			continue
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
		if width == 0 || i+width >= len(s) {
			return "", "", fmt.Errorf("an unknown escape \\%c in a double-quoted scalar", s[i])
		}
		n, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32)
		if err != nil || !utf8.ValidRune(rune(n)) {
			return "", "", errors.New("an invalid \\x, \\u or \\U escape in a double-quoted scalar")
		}
		b.WriteRune(rune(n))
		i += width
	}
	return "", "", errors.New("a double-quoted scalar that does not close on its line (multi-line quoted scalars are refused)")
}

var simpleEscapes = map[byte]rune{
	'0': 0, 'a': '\a', 'b': '\b', 't': '\t', '\t': '\t', 'n': '\n', 'v': '\v', 'f': '\f', 'r': '\r',
	'e': 0x1b, ' ': ' ', '"': '"', '/': '/', '\\': '\\', 'N': 0x85, '_': 0xa0, 'L': 0x2028, 'P': 0x2029,
}

// quoteShort quotes a key for an error message, cut to a sane length.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}
