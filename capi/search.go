package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
)

//export lmcp_host_search_tools
func lmcp_host_search_tools(hp *C.lmcp_host, query *C.cchar_t, options *C.cchar_t, olen C.size_t, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_search_tools")
	return hostJSON(hp, out, lenOut, errOut, func(h *host.Host) ([]byte, *core.Error) {
		q, err := cString(query, "query")
		if err != nil {
			return nil, err
		}
		opts, err := h.ParseSearchOptions(goBytes(options, olen))
		if err != nil {
			return nil, err
		}
		return h.SearchTools(q, opts)
	})
}
