"""LemonMCP through the Python binding, for `make bench` (tests/bench).

Same command line and JSON line as tests/bench/benchclient:

    python3 pyclient.py -client sync|async -mode calls|large -n N -par P -pn PN (-stdio "CMD ARGS" | -url URL)

sync: lemonmcp.Client.call_tool; the P-way figure is P threads on one
client. async: lemonmcp.AsyncClient.call_tool awaited one at a time; the
P-way figure is P tasks on one event loop. Figures are printed, never
checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from typing import Any, Awaitable, Callable, Dict, List

PINNED = "2025-11-25"
LARGE_BYTES = 10 << 20


def proc_status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def config(args: argparse.Namespace) -> Dict[str, Any]:
    if args.url:
        # benchserver serves the legacy HTTP+SSE transport under /sse
        kind = "sse" if args.url.endswith("/sse") else "streamable_http"
        transport: Dict[str, Any] = {"type": kind, "url": args.url}
    else:
        argv = args.stdio.split()
        transport = {"type": "stdio", "command": argv[0], "args": argv[1:]}
    return {"transport": transport, "protocol": {"mode": "legacy", "versions": [PINNED]}}


def summary(lat: List[float]) -> Dict[str, float]:
    lat.sort()
    return {"p50_us": lat[len(lat) // 2] * 1e6, "p99_us": lat[len(lat) * 99 // 100] * 1e6}


def run_sync(args: argparse.Namespace, lemonmcp: Any) -> Dict[str, Any]:
    t0 = time.perf_counter()
    with lemonmcp.Client(config(args)) as c:
        connect = time.perf_counter() - t0
        if args.mode == "large":
            c.call_tool("large", {"bytes": LARGE_BYTES})
            ts = []
            for _ in range(args.n):
                t0 = time.perf_counter()
                c.call_tool("large", {"bytes": LARGE_BYTES})
                ts.append(time.perf_counter() - t0)
            ts.sort()
            return {"large_ms": ts[len(ts) // 2] * 1e3, "hwm_kb": proc_status("VmHWM")}
        t0 = time.perf_counter()
        c.call_tool("echo", {"text": "hello"})
        first = time.perf_counter() - t0
        for _ in range(min(args.n // 10, 200)):
            c.call_tool("echo", {"text": "hello"})
        lat = []
        cpu0 = time.process_time()
        for _ in range(args.n):
            t0 = time.perf_counter()
            c.call_tool("echo", {"text": "hello"})
            lat.append(time.perf_counter() - t0)
        cpu = (time.process_time() - cpu0) / args.n
        per = args.pn // args.par
        errors: List[BaseException] = []

        def work() -> None:
            try:
                for _ in range(per):
                    c.call_tool("echo", {"text": "hello"})
            except BaseException as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(args.par)]
        t0 = time.perf_counter()
        pcpu0 = time.process_time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        pcpu = (time.process_time() - pcpu0) / (per * args.par)
        if errors:
            raise errors[0]
        out = {"connect_us": connect * 1e6, "first_us": first * 1e6, "cps": per * args.par / wall,
               "cpu_us": cpu * 1e6, "pcpu_us": pcpu * 1e6,
               "rss_kb": proc_status("VmRSS"), "threads": proc_status("Threads")}
        out.update(summary(lat))
        return out


async def measure_async(
    call: Callable[[str, Dict[str, Any]], Awaitable[Any]], args: argparse.Namespace, connect_s: float
) -> Dict[str, Any]:
    """What an async Python bench client reports, on a client connected in
    connect_s seconds whose call_tool is call: the 10 MiB result's median
    (mode large), or the first call, p50/p99 of N calls awaited one at a
    time and the calls/s of P tasks on one event loop (mode calls). Shared
    by this script's AsyncClient and pysdk.py's ClientSession."""
    if args.mode == "large":
        await call("large", {"bytes": LARGE_BYTES})
        ts = []
        for _ in range(args.n):
            t0 = time.perf_counter()
            await call("large", {"bytes": LARGE_BYTES})
            ts.append(time.perf_counter() - t0)
        ts.sort()
        return {"large_ms": ts[len(ts) // 2] * 1e3, "hwm_kb": proc_status("VmHWM")}
    t0 = time.perf_counter()
    await call("echo", {"text": "hello"})
    first = time.perf_counter() - t0
    for _ in range(min(args.n // 10, 200)):
        await call("echo", {"text": "hello"})
    lat: List[float] = []
    cpu0 = time.process_time()
    for _ in range(args.n):
        t0 = time.perf_counter()
        await call("echo", {"text": "hello"})
        lat.append(time.perf_counter() - t0)
    cpu = (time.process_time() - cpu0) / args.n
    per = args.pn // args.par

    async def work() -> None:
        for _ in range(per):
            await call("echo", {"text": "hello"})

    t0 = time.perf_counter()
    pcpu0 = time.process_time()
    await asyncio.gather(*(work() for _ in range(args.par)))
    wall = time.perf_counter() - t0
    pcpu = (time.process_time() - pcpu0) / (per * args.par)
    out = {"connect_us": connect_s * 1e6, "first_us": first * 1e6, "cps": per * args.par / wall,
           "cpu_us": cpu * 1e6, "pcpu_us": pcpu * 1e6,
           "rss_kb": proc_status("VmRSS"), "threads": proc_status("Threads")}
    out.update(summary(lat))
    return out


async def run_async(args: argparse.Namespace, lemonmcp: Any) -> Dict[str, Any]:
    t0 = time.perf_counter()
    async with lemonmcp.AsyncClient(config(args)) as c:
        return await measure_async(c.call_tool, args, time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("-client", choices=["sync", "async"], default="sync")
    p.add_argument("-mode", choices=["calls", "large"], default="calls")
    p.add_argument("-stdio", default="")
    p.add_argument("-url", default="")
    p.add_argument("-n", type=int, default=2000)
    p.add_argument("-par", type=int, default=16)
    p.add_argument("-pn", type=int, default=4000)
    args = p.parse_args()
    if bool(args.stdio) == bool(args.url):
        sys.exit("pyclient: need exactly one of -stdio and -url")
    sys.path.insert(0, os.environ.get("LEMONMCP_PYTHONPATH", ""))
    import lemonmcp

    if args.client == "sync":
        out = run_sync(args, lemonmcp)
    else:
        out = asyncio.run(run_async(args, lemonmcp))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
