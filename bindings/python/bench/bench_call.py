"""Per-call cost of the Python binding, in µs per call, against the fixture
server over stdio (`make python-bench`).

Rows:
  call_sync (ctypes)   lmcp_client_call_sync straight through ctypes: the
                       C ABI plus the round trip to the server, nothing of
                       the binding's own
  Client.call_tool     the blocking client: async call + Event wait, JSON
                       in and out, result dataclass
  AsyncClient (seq)    one await at a time: call_soon_threadsafe per result
  AsyncClient (x32)    32 calls in flight at once: throughput per call

The difference between the first two rows is the binding's overhead; the
first row against Go's own benchmark of the same call (same server,
tests/bench BenchmarkStdioCallTool) is the ctypes/C-ABI overhead. Runs
against mcpfixture and, when built, the minimal rawecho server.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import statistics
import sys
import time
from typing import Callable, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import lemonmcp  # noqa: E402
from lemonmcp import _ffi  # noqa: E402

FIXTURE = os.environ.get("LEMONMCP_FIXTURE") or os.path.join(HERE, "..", "..", "..", "build", "fixtures", "mcpfixture")
N = int(os.environ.get("BENCH_N", "2000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))


def measure(fn: Callable[[], None], n: int = N, rounds: int = ROUNDS) -> float:
    for _ in range(min(200, n)):  # warm up
        fn()
    per: List[float] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        per.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(per)


def bench_server(server: str) -> None:
    rows = []
    with lemonmcp.Client.stdio(server) as c:
        handle = c._session._handle
        method = b"tools/call"
        params = json.dumps({"name": "echo", "arguments": {"text": "hello"}}).encode()

        def raw() -> None:
            out = ctypes.c_void_p()
            n = ctypes.c_size_t()
            _ffi.lib.lmcp_client_call_sync(handle, method, params, len(params), None, 0, out, ctypes.byref(n), ctypes.c_void_p())
            _ffi.take_bytes(out, n.value)

        rows.append(("call_sync (ctypes)", measure(raw)))
        rows.append(("Client.call_tool", measure(lambda: c.call_tool("echo", {"text": "hello"}) and None)))
        try:
            c.ping()
            rows.append(("Client.ping", measure(lambda: c.ping())))
        except lemonmcp.ProtocolError:
            pass  # a minimal server may not implement ping

    async def seq() -> float:
        async with lemonmcp.AsyncClient.stdio(server) as ac:
            for _ in range(200):
                await ac.call_tool("echo", {"text": "hello"})
            per = []
            for _ in range(ROUNDS):
                t0 = time.perf_counter()
                for _ in range(N):
                    await ac.call_tool("echo", {"text": "hello"})
                per.append((time.perf_counter() - t0) / N * 1e6)
            return statistics.median(per)

    async def wide() -> float:
        async with lemonmcp.AsyncClient.stdio(server) as ac:
            per = []
            for _ in range(ROUNDS):
                t0 = time.perf_counter()
                for _ in range(N // 32):
                    await asyncio.gather(*(ac.call_tool("echo", {"text": "hello"}) for _ in range(32)))
                per.append((time.perf_counter() - t0) / ((N // 32) * 32) * 1e6)
            return statistics.median(per)

    rows.append(("AsyncClient (seq)", asyncio.run(seq())))
    rows.append(("AsyncClient (x32)", asyncio.run(wide())))

    print(f"server {os.path.basename(server)}:")
    for name, us in rows:
        print(f"  {name:<22} {us:8.1f} µs/call")
    print(f"  binding overhead over call_sync: {rows[1][1] - rows[0][1]:+.1f} µs/call")


def main() -> None:
    print(f"lemonmcp {lemonmcp.library_version()}  python {sys.version.split()[0]}  N={N} x {ROUNDS} rounds (median)")
    servers = [FIXTURE]
    rawecho = os.path.join(os.path.dirname(FIXTURE), "rawecho")
    if os.access(rawecho, os.X_OK):
        servers.append(rawecho)  # a minimal server: the client's own cost shows
    for server in servers:
        bench_server(server)


if __name__ == "__main__":
    main()
