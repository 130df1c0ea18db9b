package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// stripJSONC turns JSON with comments (VS Code's mcp.json and settings are
// JSONC: // and /* */ comments, trailing commas) into JSON. Comments become
// spaces and newlines stay, so a syntax error's line and column still point
// into the file as written. Text inside strings is never touched.
func stripJSONC(raw []byte) []byte {
	if bytes.IndexByte(raw, '/') < 0 && bytes.IndexByte(raw, ',') < 0 {
		return raw
	}
	out := make([]byte, len(raw))
	copy(out, raw)
	blankComments(out)
	dropTrailingCommas(out)
	return out
}

// outsideStrings calls fn with each index of b outside a JSON string; fn
// returns how many further bytes to skip.
func outsideStrings(b []byte, fn func(i int) int) {
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		default:
			i += fn(i)
		}
	}
}

func blankComments(b []byte) {
	outsideStrings(b, func(i int) int {
		if b[i] != '/' || i+1 >= len(b) {
			return 0
		}
		end := len(b)
		switch b[i+1] {
		case '/':
			if n := bytes.IndexByte(b[i:], '\n'); n >= 0 {
				end = i + n
			}
		case '*':
			n := bytes.Index(b[i+2:], []byte("*/"))
			if n < 0 {
				return 0 // unterminated: the parser reports it
			}
			end = i + 2 + n + 2
		default:
			return 0
		}
		for j := i; j < end; j++ {
			if b[j] != '\n' {
				b[j] = ' '
			}
		}
		return end - i - 1
	})
}

func dropTrailingCommas(b []byte) {
	outsideStrings(b, func(i int) int {
		if b[i] != ',' {
			return 0
		}
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
			j++
		}
		if j < len(b) && (b[j] == '}' || b[j] == ']') {
			b[i] = ' '
		}
		return 0
	})
}

// syntaxWhere names the line and column of a JSON syntax error in raw,
// or "" when err does not say.
func syntaxWhere(raw []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return ""
	}
	off := int(se.Offset)
	if off > len(raw) {
		off = len(raw)
	}
	line := 1 + bytes.Count(raw[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(raw[:off], '\n')
	return " at line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) + ": " + se.Error()
}
