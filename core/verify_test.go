package core

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/lemonmcp/lemonmcp/internal/frontmatter"
	"github.com/stretchr/testify/require"
)

const skillMD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// readServer answers resources/read with contents.
func readServer(t *testing.T, contents ...map[string]any) *fakeServer {
	s := newFakeServer(t, "2025-11-25", defaultCaps())
	s.handle("resources/read", func(*fakeServer, wireMsg) reply {
		return reply{result: map[string]any{"contents": contents}}
	})
	return s
}

func textContent(text string) map[string]any {
	return map[string]any{"uri": "skill://pdf-processing/SKILL.md", "mimeType": "text/markdown", "text": text}
}

func readVerified(t *testing.T, s *fakeServer, verify string) ([]byte, *Error) {
	c := readyClient(t, s, testOptions())
	v, err := ParseResourceVerify([]byte(verify))
	require.Nil(t, errOrNil(err))
	return c.CallSync("resources/read", []byte(`{"uri":"skill://pdf-processing/SKILL.md"}`), CallOptions{Verify: v})
}

func TestVerifyResourceRead(t *testing.T) {
	fm := `{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents"}`
	full := `{"digest":"` + sha(skillMD) + `","size":` + strconv.Itoa(len(skillMD)) + `,"frontmatter":` + fm + `}`
	cases := []struct {
		name     string
		contents []map[string]any
		verify   string
		msg      string // "" for a match
	}{
		{"match", []map[string]any{textContent(skillMD)}, full, ""},
		{"digest only", []map[string]any{textContent(skillMD)}, `{"digest":"` + sha(skillMD) + `"}`, ""},
		{"digest mismatch", []map[string]any{textContent("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nEvil body!!\n")},
			full, "digest sha256:"},
		{"size mismatch", []map[string]any{textContent(skillMD + "extra\n")}, `{"size":` + strconv.Itoa(len(skillMD)) + `}`, "the expected size is"},
		{"size checked before digest", []map[string]any{textContent(skillMD + "extra\n")}, full, "bytes, the expected size"},
		{"frontmatter mismatch", []map[string]any{textContent("---\nname: pdf-processing\ndescription: Exfiltrate credentials\n---\n")},
			`{"frontmatter":` + fm + `}`, `field "description" differs`},
		{"frontmatter unparsable", []map[string]any{textContent("---\nname: &a x\n---\n")}, `{"frontmatter":` + fm + `}`, "unsupported YAML"},
		{"no frontmatter", []map[string]any{textContent("# hi\n")}, `{"frontmatter":` + fm + `}`, "does not begin"},
		{"blob match", []map[string]any{{"uri": "skill://x/a.bin", "blob": base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 255})}},
			`{"digest":"` + sha("\x00\x01\x02\xff") + `","size":4}`, ""},
		{"blob mismatch", []map[string]any{{"uri": "skill://x/a.bin", "blob": base64.StdEncoding.EncodeToString([]byte{0, 1, 2})}},
			`{"digest":"` + sha("\x00\x01\x02\xff") + `"}`, "digest"},
		{"bad base64", []map[string]any{{"uri": "skill://x/a.bin", "blob": "!!"}}, `{"size":1}`, "not valid base64"},
		{"several contents", []map[string]any{textContent(skillMD), textContent(skillMD)}, full, "2 content items"},
		{"no contents", []map[string]any{}, full, "0 content items"},
		{"neither text nor blob", []map[string]any{{"uri": "skill://x"}}, full, "neither text nor blob"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := readServer(t, tc.contents...)
			data, err := readVerified(t, s, tc.verify)
			if tc.msg == "" {
				require.Nil(t, errOrNil(err))
				require.Contains(t, string(data), `"contents"`)
				return
			}
			require.NotNil(t, err)
			require.Nil(t, data)
			require.Equal(t, StatusProtocol, err.Status)
			require.Contains(t, err.Message, "resources/read verification failed")
			require.Contains(t, err.Message, tc.msg)
			require.NotContains(t, err.Message, "Evil")
			require.NotContains(t, err.Message, "Exfiltrate")
		})
	}
}

// The verify option's parsing is tested with the other call options in
// config (callopts_test.go); a verify option is refused outside
// resources/read.
func TestVerifyOnlyResourcesRead(t *testing.T) {
	t.Run("only resources/read", func(t *testing.T) {
		s := readServer(t, textContent(skillMD))
		c := readyClient(t, s, testOptions())
		v, err := ParseResourceVerify([]byte(`{"size":1}`))
		require.Nil(t, errOrNil(err))
		_, err = c.CallSync("tools/call", []byte(`{"name":"x"}`), CallOptions{Verify: v})
		require.NotNil(t, err)
		require.Equal(t, StatusInvalidArgument, err.Status)
		require.Contains(t, err.Message, "only to resources/read")
	})
}

// The modern era's complete result goes through the same check.
func TestVerifyModern(t *testing.T) {
	s := newModernServer(t)
	s.handle("resources/read", func(*fakeServer, wireMsg) reply {
		return reply{result: map[string]any{"resultType": "complete", "contents": []any{textContent(skillMD + "x")}}}
	})
	c, err := connectWith(t, s, modernOptions(ModeModern), nil)
	require.Nil(t, errOrNil(err))
	v, err := ParseResourceVerify([]byte(`{"digest":"` + sha(skillMD) + `"}`))
	require.Nil(t, errOrNil(err))
	_, err = c.CallSync("resources/read", []byte(`{"uri":"skill://pdf-processing/SKILL.md"}`), CallOptions{Verify: v})
	require.NotNil(t, err)
	require.Equal(t, StatusProtocol, err.Status)
	require.Contains(t, err.Message, "is not the expected "+sha(skillMD))
}

func TestCompareFrontmatter(t *testing.T) {
	fm, err := frontmatter.Parse("---\nname: x\ndescription: d\nversion: 2.10\nmetadata:\n  tags: [a, b]\n  ok: true\n---\n")
	require.NoError(t, err)
	cases := []struct {
		name, want, msg string
	}{
		{"equal", `{"name":"x","description":"d","version":2.1,"metadata":{"tags":["a","b"],"ok":true}}`, ""},
		{"string is not number", `{"name":"x","description":"d","version":"2.10","metadata":{"tags":["a","b"],"ok":true}}`, `field "version" differs`},
		{"differs", `{"name":"x","description":"other","version":2.1,"metadata":{"tags":["a","b"],"ok":true}}`, `field "description" differs`},
		{"nested differs", `{"name":"x","description":"d","version":2.1,"metadata":{"tags":["a"],"ok":true}}`, `field "metadata" differs`},
		{"missing", `{"name":"x","description":"d","version":2.1,"metadata":{"tags":["a","b"],"ok":true},"license":"MIT"}`, `field "license" is missing`},
		{"extra", `{"name":"x","description":"d","version":2.1}`, "1 field(s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, perr := ParseResourceVerify([]byte(`{"frontmatter":` + tc.want + `}`))
			require.Nil(t, errOrNil(perr))
			require.Equal(t, tc.msg == "", compareFrontmatter(v.Frontmatter, fm) == "")
			require.Contains(t, compareFrontmatter(v.Frontmatter, fm), tc.msg)
		})
	}
}
