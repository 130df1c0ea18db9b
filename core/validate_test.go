package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidateAnswer(t *testing.T) {
	form := `{"message":"when?","requestedSchema":{"type":"object","properties":{"at":{"type":"string","format":"date-time"}},"required":["at"]}}`
	tests := []struct {
		name, kind, request, answer, want string
	}{
		{name: "elicitation valid", kind: AnswerElicitation, request: form, answer: `{"action":"accept","content":{"at":"2026-12-02T10:30:00Z"}}`},
		{name: "date-time without seconds", kind: AnswerElicitation, request: form, answer: `{"action":"accept","content":{"at":"2026-12-02T10:30Z"}}`, want: "content.at is not a date-time (RFC 3339)"},
		{name: "required", kind: AnswerElicitation, request: form, answer: `{"action":"accept","content":{}}`, want: "content.at is required"},
		{name: "declined", kind: AnswerElicitation, request: form, answer: `{"action":"decline"}`},
		{name: "bad request", kind: AnswerElicitation, request: `{"message":"m","requestedSchema":{"type":"array"}}`, answer: `{"action":"decline"}`, want: "the elicitation request: invalid requestedSchema"},
		{name: "sampling valid", kind: AnswerSampling, answer: `{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`},
		{name: "sampling without model", kind: AnswerSampling, answer: `{"role":"assistant","content":{"type":"text","text":"x"}}`, want: "model"},
		{name: "roots valid", kind: AnswerRoots, answer: `{"roots":[{"uri":"file:///tmp"}]}`},
		{name: "unknown kind", kind: "tools", answer: `{}`, want: `unknown answer kind "tools"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateAnswer(tc.kind, []byte(tc.request), []byte(tc.answer))
			if tc.want == "" {
				require.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			require.Equal(t, StatusInvalidArgument, err.Status)
			require.Contains(t, err.Message, tc.want)
		})
	}
}
