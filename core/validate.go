package core

import "github.com/lemonmcp/lemonmcp/internal/hostvalidate"

// The kinds of answer ValidateAnswer checks (lmcp_validate_answer).
const (
	AnswerElicitation = "elicitation"
	AnswerSampling    = "sampling"
	AnswerRoots       = "roots"
)

// ValidateAnswer checks an application's answer to a server request with
// the same validator the client applies when the answer is sent: a
// binding that asks a person (a form on a terminal) checks each answer
// here first, so that no answer passes there and fails here. request is
// the server's params (elicitation/create's: its requestedSchema); the
// other kinds need none. It returns nil, or StatusInvalidArgument naming
// the problem.
func ValidateAnswer(kind string, request, answer []byte) *Error {
	var msg string
	switch kind {
	case AnswerElicitation:
		e, bad := hostvalidate.ElicitationRequest(request, true, true)
		if bad != "" {
			return Errorf(StatusInvalidArgument, "the elicitation request: %s", bad)
		}
		_, msg = e.Answer(answer)
	case AnswerSampling:
		msg = hostvalidate.SamplingAnswer(answer)
	case AnswerRoots:
		msg = hostvalidate.RootsAnswer(answer)
	default:
		return Errorf(StatusInvalidArgument, "unknown answer kind %q (elicitation, sampling or roots)", kind)
	}
	if msg != "" {
		return Errorf(StatusInvalidArgument, "%s", msg)
	}
	return nil
}
