package core

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"unicode/utf8"

	"github.com/lemonmcp/lemonmcp/internal/canonjson"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

// SamplingPolicy is the library's own answer to sampling requests: local
// bounds, an optional review by the host that sees only a redacted summary,
// then the delegate (the host's sampling handler) that sees the raw request.
type SamplingPolicy struct {
	Mode          string // "deny", "model" or "reviewed_model"
	MaxTokens     int64  // the largest maxTokens allowed
	AllowedModels []string
	MaxMessages   int // 0: no bound
	MaxTextChars  int // 0: no bound
}

// Sampling policy modes.
const (
	PolicyDeny          = "deny"
	PolicyModel         = "model"
	PolicyReviewedModel = "reviewed_model"
)

// Denial reasons, as the server (in error data) and the host (in the
// "sampling_denied" event) see them.
const (
	denySamplingDisabled   = "sampling_disabled"
	denyMaxTokensExceeded  = "max_tokens_exceeded"
	denyModelNotAllowed    = "model_not_allowed"
	denyTooManyMessages    = "too_many_messages"
	denyTextTooLong        = "text_too_long"
	denyReviewRejected     = "review_rejected"
	denyReviewFailed       = "review_failed"
	denyReviewTimeout      = "review_timeout"
	denyInvalidReviewReply = "invalid_review_result"
)

func (c *Client) samplingEnabled() bool {
	return c.opts.Handlers.Sampling || c.opts.SamplingPolicy != nil
}

// samplingSummary describes a sampling request without any of its text: it
// is all a reviewer sees, and the approval metadata a host can record.
type samplingSummary struct {
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

type samplingDenial struct {
	Reason     string           `json:"reason"`
	DetailHash string           `json:"detail_hash,omitempty"`
	Request    *samplingSummary `json:"request"`
}

// serveSampling runs a sampling/createMessage request through validation,
// then either straight to the host's sampling handler (no policy) or through
// the policy: bounds, review, delegate. The same path serves a request that
// arrives inside a 2026-07-28 input_required result.
func (c *Client) serveSampling(req *serverRequest) {
	params, ok := decodeObject(req.params)
	if !ok {
		c.replyError(req, codeInvalidParams, "sampling/createMessage params must be a JSON object", nil)
		return
	}
	if msg := c.checkSamplingParams(params); msg != "" {
		c.replyError(req, codeInvalidParams, msg, nil)
		return
	}
	summary, err := summarize(req.params, params)
	if err != nil {
		c.replyError(req, codeInvalidParams, "sampling/createMessage params cannot be canonicalized: "+err.Error(), nil)
		return
	}
	policy := c.opts.SamplingPolicy
	if policy == nil {
		c.delegateSampling(req, summary)
		return
	}
	if reason := policy.bounds(summary); reason != "" {
		c.denySampling(req, summary, reason, "")
		return
	}
	switch policy.Mode {
	case PolicyModel:
		c.delegateSampling(req, summary)
	case PolicyReviewedModel:
		c.reviewSampling(req, summary)
	default:
		c.denySampling(req, summary, denySamplingDisabled, "")
	}
}

// bounds checks the local limits, in the documented order.
func (p *SamplingPolicy) bounds(s *samplingSummary) string {
	if p.MaxTokens > 0 && s.MaxTokens > p.MaxTokens {
		return denyMaxTokensExceeded
	}
	if len(p.AllowedModels) > 0 {
		for _, m := range s.RequestedModels {
			if !slices.Contains(p.AllowedModels, m) {
				return denyModelNotAllowed
			}
		}
	}
	if p.MaxMessages > 0 && s.MessageCount > p.MaxMessages {
		return denyTooManyMessages
	}
	if p.MaxTextChars > 0 && s.TextCharCount+s.SystemPromptChars > p.MaxTextChars {
		return denyTextTooLong
	}
	return ""
}

// reviewSampling asks the host's reviewer, with the summary only.
func (c *Client) reviewSampling(req *serverRequest, summary *samplingSummary) {
	review := map[string]any{"summary": summary, "server": c.serverIdentity()}
	if req.answer != nil {
		review["call_id"], review["input_key"] = req.callID, req.inputKey
	}
	payload := jsonx.MustMarshal(review)
	c.askHost("review", req, payload, func(status Status, data []byte) *Error {
		if status != StatusOK {
			_, msg, _ := hostErrorToServer(status, data)
			c.denySampling(req, summary, denyReviewFailed, msg)
			return nil
		}
		var verdict struct {
			Approved *bool  `json:"approved"`
			Reason   string `json:"reason"`
		}
		if jsonx.Unmarshal(orEmptyObject(data), &verdict) != nil || verdict.Approved == nil {
			c.denySampling(req, summary, denyInvalidReviewReply, "")
			return Errorf(StatusInvalidArgument, "a review answer must be {\"approved\": true|false, \"reason\"?: \"...\"}")
		}
		if !*verdict.Approved {
			c.denySampling(req, summary, denyReviewRejected, verdict.Reason)
			return nil
		}
		c.delegateSampling(req, summary)
		return nil
	}, func() { c.denySampling(req, summary, denyReviewTimeout, "") })
}

// delegateSampling hands the raw request, with the same summary, to the
// host's sampling handler.
func (c *Client) delegateSampling(req *serverRequest, summary *samplingSummary) {
	c.askHost("sampling", req, hostPayload(req, "summary", summary), c.answerWith(req, checkSamplingResult), c.expireWithError(req))
}

// denySampling refuses a request: the server gets code -1 with the
// structured denial as data (never any text of the request or of a
// reviewer's reason, which is only hashed), and the host a
// "sampling_denied" event.
func (c *Client) denySampling(req *serverRequest, summary *samplingSummary, reason, detail string) {
	d := samplingDenial{Reason: reason, Request: summary}
	if detail != "" {
		sum := sha256.Sum256([]byte(detail))
		d.DetailHash = hex.EncodeToString(sum[:8])
	}
	data := jsonx.MustMarshal(d)
	c.replyError(req, codeRejected, "sampling request rejected ("+reason+")", data)
	if c.hasEvents() {
		c.emit("sampling_denied", jsonx.MustMarshal(map[string]any{"denial": d, "server": c.serverIdentity()}), false)
	}
}

// serverIdentity is the server's serverInfo, for approval metadata.
func (c *Client) serverIdentity() jsonx.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server == nil {
		return jsonx.RawMessage("{}")
	}
	return jsonx.RawMessage(c.server.identity)
}

// summarize builds the redacted summary of validated params; raw is the
// request's params as received, hashed in RFC 8785 canonical form.
func summarize(raw []byte, params map[string]any) (*samplingSummary, error) {
	canon, err := canonjson.Canonicalize(orEmptyObject(raw))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	full := hex.EncodeToString(sum[:])
	s := &samplingSummary{RequestHash: full, RequestHashShort: full[:16], ContentKinds: map[string]int{}, Roles: []string{}, RequestedModels: []string{}}
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

// checkSamplingParams validates a request before anyone sees it. It returns
// a message for -32602, or "".
func (c *Client) checkSamplingParams(p map[string]any) string {
	msgs, ok := asArray(p["messages"])
	if !ok {
		return "sampling/createMessage needs a messages array"
	}
	tools := c.opts.Handlers.SamplingTools
	for i, m := range msgs {
		msg, ok := asObject(m)
		if !ok {
			return "messages[" + itoa(int64(i)) + "] must be an object"
		}
		role, _ := asString(msg["role"])
		if role != "user" && role != "assistant" {
			return "messages[" + itoa(int64(i)) + "].role must be \"user\" or \"assistant\""
		}
		if _, isObj := asObject(msg["content"]); !isObj {
			if _, isArr := asArray(msg["content"]); !isArr {
				return "messages[" + itoa(int64(i)) + "].content must be a content block or an array of them"
			}
		}
		for _, b := range contentBlocks(msg["content"]) {
			if msg := checkBlock(b, tools); msg != "" {
				return "messages[" + itoa(int64(i)) + "]: " + msg
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
			return "tools[" + itoa(int64(i)) + "] needs a name and an inputSchema object"
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
			return "messages[" + itoa(int64(i)) + "] mixes tool_result blocks with other content"
		}
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(msgs) {
			return "messages[" + itoa(int64(i)) + "] has a tool_use without a following tool_result"
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
				return "tool_use " + id + " in messages[" + itoa(int64(i)) + "] has no matching tool_result"
			}
		}
	}
	return ""
}

// checkSamplingResult validates the delegate's answer: a role, content, and
// the model that produced it.
func checkSamplingResult(data []byte) ([]byte, *Error) {
	res, ok := decodeObject(data)
	if !ok {
		return nil, Errorf(StatusInvalidArgument, "a sampling answer must be a JSON object")
	}
	role, _ := asString(res["role"])
	if role != "assistant" && role != "user" {
		return nil, Errorf(StatusInvalidArgument, "a sampling answer needs role \"assistant\"")
	}
	blocks := contentBlocks(res["content"])
	if len(blocks) == 0 {
		return nil, Errorf(StatusInvalidArgument, "a sampling answer needs content")
	}
	for _, b := range blocks {
		if _, ok := asString(b["type"]); !ok {
			return nil, Errorf(StatusInvalidArgument, "a sampling answer's content blocks need a type")
		}
	}
	if model, ok := asString(res["model"]); !ok || model == "" {
		return nil, Errorf(StatusInvalidArgument, "a sampling answer needs the model that produced it")
	}
	if v, has := res["stopReason"]; has {
		if _, ok := asString(v); !ok {
			return nil, Errorf(StatusInvalidArgument, "stopReason must be a string")
		}
	}
	return data, nil
}
