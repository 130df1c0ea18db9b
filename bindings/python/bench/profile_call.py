"""Where a Python call's time goes, for bench/README.md ("What stands in
the way"): the figures behind it, reproducible.

    python3 bench/profile_call.py sync|threads|async [--cprofile] [--server PATH]

Runs BENCH_N calls of tools/call "echo" (default 16000) against rawecho (the
minimal server: the client's own cost shows), sequentially (sync), from 16
threads on one Client (threads) or as 16 tasks on one AsyncClient (async),
and prints µs per call (wall, process CPU), then how much of it was spent in
the call into the library (``Session._call_queued``: the ctypes call of
lmcp_client_call_queued with its argument setup; wall, and the calling
thread's CPU) and in popping completions (``CompletionQueue.pop``), and how
many completions each pop brought. ``--cprofile`` prints cProfile's top
functions of the async run instead (cProfile sees the main thread only).
Compare with ``perf record -g -- python3 bench/profile_call.py async``, and
with c_host.c for the C side. Figures are printed, never checked.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import sys
import threading
import time
from typing import Any, Callable, Dict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))

import lemonmcp  # noqa: E402
import lemonmcp.aio  # noqa: E402
from lemonmcp import _queue, _session  # noqa: E402

N = int(os.environ.get("BENCH_N", "16000"))
WIDE = 16
ARGS = {"text": "hello"}

# Time spent in the two library crossings of a call, summed over the run.
spent: Dict[str, float] = {"call_wall": 0.0, "call_cpu": 0.0, "calls": 0.0, "pop_wall": 0.0, "pops": 0.0}


def instrument() -> None:
    """Wrap Session._call_queued and CompletionQueue.pop with timers."""
    call_queued = _session.Session._call_queued
    pop = _queue.CompletionQueue.pop
    lock = threading.Lock()

    def timed_call(self: Any, *args: Any) -> int:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return call_queued(self, *args)
        finally:
            wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
            with lock:
                spent["call_wall"] += wall
                spent["call_cpu"] += cpu
                spent["calls"] += 1

    def timed_pop(self: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return pop(self)
        finally:
            wall = time.perf_counter() - t0
            with lock:
                spent["pop_wall"] += wall
                spent["pops"] += 1

    _session.Session._call_queued = timed_call  # type: ignore[method-assign]
    _queue.CompletionQueue.pop = timed_pop  # type: ignore[method-assign]


def reset() -> None:
    for k in spent:
        spent[k] = 0


def report(t0: float, c0: float) -> None:
    """Print the run that started at perf_counter t0, process_time c0."""
    wall, cpu = (time.perf_counter() - t0) / N * 1e6, (time.process_time() - c0) / N * 1e6
    calls, pops = spent["calls"] or 1, spent["pops"] or 1
    print(f"{N} calls: {wall:.1f} µs wall, {cpu:.1f} µs CPU (the whole process) per call")
    print(f"  in the call into the library: {spent['call_wall'] / calls * 1e6:.1f} µs wall, "
          f"{spent['call_cpu'] / calls * 1e6:.1f} µs of the calling thread's CPU per call")
    print(f"  popping completions: {spent['pop_wall'] / N * 1e6:.1f} µs wall per call, "
          f"{N / pops:.1f} completions per pop")


def measure(run: Callable[[int], None]) -> None:
    run(min(N, 1600))  # warm-up
    reset()
    t0, c0 = time.perf_counter(), time.process_time()
    run(N)
    report(t0, c0)


def main() -> None:
    args = sys.argv[1:]
    mode = args[0] if args and args[0] in ("sync", "threads", "async") else ""
    if not mode:
        sys.exit("usage: profile_call.py sync|threads|async [--cprofile] [--server PATH]")
    server = os.path.join(ROOT, "build", "fixtures", "rawecho")
    if "--server" in args:
        server = args[args.index("--server") + 1]
    profile = "--cprofile" in args
    if not profile:
        instrument()

    if mode in ("sync", "threads"):
        with lemonmcp.Client.stdio(server) as c:

            def seq(n: int) -> None:
                for _ in range(n):
                    c.call_tool("echo", ARGS)

            def wide(n: int) -> None:
                threads = [threading.Thread(target=seq, args=(n // WIDE,)) for _ in range(WIDE)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()

            measure(seq if mode == "sync" else wide)
        return

    async def run_async() -> None:
        async with lemonmcp.aio.AsyncClient.stdio(server) as ac:

            async def worker(n: int) -> None:
                for _ in range(n):
                    await ac.call_tool("echo", ARGS)

            async def wide(n: int) -> None:
                await asyncio.gather(*(worker(n // WIDE) for _ in range(WIDE)))

            await wide(min(N, 1600))
            if profile:
                prof = cProfile.Profile()
                prof.enable()
                await wide(N)
                prof.disable()
                pstats.Stats(prof).sort_stats("tottime").print_stats(20)
                return
            reset()
            t0, c0 = time.perf_counter(), time.process_time()
            await wide(N)
            report(t0, c0)

    asyncio.run(run_async())


if __name__ == "__main__":
    main()
