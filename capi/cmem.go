package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/core"
)

// cBytes copies b into new C memory with a trailing NUL; the host frees it
// with lmcp_free.
func cBytes(b []byte) *C.char {
	p := (*C.char)(C.malloc(C.size_t(len(b) + 1)))
	if len(b) > 0 {
		C.memcpy(unsafe.Pointer(p), unsafe.Pointer(&b[0]), C.size_t(len(b)))
	}
	*(*byte)(unsafe.Add(unsafe.Pointer(p), len(b))) = 0
	return p
}

// goBytes copies a host buffer; NULL or length 0 is absent.
func goBytes(p *C.cchar_t, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(p), C.int(n))
}

// setErr stores err's JSON in *out when out is not NULL.
func setErr(out **C.char, err *core.Error) C.lmcp_status {
	if err == nil {
		if out != nil {
			*out = nil
		}
		return C.LMCP_OK
	}
	if out != nil {
		*out = cBytes(err.JSON())
	}
	return C.lmcp_status(err.Status)
}

// borrow returns a pointer to b's bytes, NUL-terminated, for the duration of
// a callback. b must be a slice the caller owns.
func borrow(b []byte) (*C.char, C.size_t, []byte) {
	n := len(b)
	b = append(b, 0)
	return (*C.char)(unsafe.Pointer(&b[0])), C.size_t(n), b
}

// kindNames caches the static C strings of event and host-request kinds
// (lmcp_bridge_intern), so an event costs no cgo call for its kind.
var kindNames sync.Map // string → *C.char

func cKind(kind string) *C.char {
	if p, ok := kindNames.Load(kind); ok {
		return p.(*C.char)
	}
	s := C.lmcp_bridge_intern((*C.char)(unsafe.Pointer(unsafe.StringData(kind))), C.size_t(len(kind)))
	kindNames.Store(kind, s)
	return s
}
