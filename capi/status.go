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
