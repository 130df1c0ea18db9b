package frontmatter

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

const skillMD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"

func num(s string) Number {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return Number{r}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		text string
		want map[string]any
	}{
		{"skill", "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nBody.\n",
			map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}},
		{"crlf and comments", "---\r\n# a comment\r\nname: x # trailing\r\n\r\nlicense: 'Apache-2.0'\r\n---\r\n",
			map[string]any{"name": "x", "license": "Apache-2.0"}},
		{"dots close", "---\nname: x\n...\nbody", map[string]any{"name": "x"}},
		{"empty block", "---\n---\n", map[string]any{}},
		{"quoted", "---\na: \"tab\\there \\u00e9 \\\"q\\\"\"\nb: 'it''s # not a comment'\n\"c d\": x\n---\n",
			map[string]any{"a": "tab\there é \"q\"", "b": "it's # not a comment", "c d": "x"}},
		{"core schema", "---\nn: ~\ne:\nt: true\nf: False\ni: 42\nneg: -7\nhex: 0x1F\noct: 0o17\nfl: 2.50\nexp: 1e3\nver: 2.1.0\nyes: yes\ninf: .inf\n---\n",
			map[string]any{"n": nil, "e": nil, "t": true, "f": false, "i": num("42"), "neg": num("-7"), "hex": num("31"), "oct": num("15"),
				"fl": num("2.5"), "exp": num("1000"), "ver": "2.1.0", "yes": "yes", "inf": Number{}}},
		{"nested mapping", "---\nname: x\nmetadata:\n  version: \"2.1.0\"\n  author: me\n---\n",
			map[string]any{"name": "x", "metadata": map[string]any{"version": "2.1.0", "author": "me"}}},
		{"sequences", "---\ntools:\n  - Read\n  - \"Grep\"\nsame:\n- a\n- b\nflow: [Read, 'Bash(git:*)', 3]\nempty: []\nnone: {}\n---\n",
			map[string]any{"tools": []any{"Read", "Grep"}, "same": []any{"a", "b"}, "flow": []any{"Read", "Bash(git:*)", num("3")}, "empty": []any{}, "none": map[string]any{}}},
		{"sequence of mappings", "---\nitems:\n  - name: a\n    size: 1\n  - name: b\n---\n",
			map[string]any{"items": []any{map[string]any{"name": "a", "size": num("1")}, map[string]any{"name": "b"}}}},
		{"multi-line plain", "---\ndescription: one\n  two\n\n  three\nname: x\n---\n",
			map[string]any{"description": "one two\nthree", "name": "x"}},
		{"literal", "---\nd: |\n  line 1\n    indented\n  # not a comment\n\nn: x\n---\n",
			map[string]any{"d": "line 1\n  indented\n# not a comment\n", "n": "x"}},
		{"literal strip and keep", "---\ns: |-\n  a\n\nk: |+\n  a\n\nz: 1\n---\n",
			map[string]any{"s": "a", "k": "a\n\n", "z": num("1")}},
		{"folded", "---\nd: >\n  one\n  two\n\n  three\n    kept\n  four\n---\n",
			map[string]any{"d": "one two\nthree\n  kept\nfour\n"}},
		{"folded explicit indent", "---\nd: >2-\n   lead\n  x\n---\n",
			map[string]any{"d": " lead\nx"}},
		{"bom", "\ufeff---\nname: x\n---\n", map[string]any{"name": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct {
		name, text, msg string
	}{
		{"no block", "# Title\n", "does not begin"},
		{"unclosed", "---\nname: x\n", "no closing"},
		{"anchor", "---\na: &x 1\n---\n", "unsupported"},
		{"alias", "---\na: *x\n---\n", "unsupported"},
		{"tag", "---\na: !!str 1\n---\n", "unsupported"},
		{"complex key", "---\n? a\n: b\n---\n", "unsupported"},
		{"flow mapping", "---\na: {b: 1}\n---\n", "flow mapping"},
		{"nested flow", "---\na: [[1]]\n---\n", "flow sequence item"},
		{"multi-line quoted", "---\na: \"one\n  two\"\n---\n", "multi-line"},
		{"colon in plain", "---\na: b: c\n---\n", "quote it"},
		{"duplicate", "---\na: 1\na: 2\n---\n", "twice"},
		{"bad indent", "---\na: 1\n  b: 2\n---\n", "not plain text"},
		{"over-indented key", "---\na:\n    b: 1\n  c: 2\n---\n", "unexpected indentation"},
		{"tab", "---\n\ta: 1\n---\n", "tab"},
		{"sequence root", "---\n- a\n---\n", "sequence"},
		{"not a pair", "---\njust text\n---\n", "key: value"},
		{"bad escape", "---\na: \"\\q\"\n---\n", "escape"},
		{"bad header", "---\na: |x\n  b\n---\n", "block scalar header"},
		{"text after quote", "---\na: 'x' y\n---\n", "after a quoted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.text)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

// The parser reads server-supplied text: whatever it is, it answers or
// refuses, and never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{skillMD, "---\na: |+2\n   x\n\nb:\n- c: 1\n  d: [e, 'f']\n---\n", "---\nd: >-\n\n  a\n   b\n---\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Parse(s)
	})
}
