package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
)

// statusText holds lmcp_status_string's static C strings, indexed by
// -status, built once from core.Status's names (the only table of them),
// and the name of a value that is no status.
var statusText, unknownStatusText = func() ([]*C.cchar_t, *C.cchar_t) {
	static := func(s string) *C.cchar_t { return (*C.cchar_t)(unsafe.Pointer(C.CString(s))) } // never freed
	all := core.Statuses()
	text := make([]*C.cchar_t, len(all))
	for _, s := range all {
		text[-s] = static(s.String())
	}
	return text, static(core.Status(1).String())
}()

//export lmcp_status_string
func lmcp_status_string(status C.lmcp_status) *C.cchar_t {
	if status <= 0 && int(status) > -len(statusText) {
		return statusText[-status]
	}
	return unknownStatusText
}

// The header's status numbers are core's: on any drift the build fails (a
// constant index other than 0 is out of range).
var (
	_ = [1]struct{}{}[core.StatusOK-C.LMCP_OK]
	_ = [1]struct{}{}[core.StatusInvalidArgument-C.LMCP_E_INVALID_ARGUMENT]
	_ = [1]struct{}{}[core.StatusInvalidHandle-C.LMCP_E_INVALID_HANDLE]
	_ = [1]struct{}{}[core.StatusInvalidState-C.LMCP_E_INVALID_STATE]
	_ = [1]struct{}{}[core.StatusNotFound-C.LMCP_E_NOT_FOUND]
	_ = [1]struct{}{}[core.StatusTimeout-C.LMCP_E_TIMEOUT]
	_ = [1]struct{}{}[core.StatusCancelled-C.LMCP_E_CANCELLED]
	_ = [1]struct{}{}[core.StatusClosed-C.LMCP_E_CLOSED]
	_ = [1]struct{}{}[core.StatusTransport-C.LMCP_E_TRANSPORT]
	_ = [1]struct{}{}[core.StatusProtocol-C.LMCP_E_PROTOCOL]
	_ = [1]struct{}{}[core.StatusUnsupported-C.LMCP_E_UNSUPPORTED]
	_ = [1]struct{}{}[core.StatusAuthRequired-C.LMCP_E_AUTH_REQUIRED]
	_ = [1]struct{}{}[core.StatusPolicyDenied-C.LMCP_E_POLICY_DENIED]
	_ = [1]struct{}{}[core.StatusABIMismatch-C.LMCP_E_ABI_MISMATCH]
	_ = [1]struct{}{}[core.StatusInternal-C.LMCP_E_INTERNAL]
)
