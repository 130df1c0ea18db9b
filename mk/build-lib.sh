#!/bin/sh
# build-lib.sh ROOT OUT: builds liblemonmcp as a C shared library from the Go
# module at ROOT into the file OUT. The one recipe for the library: `make lib`
# (mk/lib.mk) and the Python package's build (bindings/python/setup.py, also
# from an sdist, which carries this script) both call it, so a wheel's library
# is built exactly as the repository's.
#   SONAME  liblemonmcp.so.<LMCP_ABI_VERSION>, read from ROOT/include/lemonmcp.h
#   -z nodelete: the library is never unloaded (a Go runtime cannot be)
set -eu
root=$1 out=$2
abi=$(sed -n 's/^#define LMCP_ABI_VERSION \([0-9]*\)$/\1/p' "$root/include/lemonmcp.h")
[ -n "$abi" ] || { echo "build-lib.sh: no LMCP_ABI_VERSION in $root/include/lemonmcp.h" >&2; exit 1; }
cd "$root"
GOFLAGS="${GOFLAGS:--buildvcs=false}" exec "${GO:-go}" build -buildmode=c-shared -trimpath \
	-ldflags "-s -w -extldflags '-Wl,-soname,liblemonmcp.so.$abi -Wl,-z,nodelete'" \
	-o "$out" ./capi
