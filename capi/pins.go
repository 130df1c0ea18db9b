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

//export lmcp_host_pins
func lmcp_host_pins(hp *C.lmcp_host, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_pins")
	return hostJSON(hp, out, lenOut, errOut, func(h *host.Host) ([]byte, *core.Error) { return h.Pins() })
}

//export lmcp_host_approve
func lmcp_host_approve(hp *C.lmcp_host, approval *C.cchar_t, alen C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer hosts.recover(&st, errOut, hp, "lmcp_host_approve")
	h, err := hosts.lookup(hp)
	if err != nil {
		return setErr(errOut, err)
	}
	return setErr(errOut, h.ApproveJSON(goBytes(approval, alen)))
}
