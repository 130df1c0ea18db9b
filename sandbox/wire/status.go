package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"syscall"
)

// The status pipe (the helper's StatusFD, close-on-exec there so the
// server never holds it) carries records, each ending in '\n':
//
//   - once the server is exec'd, 'S' and the Report of what the helper set
//     up for it, as JSON;
//   - or, when a step the policy asks for failed, 'F' and the Failure, as
//     JSON, and the helper exits ExitSetupFailed without starting the
//     server;
//   - once the server is reaped, the end record: 'L', the kind ('x'
//     exited, 's' killed by a signal, 'c' killed with a core dump), the
//     exit code or signal number, '\n' (4 bytes). The helper cannot pass
//     a death by signal on in its own wait status: as the init of a PID
//     namespace it cannot die by the signals it sends itself.
//
// Each record is one write below PIPE_BUF, so it arrives whole.
const (
	recordSetup   = 'S'
	recordFailure = 'F'
	recordEnd     = 'L'
)

// EndRecordLen is the length of the end record.
const EndRecordLen = 4

const (
	statusExited = 'x'
	statusKilled = 's'
	statusCore   = 'c'
)

// Failure is a step the helper could not take: the layer it belongs to
// ("Landlock", "namespaces", "seccomp", "limits", "privileges", "the
// proxy", "the helper"), the step ("landlock_restrict_self") and the
// system's reason.
type Failure struct {
	Layer string `json:"layer"`
	Step  string `json:"step"`
	Error string `json:"error"`
}

func (f Failure) String() string { return f.Layer + ": " + f.Step + " failed: " + f.Error }

// setup is the setup record's body: the report, and the server's pid as
// the helper sees it (in its PID namespace, when it has one), by which the
// library finds the server among the helper's children.
type setup struct {
	Report *Report `json:"report"`
	PID    int     `json:"pid,omitempty"`
}

// SetupRecord encodes the setup report of the server pid.
func SetupRecord(r *Report, pid int) []byte { return record(recordSetup, setup{r, pid}) }

// FailureRecord encodes a failed step.
func FailureRecord(f Failure) []byte { return record(recordFailure, f) }

func record(kind byte, v any) []byte {
	b, _ := json.Marshal(v) // plain structs of strings, bools and ints
	return append(append([]byte{kind}, b...), '\n')
}

// errNoSetup: the helper ended without a setup record.
var errNoSetup = errors.New("the sandbox helper ended before it started the server")

// ParseSetup decodes the first record of the pipe: the report and the
// server's pid in the helper's PID namespace (0 when not given), or the
// failure as an error naming the layer and why.
func ParseSetup(line []byte) (*Report, int, error) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if len(line) == 0 {
		return nil, 0, errNoSetup
	}
	switch line[0] {
	case recordSetup:
		var st setup
		if err := json.Unmarshal(line[1:], &st); err != nil || st.Report == nil {
			return nil, 0, errors.New("the sandbox helper sent a malformed report")
		}
		return st.Report, st.PID, nil
	case recordFailure:
		var f Failure
		if err := json.Unmarshal(line[1:], &f); err != nil || f.Layer == "" {
			return nil, 0, errors.New("the sandbox helper sent a malformed failure")
		}
		return nil, 0, &SetupError{f}
	}
	return nil, 0, errNoSetup
}

// SetupError is a start the helper refused: a step failed.
type SetupError struct{ Failure Failure }

func (e *SetupError) Error() string { return e.Failure.String() }

// EndRecord encodes ws; ok is false for a status that is not an end.
func EndRecord(ws syscall.WaitStatus) (rec [EndRecordLen]byte, ok bool) {
	switch {
	case ws.Exited():
		return [EndRecordLen]byte{recordEnd, statusExited, byte(ws.ExitStatus()), '\n'}, true
	case ws.Signaled() && ws.CoreDump():
		return [EndRecordLen]byte{recordEnd, statusCore, byte(ws.Signal()), '\n'}, true
	case ws.Signaled():
		return [EndRecordLen]byte{recordEnd, statusKilled, byte(ws.Signal()), '\n'}, true
	}
	return rec, false
}

// ParseEndRecord decodes an end record into the wait(2) status word it
// stands for.
func ParseEndRecord(b []byte) (syscall.WaitStatus, bool) {
	if len(b) != EndRecordLen || b[0] != recordEnd || b[3] != '\n' {
		return 0, false
	}
	v := syscall.WaitStatus(b[2])
	switch b[1] {
	case statusExited:
		return v << 8, true
	case statusKilled:
		if v == 0 || v > 0x7e {
			return 0, false
		}
		return v, true
	case statusCore:
		if v == 0 || v > 0x7e {
			return 0, false
		}
		return v | 0x80, true
	}
	return 0, false
}
