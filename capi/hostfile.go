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
	return hosts.create(hostOut, "host_out", errOut, func() (*host.Host, *core.Error) {
		p, err := cString(path, "path")
		if err != nil {
			return nil, err
		}
		opts, err := host.ParseLoadOptions(goBytes(options, olen))
		if err != nil {
			return nil, err
		}
		cfg, err := host.LoadFile(p, opts)
		if err != nil {
			return nil, err
		}
		h, err := host.New(cfg, libraryVersion)
		if err != nil {
			return nil, &core.Error{Status: err.Status, Message: p + ": " + err.Message}
		}
		return h, nil
	})
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

//export lmcp_host_file_server
func lmcp_host_file_server(path *C.cchar_t, options *C.cchar_t, olen C.size_t, name *C.cchar_t, out **C.char, lenOut *C.size_t, errOut **C.char) (st C.lmcp_status) {
	defer recoverExport(&st, errOut, "lmcp_host_file_server")
	if out == nil {
		return setErr(errOut, core.Errorf(core.StatusInvalidArgument, "json_out is NULL"))
	}
	p, err := cString(path, "path")
	if err != nil {
		return setErr(errOut, err)
	}
	opts, err := host.ParseLoadOptions(goBytes(options, olen))
	if err != nil {
		return setErr(errOut, err)
	}
	var n string
	if name != nil {
		n = C.GoString(name)
	}
	sc, cfg, err := host.FileServer(p, opts, n, libraryVersion)
	if err != nil {
		return setErr(errOut, err)
	}
	warnings := cfg.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	writeJSON(jsonx.MustMarshal(map[string]any{
		"name":        sc.Name,
		"enabled":     sc.Enabled,
		"config":      jsonx.RawMessage(sc.Client),
		"warnings":    warnings,
		"host_guards": host.HostGuards(cfg, sc),
	}), out, lenOut)
	return setErr(errOut, nil)
}
