package frontmatter

import (
	"errors"
	"strings"
)

// blockScalar reads a literal (|) or folded (>) block scalar whose header
// is on line l and whose parent node sits at indent. The header may carry a
// chomping indicator (- strip, + keep; clip by default) and an indentation
// indicator digit, in either order.
func (p *fmParser) blockScalar(l fmLine, indent int, header string) (string, error) {
	folded := header[0] == '>'
	chomp, explicit := byte(0), 0
	h := stripComment(header[1:])
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return "", p.errAt(l, "an invalid block scalar header %q", header)
		}
	}

	// The block is every following line that is blank or indented past
	// the parent. Comment-looking lines inside it are content.
	end := p.pos
	for end < len(p.lines) && (p.lines[end].blank() || p.lines[end].indent > indent) {
		end++
	}
	block := p.lines[p.pos:end]
	contentIndent := indent + explicit
	if explicit == 0 {
		contentIndent = -1
		for _, bl := range block {
			if !bl.blank() {
				contentIndent = bl.indent
				break
			}
		}
	}
	var lines []string
	for _, bl := range block {
		switch {
		case bl.blank():
			if contentIndent > 0 && len(bl.raw) > contentIndent {
				lines = append(lines, bl.raw[contentIndent:])
			} else {
				lines = append(lines, "")
			}
		case bl.indent < contentIndent:
			return "", p.errAt(bl, "a block scalar line indented less than its first line")
		default:
			lines = append(lines, strings.TrimSuffix(bl.raw[contentIndent:], "\r"))
		}
	}
	p.pos = end

	// Trailing empty lines are the chomping indicator's business.
	n := len(lines)
	for n > 0 && strings.TrimLeft(lines[n-1], " ") == "" {
		n--
	}
	trailing := len(lines) - n
	lines = lines[:n]

	var body string
	if folded {
		body = foldLines(lines)
	} else {
		body = strings.Join(lines, "\n")
	}
	switch {
	case chomp == '-' || n == 0 && chomp != '+':
		return body, nil
	case chomp == '+':
		if n == 0 {
			return strings.Repeat("\n", trailing), nil
		}
		return body + strings.Repeat("\n", 1+trailing), nil
	}
	return body + "\n", nil
}

// foldLines joins a folded scalar's lines: a single break between two
// lines of ordinary text becomes a space, n empty lines become n breaks,
// and breaks next to more-indented lines are kept.
func foldLines(lines []string) string {
	var b strings.Builder
	first, prevNormal, empties := true, false, 0
	for _, line := range lines {
		if line == "" {
			empties++
			continue
		}
		normal := line[0] != ' ' && line[0] != '\t'
		switch {
		case first:
			b.WriteString(strings.Repeat("\n", empties))
		case prevNormal && normal && empties == 0:
			b.WriteByte(' ')
		case prevNormal && normal:
			b.WriteString(strings.Repeat("\n", empties))
		default:
			b.WriteString(strings.Repeat("\n", empties+1))
		}
		b.WriteString(line)
		first, prevNormal, empties = false, normal, 0
	}
	return b.String()
}

// flow reads the flow collections the parser takes: "{}", "[]", and a
// one-line sequence of scalars such as [Read, "Grep", 'Bash(git:*)'].
func flow(s string) (any, error) {
	if s[0] == '{' {
		if rest := strings.TrimLeft(s[1:], " "); strings.HasPrefix(rest, "}") && stripComment(rest[1:]) == "" {
			return map[string]any{}, nil
		}
		return nil, errors.New("a flow mapping (only {} is taken)")
	}
	out := []any{}
	rest := strings.TrimLeft(s[1:], " ")
	if strings.HasPrefix(rest, "]") {
		if stripComment(rest[1:]) != "" {
			return nil, errors.New("text after a flow sequence")
		}
		return out, nil
	}
	for {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			return nil, errors.New("a flow sequence that does not close on its line")
		}
		var item any
		switch rest[0] {
		case '"', '\'':
			s, after, err := quoted(rest)
			if err != nil {
				return nil, err
			}
			item, rest = s, strings.TrimLeft(after, " ")
		case '[', '{', '&', '*', '!', '|', '>', '?', ',', ']':
			return nil, errors.New("a flow sequence item that is not a plain or quoted scalar")
		default:
			i := strings.IndexAny(rest, ",]")
			if i < 0 {
				return nil, errors.New("a flow sequence that does not close on its line")
			}
			text := strings.TrimRight(rest[:i], " ")
			if strings.ContainsAny(text, "[{}#") || strings.Contains(text, ": ") {
				return nil, errors.New("a flow sequence item that is not a plain or quoted scalar")
			}
			item, rest = resolvePlain(text), rest[i:]
		}
		out = append(out, item)
		switch {
		case strings.HasPrefix(rest, ","):
			rest = rest[1:]
		case strings.HasPrefix(rest, "]"):
			if stripComment(rest[1:]) != "" {
				return nil, errors.New("text after a flow sequence")
			}
			return out, nil
		default:
			return nil, errors.New("a flow sequence item followed by neither , nor ]")
		}
	}
}
