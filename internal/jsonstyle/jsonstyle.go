package jsonstyle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
)

// Style says how Restyle writes JSON: the ways real servers (Python's
// json.dumps, JavaScript's JSON.stringify with an indent, hand-written
// ones) differ from the compact form this library sends.
type Style struct {
	Spaces       bool // ", " and ": " (json.dumps defaults)
	Indent       bool // one member per line, two-space indent
	CRLF         bool // line breaks are "\r\n" (with Indent)
	ReverseKeys  bool // members in reverse order
	EscapeAll    bool // every non-ASCII rune (and some ASCII) as \uXXXX
	NumberSpells bool // integers as 1.0e0, 10e-1 and the like
	Rand         *rand.Rand
}

// Random picks a style from r; r also drives the per-value choices
// (number spellings, which ASCII letters are escaped).
func Random(r *rand.Rand) Style {
	return Style{
		Spaces: r.Intn(2) == 0, Indent: r.Intn(2) == 0, CRLF: r.Intn(2) == 0,
		ReverseKeys: r.Intn(2) == 0, EscapeAll: r.Intn(2) == 0, NumberSpells: r.Intn(2) == 0, Rand: r,
	}
}

// Restyle re-serialises one JSON text in style s. It panics on invalid
// input: callers pass what an encoder produced or a recorded message.
func Restyle(data []byte, s Style) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	s.value(dec, &out, 0)
	return out.Bytes()
}

func (s Style) newline(out *bytes.Buffer, depth int) {
	if !s.Indent {
		return
	}
	if s.CRLF {
		out.WriteString("\r\n")
	} else {
		out.WriteByte('\n')
	}
	for i := 0; i < depth; i++ {
		out.WriteString("  ")
	}
}

type member struct {
	key string
	val []byte
}

func (s Style) value(dec *json.Decoder, out *bytes.Buffer, depth int) {
	tok, err := dec.Token()
	if err != nil {
		panic(fmt.Sprintf("restyle: %v", err))
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var members []member
			for dec.More() {
				k, _ := dec.Token()
				var v bytes.Buffer
				s.value(dec, &v, depth+1)
				members = append(members, member{k.(string), v.Bytes()})
			}
			dec.Token() // '}'
			members = lastOfEachName(members)
			if s.ReverseKeys {
				for i, j := 0, len(members)-1; i < j; i, j = i+1, j-1 {
					members[i], members[j] = members[j], members[i]
				}
			}
			out.WriteByte('{')
			for i, m := range members {
				if i > 0 {
					s.comma(out)
				}
				s.newline(out, depth+1)
				s.str(out, m.key)
				out.WriteByte(':')
				if s.Spaces || s.Indent {
					out.WriteByte(' ')
				}
				out.Write(m.val)
			}
			if len(members) > 0 {
				s.newline(out, depth)
			}
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			n := 0
			for dec.More() {
				if n > 0 {
					s.comma(out)
				}
				s.newline(out, depth+1)
				s.value(dec, out, depth+1)
				n++
			}
			dec.Token() // ']'
			if n > 0 {
				s.newline(out, depth)
			}
			out.WriteByte(']')
		}
	case string:
		s.str(out, t)
	case json.Number:
		out.WriteString(s.number(t))
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
}

func (s Style) comma(out *bytes.Buffer) {
	out.WriteByte(',')
	if s.Spaces && !s.Indent {
		out.WriteByte(' ')
	}
}

// number spells an integer another valid way; other numbers keep their text.
func (s Style) number(n json.Number) string {
	i, err := strconv.ParseInt(string(n), 10, 64)
	if !s.NumberSpells || err != nil {
		return string(n)
	}
	switch s.pick(3) {
	case 0:
		return strconv.FormatInt(i, 10) + ".0e0"
	case 1:
		if i == 0 {
			return "0E+0"
		}
		return strconv.FormatInt(i, 10) + "0e-1"
	default:
		return strconv.FormatInt(i, 10) + ".00"
	}
}

func (s Style) pick(n int) int {
	if s.Rand == nil {
		return 0
	}
	return s.Rand.Intn(n)
}

// str writes a string literal, escaping every non-ASCII rune as \uXXXX
// (surrogate pairs beyond the BMP) when escapeAll is set, and then some
// ASCII letters too.
func (s Style) str(out *bytes.Buffer, v string) {
	if !s.EscapeAll {
		b, _ := json.Marshal(v)
		out.Write(bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<")), []byte(`\u003e`), []byte(">")))
		return
	}
	out.WriteByte('"')
	for _, r := range v {
		switch {
		case r == '"' || r == '\\':
			out.WriteByte('\\')
			out.WriteRune(r)
		case r < 0x20 || r >= 0x7f || (r >= 'a' && r <= 'z' && s.pick(4) == 0):
			if r >= 0x10000 {
				r -= 0x10000
				fmt.Fprintf(out, `\u%04x\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(out, `\u%04x`, r)
			}
		default:
			out.WriteRune(r)
		}
	}
	out.WriteByte('"')
}

// lastOfEachName drops members a later one of the same name overrides (as
// every decoder here does), so that reordering keeps the meaning.
func lastOfEachName(members []member) []member {
	seen := map[string]bool{}
	var out []member
	for i := len(members) - 1; i >= 0; i-- {
		if !seen[members[i].key] {
			seen[members[i].key] = true
			out = append([]member{members[i]}, out...)
		}
	}
	return out
}

// Parse reads a style list such as "python,crlf,reverse": python (spaces
// after ':' and ','), pretty (indent), crlf, reverse (member order),
// escape (\u escapes for non-ASCII), numbers (integers as 1.0e0), all.
func Parse(list string) (Style, error) {
	var s Style
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "":
		case "python":
			s.Spaces = true
		case "pretty":
			s.Indent = true
		case "crlf":
			s.CRLF = true
		case "reverse":
			s.ReverseKeys = true
		case "escape":
			s.EscapeAll = true
		case "numbers":
			s.NumberSpells = true
		case "all":
			s = Style{Spaces: true, Indent: true, CRLF: true, ReverseKeys: true, EscapeAll: true, NumberSpells: true}
		default:
			return s, fmt.Errorf("unknown JSON style %q", name)
		}
	}
	return s, nil
}
