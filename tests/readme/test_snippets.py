"""Runs every example of the README as the program it is, against the
server it names (@modelcontextprotocol/server-everything, pinned and
installed by tests/everything/everything.py), and fails on a non-zero exit
or, for an example that calls echo, on output without the echo.

All examples run in one scratch directory under .cache/everything/ (so that
`npx -y @modelcontextprotocol/server-everything` finds the installed
package instead of fetching it), holding the README's `file` blocks
(mcp.json). EVERYTHING_URL points mcp.json's HTTP server at a
server-everything this suite starts on loopback. C and C++ build against
build/ and include/; Python imports bindings/python; Elixir runs in a mix
project made from the README's own `deps` block, the path replaced by this
checkout's.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, Iterator, List

import pytest

import readme
from readme import REPO

sys.path.insert(0, os.path.join(REPO, "tests", "everything"))
import everything  # noqa: E402

BUILD = os.path.join(REPO, "build")
# Generous: the machines running this are loaded, and the first Elixir run
# compiles the binding and its NIF. No example is timed.
RUN_TIMEOUT_S = 600

BLOCKS = [b for b in readme.blocks() if b.mark is None and not b.is_deps]


class Work:
    def __init__(self, path: str, env: Dict[str, str]) -> None:
        self.path = path
        self.env = env

    def run(self, argv: List[str], what: str) -> str:
        p = subprocess.run(argv, cwd=self.path, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=RUN_TIMEOUT_S)
        assert p.returncode == 0, f"{what} exited {p.returncode}:\n{p.stdout[-4000:]}"
        return p.stdout


@pytest.fixture(scope="session")
def work() -> Iterator[Work]:
    everything.install()
    path = tempfile.mkdtemp(prefix="readme-", dir=everything.CACHE)
    server = everything.HttpServer("streamableHttp")
    try:
        for b in readme.blocks():
            if b.mark == "file":
                with open(os.path.join(path, b.arg), "w", encoding="utf-8") as f:
                    f.write(b.code)
        env = dict(os.environ)
        env.update({
            "PYTHONPATH": os.path.join(REPO, "bindings", "python"),
            "EVERYTHING_URL": server.url,
            "MIX_ENV": "dev",
        })
        # The examples find the library the way the README says they do.
        for k in ("LEMONMCP_LIB", "LEMONMCP_INCLUDE", "LEMONMCP_FIXTURE"):
            env.pop(k, None)
        yield Work(path, env)
    finally:
        server.stop()
        shutil.rmtree(path, ignore_errors=True)


def _mix_project(w: Work) -> None:
    if os.path.exists(os.path.join(w.path, "mix.exs")):
        return
    deps = [b for b in readme.blocks() if b.is_deps]
    assert len(deps) == 1, "the README must show one `defp deps` block for Elixir applications"
    code = re.sub(r'path: "[^"]*"', 'path: "' + os.path.join(REPO, "bindings", "elixir_nif") + '"', deps[0].code)
    assert "path: " in code, "the README's deps block has no path dependency"
    with open(os.path.join(w.path, "mix.exs"), "w", encoding="utf-8") as f:
        f.write("defmodule ReadmeApp.MixProject do\n  use Mix.Project\n\n"
                "  def project, do: [app: :readme_app, version: \"0.1.0\", deps: deps()]\n\n"
                + "".join("  " + ln + "\n" if ln else "\n" for ln in code.splitlines()) + "end\n")


def _run(w: Work, b: readme.Block) -> str:
    src = os.path.join(w.path, b.name)
    if b.lang == "python":
        with open(src + ".py", "w", encoding="utf-8") as f:
            f.write(b.code)
        return w.run([sys.executable, src + ".py"], b.name)
    if b.lang in ("c", "cpp"):
        ext, cc, std = (".c", os.environ.get("CC", "cc"), "-std=c99") if b.lang == "c" else \
            (".cpp", os.environ.get("CXX", "c++"), "-std=c++17")
        with open(src + ext, "w", encoding="utf-8") as f:
            f.write(b.code)
        w.run([cc, std, "-Wall", "-Wextra", "-Werror", "-I", os.path.join(REPO, "include"), src + ext, "-o", src,
               "-L", BUILD, "-llemonmcp", "-Wl,-rpath," + BUILD], "compiling " + b.name)
        return w.run([src], b.name)
    if b.lang == "elixir":
        _mix_project(w)
        with open(src + ".exs", "w", encoding="utf-8") as f:
            f.write(b.code)
        return w.run(["mix", "run", src + ".exs"], b.name)
    if b.lang == "sh":
        out = ""
        for line in b.code.splitlines():
            if not line.strip():
                continue
            argv = shlex.split(line, comments=True)
            assert argv[0] == "lemonmcp", line
            out += w.run([sys.executable, "-m", "lemonmcp"] + argv[1:], line)
        return out
    raise AssertionError(f"README.md:{b.line}: no way to run a {b.lang!r} block")


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_readme_example(work: Work, block: readme.Block) -> None:
    out = _run(work, block)
    if re.search(r"\becho\b", block.code):
        assert "Echo: hello" in out, f"README.md:{block.line}: the echo's answer is not in the output:\n{out[-4000:]}"
