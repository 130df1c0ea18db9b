package hiddenchars

import (
	"strings"
	"unicode/utf8"
)

// Finding kinds.
const (
	KindHidden = "hidden_characters" // tag, bidi, invisible or control characters
	KindANSI   = "ansi_escape"       // a terminal escape sequence
)

// Counts says how many characters (hidden) and escape sequences (ansi) a
// clean removed.
type Counts struct {
	Hidden int
	ANSI   int
}

// Zero reports whether nothing was removed.
func (c Counts) Zero() bool { return c.Hidden == 0 && c.ANSI == 0 }

const (
	esc        = 0x1b
	c1CSI      = 0x9b // the one-character form of ESC [
	c1OSC      = 0x9d // of ESC ]
	blackFlag  = 0x1F3F4
	tagFirst   = 0xE0000
	tagLast    = 0xE007F
	tagCancel  = 0xE007F
	tagSpecLow = 0xE0020 // the tag characters an emoji tag sequence spells with
	tagSpecHi  = 0xE007E
)

// hidden reports whether r is removed wherever it appears (tags are
// decided by their context, escapes by sequenceEnd).
func hidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f: // C0 controls and DEL
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	case r == 0x200b, r == 0xfeff: // zero-width space, BOM / zero-width no-break space
		return true
	case r >= 0x2060 && r <= 0x2064: // word joiner, invisible operators
		return true
	}
	return false
}

// suspect reports whether s may hold anything Clean removes: a byte that
// is a control, or a multi-byte character (every removed character above
// U+007F is one).
func suspect(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x80 || (b < 0x20 && b != '\t' && b != '\n') || b == 0x7f {
			return true
		}
	}
	return false
}

// Clean returns s without its hidden characters and escape sequences, and
// what it removed. Text with nothing to remove is returned as it is,
// without allocating.
func Clean(s string) (string, Counts) {
	var n Counts
	if !suspect(s) {
		return s, n
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == esc || r == c1CSI || r == c1OSC:
			i = sequenceEnd(s, i, size)
			n.ANSI++
			continue
		case r == blackFlag:
			if end := emojiTagEnd(s, i+size); end > 0 {
				b.WriteString(s[i:end])
				i = end
				continue
			}
			b.WriteRune(r)
		case r >= tagFirst && r <= tagLast:
			n.Hidden++
		case r == utf8.RuneError && size == 1:
			n.Hidden++ // not UTF-8: never passed on
		case hidden(r):
			n.Hidden++
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), n
}

// emojiTagEnd is the end of a valid emoji tag sequence whose tag
// characters start at i (after a black flag): one or more tag characters
// U+E0020–E007E and the cancel tag U+E007F. 0: none there.
func emojiTagEnd(s string, i int) int {
	count := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= tagSpecLow && r <= tagSpecHi:
			count++
			i += size
		case r == tagCancel && count > 0:
			return i + size
		default:
			return 0
		}
	}
	return 0
}

// sequenceEnd is where the escape sequence starting at i (its introducer
// size bytes long) ends: CSI (ESC [ or U+009B) runs to its final byte
// 0x40–0x7E; OSC (ESC ] or U+009D) to BEL or ESC \; any other ESC takes the
// character after it. A sequence cut short by the end of the text ends
// there.
func sequenceEnd(s string, i, size int) int {
	r, _ := utf8.DecodeRuneInString(s[i:])
	j := i + size
	kind := r
	if r == esc {
		if j >= len(s) {
			return j
		}
		switch s[j] {
		case '[':
			kind, j = c1CSI, j+1
		case ']':
			kind, j = c1OSC, j+1
		default:
			_, sz := utf8.DecodeRuneInString(s[j:])
			return j + sz
		}
	}
	if kind == c1CSI {
		for j < len(s) {
			c := s[j]
			j++
			if c >= 0x40 && c <= 0x7e {
				return j
			}
			if c < 0x20 || c >= 0x80 {
				// Not a parameter or intermediate byte: a malformed
				// sequence ends before it.
				return j - 1
			}
		}
		return j
	}
	// OSC: up to BEL or ST (ESC \), bounded by the text.
	for j < len(s) {
		switch {
		case s[j] == 0x07:
			return j + 1
		case s[j] == esc && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		case s[j] == '\n':
			return j
		}
		j++
	}
	return j
}

// Strip is Clean without the counts.
func Strip(s string) string {
	out, _ := Clean(s)
	return out
}
