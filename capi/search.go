package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "host_bridge.h"
*/
import "C"

import "github.com/lemonmcp/lemonmcp/core"

//export lmcp_host_search_tools
func lmcp_host_search_tools(hp *C.lmcp_host, query *C.cchar_t, options *C.cchar_t, olen C.size_t, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverHost(&st, errOut, hp, "lmcp_host_search_tools")
	if out == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "json_out is NULL"))
	}
	*out = nil
	h, err := lookupHost(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	q, err := cString(query, "query")
	if err != nil {
		return setErr(errOut, err)
	}
	opts, err := h.ParseSearchOptions(goBytes(options, olen))
	if err != nil {
		return setErr(errOut, err)
	}
	data, err := h.SearchTools(q, opts)
	if err != nil {
		return setErr(errOut, err)
	}
	jsonOut(data, out, lenOut)
	return setErr(errOut, nil)
}
