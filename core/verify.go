package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/internal/frontmatter"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// ResourceVerify is the "verify" call option of resources/read: what the
// host already holds about the resource (for a skill file, its entry in
// skills/list or skills/get, SEP-2640) and the library checks before the
// content reaches the host. Unverified content is never returned: the call
// fails instead.
type ResourceVerify struct {
	Digest      []byte // the expected SHA-256, nil when not checked
	DigestText  string // as the host gave it, for messages
	Size        int64
	SizeSet     bool
	Frontmatter map[string]any // the expected frontmatter, nil when not checked
}

// ParseResourceVerify reads the verify call option (options.verify):
// {"digest":"sha256:<hex>", "size":<n>, "frontmatter":{..}}, at least one
// member. The call-option parser (config.ParseCallOptions) hands it the
// member; it lives here, next to the check that reads what it builds.
func ParseResourceVerify(raw []byte) (*ResourceVerify, *Error) {
	it := jsonx.BorrowIterator(raw)
	defer jsonx.ReturnIterator(it)
	v := &ResourceVerify{}
	for field := it.ReadObject(); field != ""; field = it.ReadObject() {
		switch field {
		case "digest":
			var d []byte
			if it.WhatIsNext() == jsonx.KindString {
				v.DigestText = it.ReadString()
				d, _ = parseDigest(v.DigestText)
			}
			if d == nil {
				return nil, Errorf(StatusInvalidArgument, "options.verify.digest must be \"sha256:\" and 64 lowercase hex digits")
			}
			v.Digest = d
		case "size":
			var n int64 = -1
			if it.WhatIsNext() == jsonx.KindNumber {
				if i, err := it.ReadNumber().Int64(); err == nil {
					n = i
				}
			}
			if n < 0 {
				return nil, Errorf(StatusInvalidArgument, "options.verify.size must be a whole number of bytes, 0 or more")
			}
			v.Size, v.SizeSet = n, true
		case "frontmatter":
			if it.WhatIsNext() != jsonx.KindObject {
				return nil, Errorf(StatusInvalidArgument, "options.verify.frontmatter must be a JSON object")
			}
			if err := jsonx.Unmarshal(it.SkipAndReturnBytes(), &v.Frontmatter); err != nil || v.Frontmatter == nil {
				return nil, Errorf(StatusInvalidArgument, "options.verify.frontmatter must be a JSON object")
			}
		default:
			return nil, Errorf(StatusInvalidArgument, "options.verify.%s is not a known member (digest, size, frontmatter)", field)
		}
	}
	if it.Error != nil && it.Error != io.EOF {
		return nil, Errorf(StatusInvalidArgument, "options.verify must be a JSON object")
	}
	if v.Digest == nil && !v.SizeSet && v.Frontmatter == nil {
		return nil, Errorf(StatusInvalidArgument, "options.verify needs digest, size or frontmatter")
	}
	return v, nil
}

// parseDigest reads "sha256:<64 lowercase hex>", the only digest form the
// skills extension defines.
func parseDigest(s string) ([]byte, bool) {
	hexPart, ok := bytes.CutPrefix([]byte(s), []byte("sha256:"))
	if !ok || len(hexPart) != 2*sha256.Size || !allIn(string(hexPart), "0123456789abcdef") {
		return nil, false
	}
	d, err := hex.DecodeString(string(hexPart))
	return d, err == nil
}

// finishResult completes a call with its server result; with the verify
// option the result is checked first and a failed check replaces it.
func (c *Client) finishResult(cl *call, result []byte) {
	if cl.opts.Verify != nil {
		if err := cl.opts.Verify.check(result); err != nil {
			c.finish(cl, err, nil)
			return
		}
	}
	c.finish(cl, nil, result)
}

func verifyFailed(format string, args ...any) *Error {
	e := Errorf(StatusProtocol, format, args...)
	e.Message = "resources/read verification failed: " + e.Message + "; the content was not used"
	return e
}

// check verifies a resources/read result. The result must carry exactly
// one content item (the file the host asked for: with several there is no
// telling which the expectation describes), whose bytes are its text as
// UTF-8 or its blob base64-decoded. Size is checked first (it is cheap and
// a size mismatch fails whatever the digest says), then the digest, then
// the frontmatter. Messages name what differed, never the content.
func (v *ResourceVerify) check(result []byte) *Error {
	var r struct {
		Contents []struct {
			Text *string `json:"text"`
			Blob *string `json:"blob"`
		} `json:"contents"`
	}
	if err := jsonx.Unmarshal(result, &r); err != nil {
		return verifyFailed("the result's contents are malformed")
	}
	if len(r.Contents) != 1 {
		return verifyFailed("the result has %d content items; verification needs exactly one", len(r.Contents))
	}
	item := r.Contents[0]
	var data []byte
	switch {
	case item.Text != nil && item.Blob != nil:
		return verifyFailed("the content item has both text and blob")
	case item.Text != nil:
		data = []byte(*item.Text)
	case item.Blob != nil:
		var err error
		if data, err = base64.StdEncoding.DecodeString(*item.Blob); err != nil {
			return verifyFailed("the content's blob is not valid base64")
		}
	default:
		return verifyFailed("the content item has neither text nor blob")
	}
	if v.SizeSet && int64(len(data)) != v.Size {
		return verifyFailed("the content is %d bytes, the expected size is %d", len(data), v.Size)
	}
	if v.Digest != nil {
		sum := sha256.Sum256(data)
		if !bytes.Equal(sum[:], v.Digest) {
			return verifyFailed("the content's digest sha256:%s is not the expected %s", hex.EncodeToString(sum[:]), v.DigestText)
		}
	}
	if v.Frontmatter != nil {
		if !utf8.Valid(data) {
			return verifyFailed("the content is not UTF-8 text, so it has no frontmatter")
		}
		fm, err := frontmatter.Parse(string(data))
		if err != nil {
			return verifyFailed("%s", err.Error())
		}
		if msg := compareFrontmatter(v.Frontmatter, fm); msg != "" {
			return verifyFailed("%s", msg)
		}
	}
	return nil
}

// compareFrontmatter compares the expected frontmatter (JSON) with the
// file's (YAML) field by field and says what differs ("" when nothing).
// Field names the host gave are named; fields only the file has are
// counted, not named, since they are the file's content.
func compareFrontmatter(want, got map[string]any) string {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			return "the frontmatter field " + quoteShort(k) + " is missing from the file"
		}
		if !sameValue(want[k], g) {
			return "the frontmatter field " + quoteShort(k) + " differs from the expected value"
		}
	}
	if extra := len(got) - len(want); extra > 0 {
		return "the file's frontmatter has " + strconv.Itoa(extra) + " field(s) the expected frontmatter does not have"
	}
	return ""
}

// sameValue compares a JSON value (decoded with numbers kept as text) with
// a parsed YAML one. Types must agree: the string "1" is not the number 1.
func sameValue(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case string:
		g, ok := got.(string)
		return ok && g == w
	case jsonx.Number:
		g, ok := got.(frontmatter.Number)
		if !ok || g.Rat == nil {
			return false
		}
		r, ok := new(big.Rat).SetString(string(w))
		return ok && r.Cmp(g.Rat) == 0
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(w[i], g[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !sameValue(wv, gv) {
				return false
			}
		}
		return true
	}
	return false
}

// quoteShort quotes a key for an error message, cut to a sane length.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}

// allIn reports whether every byte of s is in set.
func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}
