package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"sync"
	"time"
	"unsafe"

	"github.com/lemonmcp/lemonmcp/config"
	"github.com/lemonmcp/lemonmcp/core"
)

// The conversions between C and Go data every export uses: the one place
// that allocates what the host frees with lmcp_free.

// cBytes copies b into new C memory with a trailing NUL; the host frees it
// with lmcp_free. Go copies into the C memory itself: one cgo call (malloc)
// per result rather than two, as a result is copied on every call's path.
func cBytes(b []byte) *C.char {
	p := C.malloc(C.size_t(len(b) + 1))
	dst := unsafe.Slice((*byte)(p), len(b)+1)
	dst[copy(dst, b)] = 0
	return (*C.char)(p)
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

// kindNames caches the static C strings of event and app-request kinds
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

// writeJSON hands data to the host as library-allocated memory.
func writeJSON(data []byte, out **C.char, lenOut *C.size_t) {
	*out = cBytes(data)
	if lenOut != nil {
		*lenOut = C.size_t(len(data))
	}
}

// callStarted finishes an asynchronous call export: its status, and the
// call's id in *callIDOut when the host asked for it.
func callStarted(id uint64, err *core.Error, callIDOut *C.lmcp_call_id, errOut **C.char) C.lmcp_status {
	if err != nil {
		return setErr(errOut, err)
	}
	if callIDOut != nil {
		*callIDOut = C.lmcp_call_id(id)
	}
	return setErr(errOut, nil)
}

// jsonResult finishes an export that hands JSON to the host: *out (named
// outName in the NULL error) is cleared first, then set from get.
func jsonResult(out **C.char, lenOut *C.size_t, outName string, errOut **C.char, get func() ([]byte, *core.Error)) C.lmcp_status {
	if out == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "%s is NULL", outName))
	}
	*out = nil
	data, err := get()
	if err != nil {
		return setErr(errOut, err)
	}
	writeJSON(data, out, lenOut)
	return setErr(errOut, nil)
}

// millis converts a timeout argument; a negative one waits without limit.
func millis(ms C.int64_t) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// cString converts a required string argument named what.
func cString(p *C.cchar_t, what string) (string, *core.Error) {
	if p == nil {
		return "", core.Errorf(core.StatusInvalidArgument, "%s is NULL", what)
	}
	return C.GoString(p), nil
}

// callArgs converts the common arguments of the call functions.
func callArgs(method *C.cchar_t, params *C.cchar_t, plen C.size_t, options *C.cchar_t, olen C.size_t) (string, []byte, core.CallOptions, *core.Error) {
	if method == nil {
		return "", nil, core.CallOptions{}, core.Errorf(core.StatusInvalidArgument, "method is NULL")
	}
	opts, err := config.ParseCallOptions(goBytes(options, olen))
	if err != nil {
		return "", nil, opts, err
	}
	return C.GoString(method), goBytes(params, plen), opts, nil
}
