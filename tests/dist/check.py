#!/usr/bin/env python3
"""test-dist: the release files of `make dist` install and run as a user
installs them, by docs/install.md, whose blocks marked `install-test: NAME`
are run word for word (and every other block must say why it is not).

    python   the x86_64 wheel into a fresh venv by a process whose PATH has
             no Go and no C compiler; the README's Python example against
             the fixture server, the command line, and a sandboxed server
             run by the helper inside the wheel
    c        the C archive unpacked into a prefix; the README's C++ example
             built with pkg-config and run without LD_LIBRARY_PATH
    elixir   the Elixir package compiled with CC=false and no Go from the
             precompiled NIF (LEMONMCP_NIF_URL=file://), then a client call;
             a corrupted archive fails naming the file and installs nothing,
             read through the application's config and over https://; with
             no source configured it says what to set; a plain directory
             works; LEMONMCP_BUILD=1 builds from source against the C archive
    arm64    the C suite built for arm64 runs under qemu-aarch64 against an
             arm64 fixture server, with the arm64 library of the release
             archive; its helper answers its probe under qemu
    floor    every binary's glibc floor (objdump -T), auditwheel show, one
             version everywhere (mk/dist.py check)

Environment (mk/dist.mk): PYTHON, DIST, VERSION, FIXTURE, ARM, FLOOR, PYTOOLS.
Prints "ok   dist: ..." / "FAIL dist: ..." lines and "dist: N passed, N failed".
"""
from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import traceback
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "readme"))
import readme  # noqa: E402  (the README's blocks, as test-readme reads them)

DIST = os.environ["DIST"]
VERSION = os.environ["VERSION"]
FIXTURE = os.environ["FIXTURE"]
ARM = os.environ["ARM"]
FLOOR = os.environ["FLOOR"]
PYTOOLS = os.environ["PYTOOLS"]
TIMEOUT = 600  # seconds, an outer bound on any one step (a hang fails, never blocks make test)
COMPILERS = re.compile(r"^(cc|c\+\+|c89|c99|cpp|gcc.*|g\+\+.*|clang.*|tcc|go|gofmt|zig|ld(\..*)?|as|.*-(gcc|g\+\+|cpp|ld|as)(-.*)?)$")

lock = threading.Lock()
reports: Dict[str, List[str]] = {}
counts = {"passed": 0, "failed": 0}


def report(lane: str, ok: bool, what: str, detail: str = "") -> bool:
    with lock:
        counts["passed" if ok else "failed"] += 1
        lines = reports.setdefault(lane, [])
        lines.append(f"{'ok  ' if ok else 'FAIL'} dist: {lane}: {what}")
        if detail and not ok:
            lines.extend("    " + l for l in detail.rstrip().splitlines()[-25:])
    return ok


def sh(cmd, cwd: str, env: Dict[str, str], input: Optional[str] = None) -> Tuple[int, str]:
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, input=input, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=TIMEOUT, shell=isinstance(cmd, str), executable="/bin/bash"
                           if isinstance(cmd, str) else None)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, f"timed out after {TIMEOUT}s: {cmd}\n{e.stdout or ''}"


# --- docs/install.md --------------------------------------------------------

MARK = re.compile(r"^<!-- install-test: (skip \(.+\)|[a-z-]+) -->$")


def install_blocks() -> Dict[str, str]:
    """The marked blocks of docs/install.md by name; an unmarked block fails."""
    lines = open(os.path.join(ROOT, "docs", "install.md"), encoding="utf-8").read().split("\n")
    out: Dict[str, str] = {}
    unmarked = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```") and lines[i].strip() != "```":
            start, body = i, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            m = MARK.match(lines[start - 1]) if start else None
            if m is None:
                unmarked.append(start + 1)
            elif not m.group(1).startswith("skip"):
                out[m.group(1)] = "\n".join(body) + "\n"
        i += 1
    report("docs", not unmarked, "every block of docs/install.md is run or says why not",
           f"unmarked blocks at lines {unmarked}")
    return out


def readme_code(lang: str, needle: str) -> str:
    found = [b.code for b in readme.blocks() if b.lang == lang and needle in b.code]
    if len(found) != 1:
        raise SystemExit(f"check.py: README.md has {len(found)} {lang} blocks with {needle!r}")
    return found[0]


def substitute(code: str, pattern: str, repl: str) -> str:
    new, n = re.subn(pattern, lambda _: repl, code, flags=re.S | re.M)
    if n != 1:
        raise SystemExit(f"check.py: {pattern!r} matched {n} times in a README example")
    return new


# --- a PATH without compilers ------------------------------------------------


def bare_path(work: str) -> str:
    """A directory of links to every command of /usr/bin and /bin except the
    C compilers, linkers and Go."""
    tools = os.path.join(work, "tools")
    os.makedirs(tools)
    for d in ("/usr/bin", "/bin"):
        for name in os.listdir(d):
            dst = os.path.join(tools, name)
            if COMPILERS.match(name) or os.path.lexists(dst):
                continue
            os.symlink(os.path.join(d, name), dst)
    return tools


def user_env(work: str, path: str, **extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LEMONMCP_", "LD_", "PYTHON", "GO", "CGO", "MIX", "PKG_CONFIG", "MAKE"))
           and k not in ("CC", "CXX", "MFLAGS")}
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    env.update(PATH=path, HOME=home, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1")
    env.update(extra)
    return env


def check_bare(lane: str, path: str) -> bool:
    found = [c for c in ("cc", "gcc", "c++", "clang", "go", "ld") if shutil.which(c, path=path)]
    return report(lane, not found, "PATH holds no Go and no C compiler", f"found {found}")


# --- lanes ------------------------------------------------------------------

PY_SANDBOXED = r'''
import json, os, sys
import lemonmcp
fixture, outside = sys.argv[1], sys.argv[2]
pkg = os.path.dirname(lemonmcp.__file__)
helper = os.path.join(pkg, "lemonmcp-sandbox")
script = f"echo escaped > {outside}/from-server 2>/dev/null; exec {fixture}"
cfg = {"mcpServers": {"boxed": {"command": "/bin/sh", "args": ["-c", script], "sandboxEnabled": True}}}
with lemonmcp.Host(cfg) as host:
    box = host.servers()["boxed"]
    answer = host.call_tool("boxed__echo", {"text": "confined"}).text
    runs = sorted({os.readlink(f"/proc/{p}/exe") for p in os.listdir("/proc") if p.isdigit()
                   and os.path.exists(f"/proc/{p}/exe") and os.path.realpath(f"/proc/{p}/exe") == os.path.realpath(helper)})
print(json.dumps({"state": box["state"], "sandbox": box.get("sandbox"), "answer": answer, "helper_runs": runs,
                  "escaped": os.path.exists(outside + "/from-server"), "version": lemonmcp.library_version(),
                  "pkg_version": lemonmcp.__version__, "library": lemonmcp.library_path()}))
'''


def lane_python(blocks: Dict[str, str], work: str) -> None:
    lane = "python"
    wheel = f"lemonmcp-{VERSION}-py3-none-manylinux_{FLOOR.replace('.', '_')}_x86_64.manylinux2014_x86_64.whl"
    shutil.copy(os.path.join(DIST, wheel), work)
    path = bare_path(work)
    env = user_env(work, path)
    if not check_bare(lane, path):
        return
    rc, out = sh(blocks["python"], work, env)
    if not report(lane, rc == 0, "docs/install.md's Python block installs the wheel without a compiler", out):
        return
    py = os.path.join(work, ".venv", "bin", "python")
    app = readme_code("python", "lemonmcp.Client(server)")
    app = substitute(app, r"^server = \{.*?\}\}$", f'server = {{"transport": {{"type": "stdio", "command": "{FIXTURE}"}}}}')
    app = substitute(app, r'"echo", \{"message": "hello"\}', '"echo", {"text": "hello"}')
    with open(os.path.join(work, "app.py"), "w") as f:
        f.write(app)
    rc, out = sh([py, "app.py"], work, env)
    report(lane, rc == 0 and "'echo'" in out and out.rstrip().endswith("hello"),
           "the README's Python example against the fixture server", out)
    rc, out = sh([os.path.join(work, ".venv", "bin", "lemonmcp"), "--stdio", FIXTURE, "call", "echo", "text=from the wheel"],
                 work, env)
    report(lane, rc == 0 and "from the wheel" in out, "the lemonmcp command line of the wheel", out)
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    os.chmod(outside, 0o777)
    rc, out = sh([py, "-c", PY_SANDBOXED, FIXTURE, outside], work, env)
    try:
        got = json.loads(out.strip().splitlines()[-1]) if rc == 0 else {}
    except ValueError:
        got = {}
    site = os.path.join(work, ".venv", "lib")
    ok = (got.get("state") == "ready" and got.get("answer") == "confined" and not got.get("escaped")
          and (got.get("sandbox") or {}).get("namespaces") is True
          and got.get("helper_runs") and all(p.startswith(site) for p in got["helper_runs"]))
    report(lane, bool(ok), "a sandboxed server, confined by the helper inside the wheel", out)
    ok = (got.get("version") == VERSION and got.get("pkg_version") == VERSION
          and str(got.get("library", "")).startswith(site))
    report(lane, bool(ok), f"lmcp_version() and lemonmcp.__version__ of the wheel are {VERSION}", out)


def lane_c(blocks: Dict[str, str], work: str) -> None:
    lane = "c"
    shutil.copy(os.path.join(DIST, f"lemonmcp-{VERSION}-linux-x86_64.tar.gz"), work)
    app = readme_code("cpp", "lemonmcp::Client client(")
    app = substitute(app, r'R"\(\{"transport".*?\}\}\)"', f'R"({{"transport": {{"type": "stdio", "command": "{FIXTURE}"}}}})"')
    app = substitute(app, r'\{"message": "hello"\}', '{"text": "hello"}')
    with open(os.path.join(work, "app.cpp"), "w") as f:
        f.write(app)
    env = user_env(work, os.environ["PATH"])
    script = blocks["c"] + blocks["cxx"] + 'echo "modversion $(pkg-config --modversion lemonmcp)"\n'
    rc, out = sh(script, work, env)
    report(lane, rc == 0 and '"text":"hello"' in out.replace(" ", ""),
           "the C archive in a prefix builds the README's C++ example with pkg-config, and it runs", out)
    report(lane, f"modversion {VERSION}" in out, f"lemonmcp.pc says version {VERSION}", out)
    prefix = os.path.join(env["HOME"], ".local", "lemonmcp")
    rc, out = sh(["readelf", "-d", os.path.join(work, "app")], work, env)
    runpath = re.search(r"R(?:UN)?PATH.*\[(.*)\]", out)
    report(lane, runpath is not None and os.path.realpath(runpath.group(1)) == os.path.realpath(prefix + "/lib"),
           "the host's rpath is the prefix's lib/", out)
    report(lane, os.access(os.path.join(prefix, "libexec", "lemonmcp-sandbox"), os.X_OK),
           "the archive's sandbox helper is in libexec/")


MIX_PROJECT = '''defmodule MyApp.MixProject do
  use Mix.Project

  def project, do: [app: :my_app, version: "0.1.0", elixir: "~> 1.14", deps: deps()]

{deps}end
'''

EX_CALL = '''
{:ok, c} = LemonMCP.Client.start_link(command: System.fetch_env!("FIXTURE"))
:ok = LemonMCP.Client.await_ready(c, 20_000)
{:ok, [%{"text" => text}]} = LemonMCP.Client.call_tool(c, "echo", %{text: "precompiled"})
:ok = LemonMCP.Client.close(c)
IO.puts("elixir-call #{text} #{LemonMCP.version()} #{Application.spec(:lemon_mcp, :vsn)}")
'''


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D102
        pass


def https_server(directory: str, work: str) -> Tuple[http.server.ThreadingHTTPServer, str]:
    """An https:// server on loopback for directory, its certificate signed
    by a CA of its own: (server, the CA's certificate file)."""
    ca_key, ca, key, csr, cert, ext = (os.path.join(work, n) for n in
                                       ("ca.key", "ca.pem", "srv.key", "srv.csr", "srv.pem", "srv.ext"))
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n")
    for cmd in (
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "1",
         "-subj", "/CN=lemonmcp test CA"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
        ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "1",
         "-extfile", ext],
    ):
        subprocess.run(["openssl"] + cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    handler = lambda *a, **k: _Quiet(*a, directory=directory, **k)  # noqa: E731
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, ca


def lane_elixir(blocks: Dict[str, str], work: str) -> None:
    lane = "elixir"
    target = "x86_64-linux-gnu"
    archive = f"lemon_mcp-nif-{VERSION}-{target}.tar.gz"
    dl = os.path.join(work, "downloads")
    os.makedirs(dl)
    for f in (f"lemon_mcp-{VERSION}.tar.gz", archive, f"lemon_mcp-nif-{VERSION}.sha256"):
        shutil.copy(os.path.join(DIST, f), dl)
    path = bare_path(work)
    if not check_bare(lane, path):
        return
    env = user_env(work, path, CC="false", MIX_ENV="prod", FIXTURE=FIXTURE)
    app = os.path.join(dl, "my_app")
    os.makedirs(os.path.join(app, "lib"))
    deps = "\n".join("  " + l if l else l for l in blocks["elixir-deps"].split("\n"))
    with open(os.path.join(app, "mix.exs"), "w") as f:
        f.write(MIX_PROJECT.format(deps=deps))
    script = blocks["elixir"] + "cd my_app && mix compile && mix run -e " + shlex_quote(EX_CALL) + "\n"
    rc, out = sh(script, dl, env)
    pkg = os.path.join(dl, f"lemon_mcp-{VERSION}")
    ok = rc == 0 and f"fetching the precompiled NIF {archive}" in out and "from source" not in out
    report(lane, ok, "the package compiles with CC=false and no Go from the precompiled NIF (file://)", out)
    report(lane, f"elixir-call precompiled {VERSION} {VERSION}" in out,
           f"a client call through it; lmcp_version() and the package are {VERSION}", out)

    # A corrupted archive: through the application's config, and over https.
    bad = os.path.join(work, "bad")
    os.makedirs(bad)
    with open(os.path.join(dl, archive), "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0xFF
    with open(os.path.join(bad, archive), "wb") as f:
        f.write(bytes(data))
    os.makedirs(os.path.join(app, "config"))
    with open(os.path.join(app, "config", "config.exs"), "w") as f:
        f.write(f'import Config\nconfig :lemon_mcp, nif_url: "file://{bad}"\n')
    # An installed NIF is not fetched again while its files match the
    # checksums it was installed with: one file changed, it is fetched, from
    # the corrupted copy, and the NIF already there must go too.
    priv = os.path.join(pkg, "priv")
    with open(os.path.join(priv, "lemonmcp-sandbox"), "ab") as f:
        f.write(b"\0")
    rc, out = sh("mix deps.compile lemon_mcp --force", app, env)
    nothing = not os.path.exists(os.path.join(priv, "lmcp_nif.so"))
    report(lane, rc != 0 and f"checksum mismatch for {archive}" in out and f"file://{bad}" in out and nothing,
           "a changed install is fetched again; a corrupted archive (config :lemon_mcp, nif_url) fails naming the file and the NIF is removed", out)
    srv, ca = https_server(bad, work)
    try:
        url = f"https://localhost:{srv.server_address[1]}"
        shutil.rmtree(priv, ignore_errors=True)
        rc, out = sh("mix deps.compile lemon_mcp --force", app, dict(env, LEMONMCP_NIF_URL=url, LEMONMCP_NIF_CACERTFILE=ca))
        report(lane, rc != 0 and f"checksum mismatch for {archive}" in out and url in out
               and not os.path.exists(os.path.join(priv, "lmcp_nif.so")),
               "over https:// (LEMONMCP_NIF_URL, the server checked against LEMONMCP_NIF_CACERTFILE) likewise", out)
        shutil.rmtree(priv, ignore_errors=True)
        rc, out = sh("mix deps.compile lemon_mcp --force", app, dict(env, LEMONMCP_NIF_URL=url))
        report(lane, rc != 0 and "cannot fetch" in out and "checksum" not in out,
               "an https:// server the system does not trust is refused", out)
    finally:
        srv.shutdown()

    # A package with no source configured stops and says what to set.
    os.remove(os.path.join(app, "config", "config.exs"))
    shutil.rmtree(priv, ignore_errors=True)
    rc, out = sh("mix deps.compile lemon_mcp --force", app, env)
    report(lane, rc != 0 and "no precompiled NIF source is configured" in out and "LEMONMCP_NIF_URL" in out
           and "LEMONMCP_BUILD=1" in out and not os.path.exists(os.path.join(priv, "lmcp_nif.so")),
           "with no NIF source configured the package stops, naming LEMONMCP_NIF_URL and LEMONMCP_BUILD=1", out)
    rc, out = sh("mix deps.compile lemon_mcp --force", app, dict(env, LEMONMCP_NIF_URL=dl))
    report(lane, rc == 0 and f"fetching the precompiled NIF {archive} from {dl}/" in out
           and os.path.isfile(os.path.join(priv, "lmcp_nif.so")),
           "LEMONMCP_NIF_URL may be a plain directory", out)

    # The package's checksum file, broken: a line that is not "SUM  NAME",
    # and a sum that is not one. Each stops naming the file, and nothing
    # is installed.
    sums = os.path.join(pkg, f"lemon_mcp-nif-{VERSION}.sha256")
    with open(sums) as f:
        good = f.read()
    for text, want in (("notachecksumline\n", "is not a checksum file: line 1"),
                       (f"{'z' * 64}  {archive}\n", f"has no valid sha256 for {archive}")):
        with open(sums, "w") as f:
            f.write(text)
        shutil.rmtree(priv, ignore_errors=True)
        rc, out = sh("mix deps.compile lemon_mcp --force", app, dict(env, LEMONMCP_NIF_URL=dl))
        report(lane, rc != 0 and want in out and os.path.basename(sums) in out and "MatchError" not in out
               and not os.path.exists(os.path.join(priv, "lmcp_nif.so")),
               f"a broken checksum file stops, naming it ({want})", out)
    with open(sums, "w") as f:
        f.write(good)

    # LEMONMCP_BUILD=1 builds from source even with a URL configured: a C
    # compiler on PATH and the library of the C archive (LEMONMCP_LIB, its
    # header and helper found beside it).
    prefix = os.path.join(work, "c-prefix")
    os.makedirs(prefix)
    rc, out = sh(["tar", "-xzf", os.path.join(DIST, f"lemonmcp-{VERSION}-linux-x86_64.tar.gz"), "-C", prefix,
                  "--strip-components=1"], work, dict(os.environ))
    built = user_env(work, os.environ["PATH"], MIX_ENV="prod", FIXTURE=FIXTURE, LEMONMCP_BUILD="1",
                     LEMONMCP_NIF_URL=f"file://{dl}", LEMONMCP_LIB=os.path.join(prefix, "lib", "liblemonmcp.so.1"))
    shutil.rmtree(priv, ignore_errors=True)
    if rc == 0:
        rc, out = sh("mix deps.compile lemon_mcp --force && mix run -e " + shlex_quote(EX_CALL), app, built)
    report(lane, rc == 0 and "building the NIF from source against" in out and "fetching" not in out
           and f"elixir-call precompiled {VERSION} {VERSION}" in out
           and os.path.isfile(os.path.join(priv, "lemonmcp-sandbox")),
           "LEMONMCP_BUILD=1 builds the NIF from source (over a configured URL) against the C archive, and it runs", out)


def shlex_quote(s: str) -> str:
    return shlex.quote(s)


def lane_arm64(work: str) -> None:
    lane = "arm64"
    prefix = os.path.join(work, "prefix")
    os.makedirs(prefix)
    rc, out = sh(["tar", "-xzf", os.path.join(DIST, f"lemonmcp-{VERSION}-linux-aarch64.tar.gz"), "-C", prefix,
                  "--strip-components=1"], work, dict(os.environ))
    if not report(lane, rc == 0, "the arm64 C archive unpacks", out):
        return
    # qemu-user has no PR_SET_CHILD_SUBREAPER (EINVAL): the arm64 helper
    # cannot reap under it, so a confined start fails closed (checked
    # below) and a plain one runs unreaped. The suite runs the servers
    # directly (a helper path that names no file): each start through the
    # helper would be one more emulated process.
    with open(os.path.join(work, "fixture"), "w") as f:
        f.write(f'#!/bin/sh\n# the arm64 fixture, run by qemu (no binfmt_misc here)\nexec qemu-aarch64 {ARM}/mcpfixture "$@"\n')
    os.chmod(os.path.join(work, "fixture"), 0o755)
    env = dict(os.environ, QEMU_LD_PREFIX="/usr/aarch64-linux-gnu", LMCP_FIXTURE=os.path.join(work, "fixture"),
               LEMONMCP_SANDBOX_HELPER=os.path.join(work, "no-helper"), LMCP_TEST_TIME_SCALE="10")
    # Tests whose outcome does not hang on the emulator's speed (the era
    # probe of test_modern_era_happy_path has a deadline of the library's
    # own, which qemu on a loaded machine can miss).
    tests = ["test_status_strings_and_versions", "test_happy_path", "test_concurrent_calls",
             "test_large_result", "test_call_argument_errors", "test_zz_diagnostics_back_to_baseline"]
    rc, out = sh(["qemu-aarch64", "-E", f"LD_LIBRARY_PATH={prefix}/lib", f"{ARM}/lmcp_ctest", "-"] + tests, work, env)
    m = re.search(r"(\d+) passed, (\d+) failed", out)
    ok = rc == 0 and m is not None and int(m.group(1)) == len(tests) and m.group(2) == "0"
    report(lane, ok, f"the C suite ({len(tests)} tests) on arm64 under qemu-aarch64 against the arm64 fixture", out)
    # The archive's helper runs under qemu: its probe answers with its
    # setup record ('S' and {"report": ...}, sandbox/wire/status.go) and
    # tells the truth about the emulator, the subreaper missing and named;
    # a start (not best effort) fails closed naming that step.
    subreaper = "the helper: prctl(PR_SET_CHILD_SUBREAPER) failed"
    helper = f"{prefix}/libexec/lemonmcp-sandbox"
    rc, out = sh(["qemu-aarch64", helper, "-probe"], work, env)
    probe = {}
    if out.startswith("S"):
        try:
            probe = json.loads(out[1:]).get("report") or {}
        except ValueError:
            pass
    ok = rc == 0 and probe.get("reaper") == "none" and probe.get("namespaces") is False \
        and any(m.startswith(subreaper) for m in probe.get("missing") or [])
    report(lane, ok, "the archive's arm64 sandbox helper answers its probe under qemu, the subreaper"
           " reported missing", out)
    rc, out = sh(["qemu-aarch64", helper, "--", "/bin/true", "true"], work, env)
    report(lane, rc == 125 and subreaper in out,
           "a start through the arm64 helper under qemu fails closed (exit 125), naming the subreaper", out)


def lane_floor(work: str) -> None:
    rc, out = sh([sys.executable, os.path.join(ROOT, "mk", "dist.py"), "check", "--dist", DIST, "--version", VERSION,
                  "--floor", FLOOR, "--pytools", PYTOOLS], work, dict(os.environ))
    report("floor", rc == 0, f"every binary needs glibc {FLOOR} at most; auditwheel show confirms each wheel's tag;"
           " every file is named for " + VERSION + "; wheels under 10 MB", out)


def guarded(name: str, fn, *args) -> None:
    """Runs a lane; an exception in it is that lane's failure, never a lost count."""
    try:
        fn(*args)
    except BaseException:  # noqa: BLE001 (SystemExit too: a README example that changed shape)
        report(name, False, "the lane stopped", traceback.format_exc())


def main() -> None:
    blocks = install_blocks()
    with tempfile.TemporaryDirectory(prefix="lemonmcp-dist-") as work:
        lanes = []
        for name, fn, with_blocks in (("arm64", lane_arm64, False), ("elixir", lane_elixir, True),
                                      ("python", lane_python, True), ("c", lane_c, True),
                                      ("floor", lane_floor, False)):
            d = os.path.join(work, name)
            os.makedirs(d)
            args = (blocks, d) if with_blocks else (d,)
            lanes.append(threading.Thread(target=guarded, args=(name, fn) + args))
        for t in lanes:
            t.start()
        for t in lanes:
            t.join()
    for lane in ("docs", "python", "c", "elixir", "arm64", "floor"):
        for line in reports.get(lane, []):
            print(line)
    print(f"dist: {counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] else 0)


if __name__ == "__main__":
    main()
