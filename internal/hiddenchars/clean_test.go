package hiddenchars

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClean(t *testing.T) {
	// The tag characters spelling "ignore" (U+E0069 ...).
	tags := "\U000E0069\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065"
	england := "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"
	cases := []struct {
		name, in, out string
		hidden, ansi  int
	}{
		{"plain", "Reads a file.", "Reads a file.", 0, 0},
		{"tab and newline kept", "a\tb\nc", "a\tb\nc", 0, 0},
		{"tag sentence", "Adds numbers." + tags, "Adds numbers.", 6, 0},
		{"emoji tag sequence kept", "flag " + england + " ok", "flag " + england + " ok", 0, 0},
		{"tags after a flag without cancel", "\U0001F3F4" + tags, "\U0001F3F4", 6, 0},
		{"lone cancel tag", "x\U000E007F", "x", 1, 0},
		{"bidi override", "abc\u202Edcb", "abcdcb", 1, 0},
		{"bidi isolates", "\u2066a\u2069\u2067\u2068", "a", 4, 0},
		{"zero width space and BOM", "a\u200Bb\uFEFFc", "abc", 2, 0},
		{"word joiner and invisible operators", "a\u2060\u2061\u2062\u2063\u2064b", "ab", 5, 0},
		{"ZWJ and ZWNJ kept", "\U0001F469\u200D\U0001F4BB \u0645\u200C\u06CC", "\U0001F469\u200D\U0001F4BB \u0645\u200C\u06CC", 0, 0},
		{"C0 controls", "a\x00b\rc\x07d\x7f", "abcd", 4, 0},
		{"C1 controls", "a\u0085b\u0090", "ab", 2, 0},
		{"CSI colour", "\x1b[31mred\x1b[0m", "red", 0, 2},
		{"CSI clear screen", "\x1b[2J\x1b[Hhi", "hi", 0, 2},
		{"C1 CSI", "\u009b31mx", "x", 0, 1},
		{"OSC title with BEL", "\x1b]0;pwned\x07text", "text", 0, 1},
		{"OSC hyperlink with ST", "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link", 0, 2},
		{"ESC at the end", "a\x1b", "a", 0, 1},
		{"ESC two-character", "a\x1bcb", "ab", 0, 1},
		{"CSI cut short", "a\x1b[31", "a", 0, 1},
		{"invalid UTF-8", "a\xffb", "ab", 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, n := Clean(tc.in)
			require.Equal(t, tc.out, out)
			require.Equal(t, Counts{Hidden: tc.hidden, ANSI: tc.ansi}, n)
			again, n2 := Clean(out)
			require.Equal(t, out, again, "cleaning is idempotent")
			require.True(t, n2.Zero())
		})
	}
}

func TestCleanJSON(t *testing.T) {
	cases := []struct {
		name, in, out string
		found         []Finding
	}{
		{"clean value is returned as it is", `{"name":"a","description":"b\n\"c\""}`, `{"name":"a","description":"b\n\"c\""}`, nil},
		{"escaped bidi in a description", `{"name":"a","description":"x\u202ey"}`, `{"description":"xy","name":"a"}`, []Finding{{KindHidden, "description", 1}}},
		{"nested schema description", `{"inputSchema":{"properties":{"q":{"description":"\u001b[2Jq"}}}}`, `{"inputSchema":{"properties":{"q":{"description":"q"}}}}`, []Finding{{KindANSI, "inputSchema.properties.q.description", 1}}},
		{"prompt argument", `{"arguments":[{"name":"a","description":"\udb40\udc69"}]}`, `{"arguments":[{"description":"","name":"a"}]}`, []Finding{{KindHidden, "arguments[0].description", 1}}},
		{"member name", "{\"a\u200bb\":1}", `{"ab":1}`, []Finding{{KindHidden, "ab", 1}}},
		{"hidden twin of a member", "{\"a\":1,\"a\u200b\":2}", `{"a":1}`, []Finding{{KindHidden, "a", 1}}},
		{"_meta text", `{"_meta":{"note":"\r\u0007"}}`, `{"_meta":{"note":""}}`, []Finding{{KindHidden, "_meta.note", 2}}},
		{"not JSON", "{\"a\u200b", "{\"a\u200b", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, found := CleanJSON([]byte(tc.in))
			if tc.found == nil {
				require.Equal(t, tc.in, string(out), "nothing removed: the very bytes")
			} else {
				require.JSONEq(t, tc.out, string(out))
			}
			require.Equal(t, tc.found, found)
		})
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "a\x1b[31mb", "\U0001F3F4\U000E0067\U000E007F", "\x1b]0;x\x07", "\u202e", "{\"a\":\"\\u202e\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := Clean(s)
		again, n := Clean(out)
		if again != out || !n.Zero() {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if len(out) > len(s) {
			t.Fatalf("grew: %q -> %q", s, out)
		}
		cleaned, found := CleanJSON([]byte(s))
		if len(found) > 0 {
			if _, again := CleanJSON(cleaned); len(again) > 0 {
				t.Fatalf("CleanJSON not idempotent on %q: %v", s, again)
			}
		}
	})
}
