#!/usr/bin/env bash
# test-install: `make install` gives C and C++ hosts a library they build with
# `pkg-config --cflags --libs lemonmcp` alone and run without LD_LIBRARY_PATH:
#   1. a scratch prefix: the .pc file's Libs carry an rpath to its lib/;
#   2. the system prefix /usr/local: no rpath, install runs ldconfig, and
#      uninstall removes every file again (run as root only, and only when no
#      lemonmcp is installed there already: the test must not replace a
#      user's install).
#   3. the Elixir mix project, copied out of the repository, builds its NIF
#      against the installed library through pkg-config.
# Called by mk/install.mk with MAKE, SONAME and FIXTURE set; prints "install: N passed,
# N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
unset LD_LIBRARY_PATH
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok   install: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL install: $1"; }

write_hosts() { # dir
  cat > "$1/host.c" <<'C'
#include <lemonmcp.h>
#include <stdio.h>
int main(void) {
  char *j = 0;
  if (lmcp_features(&j, 0) != LMCP_OK) return 1;
  lmcp_free(j);
  return lmcp_abi_version() == LMCP_ABI_VERSION ? 0 : 1;
}
C
  cat > "$1/host.cpp" <<'CPP'
#include <lemonmcp.hpp>
int main() {
  try {
    lemonmcp::Client c("{\"transport\":{\"type\":\"stdio\",\"comand\":\"x\"}}");
    return 1;
  } catch (const lemonmcp::Error &e) {
    return e.status() == LMCP_E_INVALID_ARGUMENT && lemonmcp::version() == LMCP_VERSION_STRING ? 0 : 1;
  }
}
CPP
}

# build_and_run NAME DIR: compiles both hosts with pkg-config's flags and runs them.
build_and_run() {
  local name=$1 dir=$2 flags
  if ! flags=$(pkg-config --cflags --libs lemonmcp); then fail "$name: pkg-config does not find lemonmcp"; return 1; fi
  write_hosts "$dir"
  if ! cc -std=c99 -Wall -Wextra -Werror "$dir/host.c" $flags -o "$dir/host"; then fail "$name: C host does not build"; return 1; fi
  if ! c++ -std=c++17 -Wall -Wextra -Werror "$dir/host.cpp" $flags -o "$dir/hostxx"; then fail "$name: C++ host does not build"; return 1; fi
  if ! "$dir/host"; then fail "$name: C host does not run without LD_LIBRARY_PATH"; return 1; fi
  if ! "$dir/hostxx"; then fail "$name: C++ host does not run without LD_LIBRARY_PATH"; return 1; fi
  return 0
}

# 1. Scratch prefix.
# Everything to undo on exit, whatever happens: scratch directories, and the
# system install once it is made.
cleanup_dirs=() system_installed=
cleanup() {
  rm -rf "${cleanup_dirs[@]}"
  if [ -n "$system_installed" ]; then $MAKE --no-print-directory uninstall PREFIX="$system_installed" >/dev/null 2>&1; fi
}
trap cleanup EXIT
prefix=$(mktemp -d); cleanup_dirs+=("$prefix")
if $MAKE --no-print-directory install PREFIX="$prefix" >/dev/null; then
  if PKG_CONFIG_PATH=$prefix/lib/pkgconfig build_and_run scratch "$prefix"; then
    soname=$(readelf -d "$prefix/lib/$SONAME" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    runpath=$(readelf -d "$prefix/host" | sed -n 's/.*R\(UN\)\?PATH.*\[\(.*\)\]/\2/p')
    if [ "$soname" != "$SONAME" ]; then fail "scratch: SONAME is '$soname', want $SONAME"
    elif [ "$runpath" != "$prefix/lib" ]; then fail "scratch: host's runpath is '$runpath', want $prefix/lib"
    else pass "scratch prefix (rpath from lemonmcp.pc)"; fi
  fi
else
  fail "scratch: make install failed"
fi

# 2. System prefix.
# /usr/local is shared by every clone on the machine: a second run checking
# "nothing installed" while the first is between its install and uninstall
# would install over it, and one run's uninstall would pull the library from
# under the other's build and ldconfig checks. A lock serializes this section
# across runs, and the section undoes its own install before releasing it (so
# the EXIT trap never uninstalls what another run has since installed).
sys=/usr/local
sys_lock=/tmp/lemonmcp-test-install-usr-local.lock
exec 9>"$sys_lock"
if [ "$(id -u)" != 0 ]; then
  echo "note install: not root, the $sys install (ldconfig) was not tried"
elif ! flock -w 900 9; then
  fail "system: another test-install held $sys_lock for 15 minutes"
elif [ -e "$sys/lib/$SONAME" ] || [ -e "$sys/lib/pkgconfig/lemonmcp.pc" ]; then
  echo "note install: a lemonmcp is already installed in $sys; the system install was not tried"
else
  work=$(mktemp -d); cleanup_dirs+=("$work"); system_installed=$sys
  if $MAKE --no-print-directory install PREFIX=$sys >/dev/null && build_and_run system "$work"; then
    runpath=$(readelf -d "$work/host" | grep -c 'R\(UN\)\?PATH')
    if [ "$runpath" != 0 ]; then fail "system: host has an rpath; want none under $sys"
    elif ! grep -q "$SONAME" <<<"$(ldconfig -p)"; then fail "system: ldconfig does not list $SONAME"
    else
      $MAKE --no-print-directory uninstall PREFIX=$sys >/dev/null
      if ls "$sys/lib/$SONAME" "$sys/include/lemonmcp.h" "$sys/include/lemonmcp.hpp" "$sys/lib/pkgconfig/lemonmcp.pc" "$sys/libexec/lemonmcp-sandbox" 2>/dev/null | grep -c . >/dev/null; then
        fail "system: uninstall left files behind"
      elif grep -q "$SONAME" <<<"$(ldconfig -p)"; then fail "system: ldconfig still lists $SONAME after uninstall"
      else pass "system prefix $sys (ldconfig, no rpath; uninstall removes it)"; fi
    fi
  fi
  $MAKE --no-print-directory uninstall PREFIX=$sys >/dev/null 2>&1; system_installed=
fi
exec 9>&- # releases the lock; section 3 (the BEAM) must not inherit it
# 3. The Elixir project, copied out of the repository, builds its NIF against
#    the scratch prefix's library found through pkg-config, and runs.
if ! command -v mix >/dev/null; then
  echo "note install: mix is not installed; the Elixir build against an installed library was not tried"
else
  ex=$(mktemp -d); cleanup_dirs+=("$ex")
  (cd bindings/elixir_nif && git ls-files -z . | xargs -0 cp --parents -t "$ex")
  if ! $MAKE --no-print-directory install PREFIX="$prefix" >/dev/null; then
    fail "elixir: make install failed"
  elif (cd "$ex" && env -u LEMONMCP_LIB PKG_CONFIG_PATH=$prefix/lib/pkgconfig MIX_ENV=prod \
        mix run --no-start -e '
          {:ok, c} = LemonMCP.Client.start_link(command: System.fetch_env!("FIXTURE"))
          :ok = LemonMCP.Client.await_ready(c, 20_000)
          {:ok, [%{"text" => "pkg-config"}]} = LemonMCP.Client.call_tool(c, "echo", %{text: "pkg-config"})
          :ok = LemonMCP.Client.close(c)
          IO.puts("elixir-ok")
        ') >"$ex/log" 2>&1 && grep -q "elixir-ok" "$ex/log" \
        && cmp -s "$ex/_build/prod/lib/lemon_mcp/priv/liblemonmcp.so.1" "$prefix/lib/$SONAME"; then
    pass "elixir NIF built against the installed library (pkg-config), outside the repository"
  else
    fail "elixir NIF against the installed library"; tail -20 "$ex/log" | sed 's/^/    /'
  fi
fi

echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
