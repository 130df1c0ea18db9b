package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "bridge.h"
*/
import "C"

import (
	"github.com/lemonmcp/lemonmcp/core"
	"github.com/lemonmcp/lemonmcp/host"
	"github.com/lemonmcp/lemonmcp/internal/jsonx"
)

//export lmcp_host_new_file
func lmcp_host_new_file(path *C.cchar_t, options *C.cchar_t, olen C.size_t, hostOut **C.lmcp_host, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_host_new_file")
	if hostOut == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "host_out is NULL"))
	}
	*hostOut = nil
	p, err := cString(path, "path")
	if err != nil {
		return setErr(errOut, err)
	}
	opts, err := host.ParseLoadOptions(goBytes(options, olen))
	if err != nil {
		return setErr(errOut, err)
	}
	cfg, err := host.LoadFile(p, opts)
	if err != nil {
		return setErr(errOut, err)
	}
	h, err := host.New(cfg, libraryVersion)
	if err != nil {
		return setErr(errOut, &core.Error{Status: err.Status, Message: p + ": " + err.Message})
	}
	*hostOut = hosts.save(h)
	return setErr(errOut, nil)
}

//export lmcp_host_warnings
func lmcp_host_warnings(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_warnings")
	return hostJSON(hp, out, lenOut, errOut, func(h *host.Host) ([]byte, *core.Error) {
		w := h.Warnings()
		if w == nil {
			w = []string{}
		}
		return jsonx.MustMarshal(w), nil
	})
}
