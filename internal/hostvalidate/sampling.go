package hostvalidate

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/internal/canonjson"
)

// SamplingRequest checks sampling/createMessage params (raw JSON); tools
// says whether the client declared sampling.tools. It returns the redacted
// summary of a valid request, or a message for a -32602 error.
func SamplingRequest(raw []byte, tools bool) (*SamplingSummary, string) {
	params, ok := decodeObject(raw)
	if !ok {
		return nil, "sampling/createMessage params must be a JSON object"
	}
	if msg := checkSamplingParams(params, tools); msg != "" {
		return nil, msg
	}
	summary, err := summarize(raw, params)
	if err != nil {
		return nil, "sampling/createMessage params cannot be canonicalized: " + err.Error()
	}
	return summary, ""
}

// SamplingSummary describes a sampling request without any of its text: it
// is all a reviewer sees, and the approval metadata a host can record.
type SamplingSummary struct {
	RequestHash       string         `json:"request_hash"`
	RequestHashShort  string         `json:"request_hash_short"`
	MessageCount      int            `json:"message_count"`
	Roles             []string       `json:"roles"`
	ContentKinds      map[string]int `json:"content_kinds"`
	TextCharCount     int            `json:"text_char_count"`
	SystemPromptChars int            `json:"system_prompt_chars"`
	MaxTokens         int64          `json:"max_tokens"`
	RequestedModels   []string       `json:"requested_models"`
	IncludeContext    string         `json:"include_context,omitempty"`
	HasTools          bool           `json:"has_tools"`
}

// summarize builds the redacted summary of validated params; raw is the
// request's params as received, hashed in RFC 8785 canonical form.
func summarize(raw []byte, params map[string]any) (*SamplingSummary, error) {
	canon, err := canonjson.Canonicalize(orEmptyObject(raw))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	full := hex.EncodeToString(sum[:])
	s := &SamplingSummary{RequestHash: full, RequestHashShort: full[:16], ContentKinds: map[string]int{}, Roles: []string{}, RequestedModels: []string{}}
	msgs, _ := asArray(params["messages"])
	s.MessageCount = len(msgs)
	for _, m := range msgs {
		msg, _ := asObject(m)
		role, _ := asString(msg["role"])
		if !slices.Contains(s.Roles, role) {
			s.Roles = append(s.Roles, role)
		}
		for _, b := range contentBlocks(msg["content"]) {
			kind, _ := asString(b["type"])
			s.ContentKinds[kind]++
			s.TextCharCount += textChars(b)
		}
	}
	if sp, ok := asString(params["systemPrompt"]); ok {
		s.SystemPromptChars = utf8.RuneCountInString(sp)
	}
	s.MaxTokens, _ = asInteger(params["maxTokens"])
	if prefs, ok := asObject(params["modelPreferences"]); ok {
		hints, _ := asArray(prefs["hints"])
		for _, h := range hints {
			hint, _ := asObject(h)
			if name, ok := asString(hint["name"]); ok {
				s.RequestedModels = append(s.RequestedModels, name)
			}
		}
	}
	s.IncludeContext, _ = asString(params["includeContext"])
	_, s.HasTools = params["tools"]
	return s, nil
}

// contentBlocks returns a message's content as a list of blocks (content is
// one block, or an array of blocks since 2025-11-25).
func contentBlocks(v any) []map[string]any {
	if b, ok := asObject(v); ok {
		return []map[string]any{b}
	}
	arr, _ := asArray(v)
	out := make([]map[string]any, 0, len(arr))
	for _, item := range arr {
		if b, ok := asObject(item); ok {
			out = append(out, b)
		}
	}
	return out
}

// textChars counts the characters of text in a block, including text nested
// in a tool result.
func textChars(b map[string]any) int {
	n := 0
	if t, ok := asString(b["text"]); ok {
		n += utf8.RuneCountInString(t)
	}
	if nested, ok := asArray(b["content"]); ok {
		for _, item := range nested {
			if nb, ok := asObject(item); ok {
				n += textChars(nb)
			}
		}
	}
	return n
}

var includeContextValues = []string{"none", "thisServer", "allServers"}

// checkSamplingParams validates a request before anyone sees it; tools says
// whether the client declared sampling.tools. It returns a message for
// -32602, or "".
func checkSamplingParams(p map[string]any, tools bool) string {
	msgs, ok := asArray(p["messages"])
	if !ok {
		return "sampling/createMessage needs a messages array"
	}
	for i, m := range msgs {
		msg, ok := asObject(m)
		if !ok {
			return "messages[" + strconv.Itoa(i) + "] must be an object"
		}
		role, _ := asString(msg["role"])
		if role != "user" && role != "assistant" {
			return "messages[" + strconv.Itoa(i) + "].role must be \"user\" or \"assistant\""
		}
		if _, isObj := asObject(msg["content"]); !isObj {
			if _, isArr := asArray(msg["content"]); !isArr {
				return "messages[" + strconv.Itoa(i) + "].content must be a content block or an array of them"
			}
		}
		for _, b := range contentBlocks(msg["content"]) {
			if msg := checkBlock(b, tools); msg != "" {
				return "messages[" + strconv.Itoa(i) + "]: " + msg
			}
		}
	}
	if mt, ok := asInteger(p["maxTokens"]); !ok || mt <= 0 {
		return "sampling/createMessage needs maxTokens, a positive integer"
	}
	if v, has := p["modelPreferences"]; has {
		prefs, ok := asObject(v)
		if !ok {
			return "modelPreferences must be an object"
		}
		if h, has := prefs["hints"]; has {
			hints, ok := asArray(h)
			if !ok {
				return "modelPreferences.hints must be an array"
			}
			for _, hint := range hints {
				if _, ok := asObject(hint); !ok {
					return "modelPreferences.hints entries must be objects"
				}
			}
		}
		for _, k := range []string{"costPriority", "speedPriority", "intelligencePriority"} {
			if v, has := prefs[k]; has {
				if f, ok := asNumber(v); !ok || f < 0 || f > 1 {
					return "modelPreferences." + k + " must be a number from 0 to 1"
				}
			}
		}
	}
	if v, has := p["systemPrompt"]; has {
		if _, ok := asString(v); !ok {
			return "systemPrompt must be a string"
		}
	}
	if v, has := p["includeContext"]; has {
		if s, ok := asString(v); !ok || !slices.Contains(includeContextValues, s) {
			return "includeContext must be one of none, thisServer, allServers"
		}
	}
	if v, has := p["stopSequences"]; has {
		arr, ok := asArray(v)
		if !ok {
			return "stopSequences must be an array of strings"
		}
		for _, s := range arr {
			if _, ok := asString(s); !ok {
				return "stopSequences must be an array of strings"
			}
		}
	}
	_, hasTools := p["tools"]
	_, hasChoice := p["toolChoice"]
	if (hasTools || hasChoice) && !tools {
		return "tools in sampling need the sampling.tools capability, which this client did not declare"
	}
	if hasTools {
		if msg := checkTools(p["tools"]); msg != "" {
			return msg
		}
	}
	if hasChoice {
		choice, ok := asObject(p["toolChoice"])
		mode, _ := asString(choice["mode"])
		if !ok || !slices.Contains([]string{"auto", "required", "none"}, mode) {
			return "toolChoice.mode must be auto, required or none"
		}
	}
	return checkToolPairing(msgs)
}

func checkBlock(b map[string]any, tools bool) string {
	kind, ok := asString(b["type"])
	if !ok {
		return "a content block needs a type"
	}
	switch kind {
	case "text":
		if _, ok := asString(b["text"]); !ok {
			return "a text block needs text"
		}
	case "image", "audio":
		_, d := asString(b["data"])
		_, m := asString(b["mimeType"])
		if !d || !m {
			return "an " + kind + " block needs data and mimeType"
		}
	case "tool_use", "tool_result":
		if !tools {
			return kind + " blocks need the sampling.tools capability"
		}
		if kind == "tool_use" {
			_, id := asString(b["id"])
			_, name := asString(b["name"])
			if !id || !name {
				return "a tool_use block needs id and name"
			}
		} else if _, ok := asString(b["toolUseId"]); !ok {
			return "a tool_result block needs toolUseId"
		}
	}
	return ""
}

func checkTools(v any) string {
	arr, ok := asArray(v)
	if !ok {
		return "tools must be an array"
	}
	for i, t := range arr {
		tool, ok := asObject(t)
		_, named := asString(tool["name"])
		_, schema := asObject(tool["inputSchema"])
		if !ok || !named || !schema {
			return "tools[" + strconv.Itoa(i) + "] needs a name and an inputSchema object"
		}
	}
	return ""
}

// checkToolPairing enforces SEP-1577: a user message holding tool results
// holds nothing else, and every tool_use is answered by a matching
// tool_result in the next message.
func checkToolPairing(msgs []any) string {
	for i, m := range msgs {
		msg, _ := asObject(m)
		blocks := contentBlocks(msg["content"])
		var uses []string
		results := 0
		for _, b := range blocks {
			switch kind, _ := asString(b["type"]); kind {
			case "tool_use":
				id, _ := asString(b["id"])
				uses = append(uses, id)
			case "tool_result":
				results++
			}
		}
		if results > 0 && results != len(blocks) {
			return "messages[" + strconv.Itoa(i) + "] mixes tool_result blocks with other content"
		}
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(msgs) {
			return "messages[" + strconv.Itoa(i) + "] has a tool_use without a following tool_result"
		}
		next, _ := asObject(msgs[i+1])
		answered := map[string]bool{}
		for _, b := range contentBlocks(next["content"]) {
			if kind, _ := asString(b["type"]); kind == "tool_result" {
				id, _ := asString(b["toolUseId"])
				answered[id] = true
			}
		}
		for _, id := range uses {
			if !answered[id] {
				return "tool_use " + id + " in messages[" + strconv.Itoa(i) + "] has no matching tool_result"
			}
		}
	}
	return ""
}

// SamplingAnswer validates the delegate's answer: a role, content, and the
// model that produced it. It returns a message naming the problem, or "".
func SamplingAnswer(data []byte) string {
	res, ok := decodeObject(data)
	if !ok {
		return "a sampling answer must be a JSON object"
	}
	role, _ := asString(res["role"])
	if role != "assistant" && role != "user" {
		return "a sampling answer needs role \"assistant\""
	}
	blocks := contentBlocks(res["content"])
	if len(blocks) == 0 {
		return "a sampling answer needs content"
	}
	for _, b := range blocks {
		kind, ok := asString(b["type"])
		if !ok {
			return "a sampling answer's content blocks need a type"
		}
		if _, ok := asString(b["text"]); kind == "text" && !ok {
			return "a sampling answer's text blocks need a text string"
		}
	}
	if model, ok := asString(res["model"]); !ok || model == "" {
		return "a sampling answer needs the model that produced it"
	}
	if v, has := res["stopReason"]; has {
		if _, ok := asString(v); !ok {
			return "stopReason must be a string"
		}
	}
	return ""
}
