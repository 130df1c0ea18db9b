package core

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/lemonmcp/lemonmcp/internal/hostvalidate"
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

type samplingDenial struct {
	Reason     string                        `json:"reason"`
	DetailHash string                        `json:"detail_hash,omitempty"`
	Request    *hostvalidate.SamplingSummary `json:"request"`
}

// serveSampling runs a sampling/createMessage request through validation,
// then either straight to the host's sampling handler (no policy) or through
// the policy: bounds, review, delegate. The same path serves a request that
// arrives inside a 2026-07-28 input_required result.
func (c *Client) serveSampling(req *serverRequest) {
	summary, msg := hostvalidate.SamplingRequest(req.params, c.opts.Handlers.SamplingTools)
	if msg != "" {
		c.replyError(req, codeInvalidParams, msg, nil)
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
func (p *SamplingPolicy) bounds(s *hostvalidate.SamplingSummary) string {
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
func (c *Client) reviewSampling(req *serverRequest, summary *hostvalidate.SamplingSummary) {
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
func (c *Client) delegateSampling(req *serverRequest, summary *hostvalidate.SamplingSummary) {
	c.askHost("sampling", req, hostPayload(req, "summary", summary), c.answerWith(req, passedAnswer(hostvalidate.SamplingAnswer)), c.expireWithError(req))
}

// denySampling refuses a request: the server gets code -1 with the
// structured denial as data (never any text of the request or of a
// reviewer's reason, which is only hashed), and the host a
// "sampling_denied" event.
func (c *Client) denySampling(req *serverRequest, summary *hostvalidate.SamplingSummary, reason, detail string) {
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
