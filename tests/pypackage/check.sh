#!/usr/bin/env bash
# test-python-package: the Python package installs the ways a user installs it.
#   wheel      auditwheel finds it consistent with its manylinux tag; it holds
#              liblemonmcp.so and no third-party dependency; installed into a
#              venv it imports and calls the fixture server
#   sdist      `pip install lemonmcp-*.tar.gz` builds the library with Go from
#              the sources the sdist carries
#   tree       `pip install ./bindings/python` on a fresh copy of the tracked
#              tree (no build/ directory), on a terminal, where the build
#              says what it is doing; then `pip install -e` of it
#   no Go      the same install without Go on PATH fails and says Go is needed
# Each install goes into its own venv; pip's build isolation stays on, as for
# a user (setuptools comes from PyPI, cached in .cache/pip).
# Environment (from mk/pypackage.mk): PYTHON, PYTOOLS (auditwheel's --target
# directory), FIXTURE, DIST.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export PIP_CACHE_DIR=$root/.cache/pip PIP_DISABLE_PIP_VERSION_CHECK=1
unset LEMONMCP_LIBRARY PYTHONPATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok   python-package: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL python-package: $1"; [ -n "${2:-}" ] && tail -20 "$2" | sed 's/^/    /'; }

wheel=$(ls "$DIST"/lemonmcp-*.whl 2>/dev/null | head -1)
sdist=$(ls "$DIST"/lemonmcp-*.tar.gz 2>/dev/null | head -1)

# smoke VENV: the installed package (not the source tree) connects to the
# fixture, calls a tool, and its library is the one inside the package.
smoke() {
  (cd "$work" && "$1/bin/python" - "$FIXTURE" <<'PY'
import os, sys
import lemonmcp
from lemonmcp import _ffi
pkg = os.path.dirname(lemonmcp.__file__)
assert _ffi.library_path().startswith(pkg), (_ffi.library_path(), pkg)
with lemonmcp.Client({"transport": {"type": "stdio", "command": sys.argv[1]}}) as c:
    text = c.call_tool("echo", {"text": "installed"}).text
    assert "installed" in text, text
print(pkg)
PY
  )
}

# Three lanes side by side (each mostly waits on pip and venv creation),
# each with its own report, printed afterwards in this order: the wheel;
# the sdist; the tree (install, then -e, then without Go, on one copy).

check_wheel() {
# 1. The wheel.
if [ -z "$wheel" ]; then
  fail "no wheel in $DIST"
else
  name=$(basename "$wheel")
  show=$(PYTHONPATH=$PYTOOLS PATH=$PYTOOLS/bin:$PATH "$PYTHON" -m auditwheel show "$wheel" 2>&1)
  tag=$(echo "$name" | sed -n 's/.*-\(manylinux_[0-9]*_[0-9]*_x86_64\|manylinux_[0-9]*_[0-9]*_aarch64\)\.whl$/\1/p')
  if [ -z "$tag" ]; then fail "wheel $name has no manylinux platform tag"
  elif ! tr -s '[:space:]' ' ' <<<"$show" | grep -c "consistent with the following platform tag: \"$tag\"" >/dev/null; then
    fail "auditwheel show does not confirm $tag for $name:"; echo "$show" | sed 's/^/    /'
  elif ! "$PYTHON" -m zipfile -l "$wheel" > "$work/wheel.txt" || ! grep -q 'lemonmcp/liblemonmcp.so' "$work/wheel.txt"; then
    fail "wheel has no lemonmcp/liblemonmcp.so"
  elif ! "$PYTHON" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
# An optional extra (lemonmcp[otel]) is allowed; anything installed by default is not.
sys.exit(any(l.startswith("Requires-Dist:") and "extra ==" not in l for l in z.read(meta).decode().splitlines()))' "$wheel"; then
    fail "wheel declares a required runtime dependency"
  else
    "$PYTHON" -m venv "$work/vw" && "$work/vw/bin/pip" install -q --no-index "$wheel" >"$work/vw.log" 2>&1 \
      && smoke "$work/vw" >/dev/null 2>>"$work/vw.log" && pass "wheel $name (auditwheel: $tag)" \
      || fail "wheel does not install and run" "$work/vw.log"
  fi
fi
}

check_sdist() {
# 2. The sdist, built with Go from the sources it carries.
if [ -z "$sdist" ]; then
  fail "no sdist in $DIST"
elif ! tar tzf "$sdist" > "$work/sdist.txt" || ! grep -q '/golib/capi/exports.go$' "$work/sdist.txt"; then
  fail "sdist carries no Go sources (golib/)"
elif grep -q '\.so$' "$work/sdist.txt"; then
  fail "sdist carries a binary library"
else
  "$PYTHON" -m venv "$work/vs" && "$work/vs/bin/pip" install -q "$sdist" >"$work/vs.log" 2>&1 \
    && smoke "$work/vs" >/dev/null 2>>"$work/vs.log" && pass "sdist $(basename "$sdist") builds with Go" \
    || fail "sdist does not build, install and run" "$work/vs.log"
fi
}

check_tree() {
# 3. A fresh copy of the tracked tree: pip install ./bindings/python, then -e.
tree=$work/tree
mkdir -p "$tree" && (cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$tree")
"$PYTHON" -m venv "$work/vt"
if [ -e "$tree/build" ]; then fail "the fresh copy already has build/"
# As a user types it, on a terminal (script gives pip one): pip hides a
# build's output, so the build itself must say that it compiles for minutes.
elif (cd "$tree" && script -qec "'$work/vt/bin/pip' install ./bindings/python" /dev/null) >"$work/vt.log" 2>&1 \
    && smoke "$work/vt" >/dev/null 2>>"$work/vt.log"; then
  pass "pip install ./bindings/python on a fresh tree"
  if grep -q "lemonmcp: building liblemonmcp.so from the Go sources" "$work/vt.log" \
      && grep -q "lemonmcp: built liblemonmcp.so and lemonmcp-sandbox in [0-9]* s" "$work/vt.log"; then
    pass "the source build says on the terminal what it is doing"
  else
    fail "the source build is silent on the terminal under pip's default output" "$work/vt.log"
  fi
else
  fail "pip install ./bindings/python on a fresh tree" "$work/vt.log"
fi
"$PYTHON" -m venv "$work/ve"
if (cd "$tree" && "$work/ve/bin/pip" install -q -e ./bindings/python) >"$work/ve.log" 2>&1 \
  && loc=$(smoke "$work/ve" 2>>"$work/ve.log") && [ "$loc" = "$tree/bindings/python/lemonmcp" ]; then
  pass "pip install -e ./bindings/python imports from the tree"
else
  fail "pip install -e ./bindings/python (package at '${loc:-?}')" "$work/ve.log"
fi

# 4. Without Go the build stops and says what is missing.
rm -rf "$tree/bindings/python/build" "$tree/bindings/python/lemonmcp/liblemonmcp.so"
"$PYTHON" -m venv "$work/vn"
nogo_path=$work/vn/bin:$(echo "$PATH" | tr ':' '\n' | grep -v '/go/bin$' | grep -v '/go$' | paste -sd:)
if PATH=$nogo_path command -v go >/dev/null; then
  echo "note python-package: go is on every PATH entry tried; the no-Go case was not run"
elif (cd "$tree" && PATH=$nogo_path "$work/vn/bin/pip" install ./bindings/python) >"$work/vn.log" 2>&1; then
  fail "install without Go succeeded (it cannot have built the library)"
elif grep -q "needs Go 1.26 or newer on PATH" "$work/vn.log"; then
  pass "without Go: a clear message"
else
  fail "without Go: no clear message" "$work/vn.log"
fi
}

check_wheel >"$work/wheel.report" 2>&1 &
check_sdist >"$work/sdist.report" 2>&1 &
check_tree >"$work/tree.report" 2>&1 &
wait
cat "$work/wheel.report" "$work/sdist.report" "$work/tree.report"
passed=$(cat "$work"/*.report | grep -c "^ok   python-package:")
failed=$(cat "$work"/*.report | grep -c "^FAIL python-package:")


echo "python-package: $passed passed, $failed failed"
[ "$failed" = 0 ]
