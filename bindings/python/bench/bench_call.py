"""Per-call cost of the Python binding against a C host on the same server
(`make python-bench`).

Every row does the same tools/call "echo" over stdio; rounds alternate the
rows (C, Python, C, Python, ...) so that a noisy machine hurts them alike, and
each row reports the median of its rounds.

Rows:
  C host, call_sync       a C program (bench/c_host.c, built here with $CC):
                          sequential lmcp_client_call_sync, no binding at all
  ctypes call_sync        the same call straight through ctypes from Python:
                          the floor of any ctypes binding
  Client.call_tool        the blocking client on the main thread and on a
                          worker thread (a completion queue polled by the
                          calling thread; Ctrl-C interrupts the wait)
  ... (callback path)     the same through a done callback instead of the
                          completion queue (the binding's previous path:
                          a library thread takes the GIL per completion)
  C host, 16 in flight    lmcp_client_call with 16 calls kept in flight (and,
                          with "queue", lmcp_client_call_queued, the main
                          thread polling the queue: no callback); "C host,
                          16 threads": 16 threads each making sequential
                          lmcp_client_call_sync calls
  AsyncClient, 16         16 tasks awaiting call_tool in a loop (completion
                          queue drained by the loop's reader; and, as
                          "callback path", call_soon_threadsafe from a done
                          callback)
  Client.call_tool, 16 threads
                          16 threads calling the one blocking client at once
  C host (host), ...      the same C calls through a host of one server:
                          lmcp_host_call_sync, and 16 in flight with
                          lmcp_host_call / lmcp_host_call_queued
  Host.call, AsyncHost.call
                          the Python host's calls (server "s", tools/call),
                          sequential, from 16 threads, and 16 tasks
  ctypes call_sync, 16 threads
                          the floor of a blocking binding from 16 threads:
                          nothing but lmcp_client_call_sync through ctypes
                          (the GIL released around it, retaken once per call)
  asyncio floor, 16 tasks no library at all: 16 tasks each awaiting a future
                          that a loop reader resolves, one eventfd write per
                          call and one drain per wake-up (the LoopQueue
                          pattern): CPython's own per-await cost

Each Python row is compared with its C counterpart: a sequential row as µs
over the C host's call_sync (the client's or the host's), a 16-way row as a
throughput ratio to the C host's 16 in flight, and a row of 16 threads also
to the C host's 16 threads each calling call_sync (c_host "threads").

Each figure is µs per call twice: wall time, and the client process's CPU
time (all its threads, never the server's), which a busy machine disturbs
less. Ratios: the sequential rows as µs over the C host, the 16-way row as a
throughput ratio to the C host's 16-way row. Runs against mcpfixture (a
go-sdk server) and, when built, rawecho (a minimal server: the client's own
cost shows). Environment: BENCH_N calls per round (default 2000),
BENCH_ROUNDS rounds (default 5), BENCH_SERVERS (os.pathsep-separated paths)
to choose the servers. ``--json`` prints the figures as one JSON object
(for the cross-language table).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))

import lemonmcp  # noqa: E402
import lemonmcp.aio  # noqa: E402
from lemonmcp import _ffi  # noqa: E402
from lemonmcp._base import read_tool_result  # noqa: E402
from lemonmcp._codec import result_of  # noqa: E402

FIXTURE = os.path.abspath(os.environ.get("LEMONMCP_FIXTURE") or os.path.join(ROOT, "build", "fixtures", "mcpfixture"))
N = int(os.environ.get("BENCH_N", "2000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
WIDE = 16
ARGS = {"text": "hello"}
PARAMS = json.dumps({"name": "echo", "arguments": ARGS}).encode()


def build_c_host(out_dir: str) -> Optional[str]:
    """Compile c_host.c against the library the binding loaded; None (and a
    note) without a C compiler."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("note: no C compiler: the C host rows are skipped", file=sys.stderr)
        return None
    # The C host loads the very file the binding loaded, under its soname.
    lib = os.path.abspath(_ffi.loaded_path)
    os.symlink(lib, os.path.join(out_dir, f"liblemonmcp.so.{_ffi.ABI_VERSION}"))
    exe = os.path.join(out_dir, "c_host")
    cmd = [
        cc, "-O2", "-I", os.path.join(ROOT, "include"), os.path.join(HERE, "c_host.c"),
        "-o", exe, lib, "-lpthread", f"-Wl,-rpath,{out_dir}",
    ]
    subprocess.run(cmd, check=True)
    return exe


Figure = Tuple[float, float]  # µs per call: wall time, client CPU time


def c_round(
    exe: str, server: str, n: int, inflight: int, queue: bool = False, host: bool = False, threads: bool = False
) -> Figure:
    """One round of the C host (with host: through an lmcp_host; with
    threads: inflight threads each making sequential call_sync calls)."""
    argv = [exe, server, str(n), "1", str(inflight)] + (["queue"] if queue else []) + (["host"] if host else [])
    argv += ["threads"] if threads else []
    out = subprocess.run(argv, check=True, capture_output=True, text=True)
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def timed(fn: Callable[[], None], n: int) -> Figure:
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6, (time.process_time() - c0) / n * 1e6


def on_thread(fn: Callable[[], Figure]) -> Figure:
    box: List[Figure] = []
    t = threading.Thread(target=lambda: box.append(fn()))
    t.start()
    t.join()
    return box[0]


def threads_round(call: Callable[[], None], n: int) -> Figure:
    """n calls from WIDE threads at once (n // WIDE each)."""
    per = n // WIDE
    errors: List[BaseException] = []

    def work() -> None:
        try:
            for _ in range(per):
                call()
        except BaseException as e:  # re-raised below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(WIDE)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    calls = per * WIDE
    return (time.perf_counter() - t0) / calls * 1e6, (time.process_time() - c0) / calls * 1e6


async def asyncio_floor(n: int) -> Figure:
    """n awaits of futures resolved the way LoopQueue resolves them, with
    no library: what asyncio itself costs a call at 16 in flight."""
    loop = asyncio.get_running_loop()
    fd = os.eventfd(0, os.EFD_NONBLOCK)
    waiting: "Dict[int, asyncio.Future[None]]" = {}
    tags = iter(range(1, 1 << 62))

    def drain() -> None:
        os.eventfd_read(fd)
        done = list(waiting.values())
        waiting.clear()
        for fut in done:
            fut.set_result(None)

    async def call() -> None:
        fut = loop.create_future()
        waiting[next(tags)] = fut
        os.eventfd_write(fd, 1)
        await fut

    per_task = n // WIDE

    async def worker() -> None:
        for _ in range(per_task):
            await call()

    loop.add_reader(fd, drain)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(WIDE)))
        calls = per_task * WIDE
        return (time.perf_counter() - t0) / calls * 1e6, (time.process_time() - c0) / calls * 1e6
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def callback_call(c: "lemonmcp.Client") -> None:
    """Client.call_tool on the main thread through a done callback: the
    binding's path before completion queues, kept here for comparison."""
    method, params, opts, handler = c._tool_req("echo", ARGS, {})
    done = threading.Lock()
    done.acquire()
    box: List[Tuple[int, bytes]] = []

    def complete(call_id: int, status: int, data: bytes) -> None:
        box.append((status, data))
        done.release()

    c._session.start_call(method, params, opts, complete, handler)
    while not done.acquire(timeout=0.1):
        pass
    read_tool_result(result_of(*box[0]))


HOST_PARAMS = {"name": "echo", "arguments": ARGS}


async def wide_round(ac: "lemonmcp.AsyncClient", n: int, callback: bool = False) -> Figure:
    per_task = n // WIDE

    async def worker() -> None:
        for _ in range(per_task):
            await ac.call_tool("echo", ARGS)

    async def worker_callback() -> None:
        for _ in range(per_task):
            read_tool_result(await ac._caller._run_with_callback(*ac._tool_req("echo", ARGS, {}), None))


    t0, c0 = time.perf_counter(), time.process_time()
    run = worker_callback if callback else worker
    await asyncio.gather(*(run() for _ in range(WIDE)))
    calls = per_task * WIDE
    return (time.perf_counter() - t0) / calls * 1e6, (time.process_time() - c0) / calls * 1e6


async def host_wide_round(ah: "lemonmcp.aio.AsyncHost", n: int) -> Figure:
    """n calls of the asyncio host from WIDE tasks."""
    per_task = n // WIDE

    async def worker() -> None:
        for _ in range(per_task):
            await ah.call("s", "tools/call", HOST_PARAMS)

    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(WIDE)))
    calls = per_task * WIDE
    return (time.perf_counter() - t0) / calls * 1e6, (time.process_time() - c0) / calls * 1e6


def bench_server(server: str, c_host: Optional[str]) -> Dict[str, Figure]:
    rows: Dict[str, List[Figure]] = {}

    def add(name: str, fig: Figure) -> None:
        rows.setdefault(name, []).append(fig)

    loop = asyncio.new_event_loop()
    c = lemonmcp.Client.stdio(server)
    ac = lemonmcp.AsyncClient.stdio(server)
    host_config = {"mcpServers": {"s": {"command": server}}}
    h = lemonmcp.Host(host_config)
    ah = lemonmcp.aio.AsyncHost(host_config)
    try:
        c.open()
        loop.run_until_complete(ac.open())
        h.__enter__()
        loop.run_until_complete(ah.__aenter__())
        handle = c._session._handle

        def raw() -> None:
            out = ctypes.c_void_p()
            n = ctypes.c_size_t()
            _ffi.lib.lmcp_client_call_sync(
                handle, b"tools/call", PARAMS, len(PARAMS), None, 0, out, ctypes.byref(n), ctypes.c_void_p()
            )
            _ffi.take_bytes(out, n.value)

        def tool() -> None:
            c.call_tool("echo", ARGS)

        def tool_callback() -> None:
            callback_call(c)

        def host_call() -> None:
            h.call("s", "tools/call", HOST_PARAMS)

        warm = min(200, N)
        timed(raw, warm)
        timed(tool, warm)
        timed(tool_callback, warm)
        on_thread(lambda: timed(tool, warm))
        loop.run_until_complete(wide_round(ac, warm))
        loop.run_until_complete(wide_round(ac, warm, callback=True))
        timed(host_call, warm)
        threads_round(tool, warm)
        threads_round(host_call, warm)
        loop.run_until_complete(host_wide_round(ah, warm))
        for _ in range(ROUNDS):
            if c_host:
                add("C host, call_sync", c_round(c_host, server, N, 0))
            add("ctypes call_sync", timed(raw, N))
            add("Client.call_tool (main thread)", timed(tool, N))
            add("Client.call_tool (main, callback path)", timed(tool_callback, N))
            add("Client.call_tool (worker thread)", on_thread(lambda: timed(tool, N)))
            if c_host:
                add(f"C host, {WIDE} in flight", c_round(c_host, server, N, WIDE))
                add(f"C host, {WIDE} in flight, queue", c_round(c_host, server, N, WIDE, queue=True))
            add(f"AsyncClient, {WIDE} in flight", loop.run_until_complete(wide_round(ac, N)))
            add(f"AsyncClient, {WIDE} (callback path)", loop.run_until_complete(wide_round(ac, N, callback=True)))
            if c_host:
                add(f"C host, {WIDE} threads", c_round(c_host, server, N, WIDE, threads=True))
            add(f"Client.call_tool, {WIDE} threads", threads_round(tool, N))
            if c_host:
                add("C host (host), call_sync", c_round(c_host, server, N, 0, host=True))
            add("Host.call (main thread)", timed(host_call, N))
            if c_host:
                add(f"C host (host), {WIDE} threads", c_round(c_host, server, N, WIDE, host=True, threads=True))
            add(f"Host.call, {WIDE} threads", threads_round(host_call, N))
            if c_host:
                add(f"C host (host), {WIDE} in flight", c_round(c_host, server, N, WIDE, host=True))
                add(f"C host (host), {WIDE} in flight, queue", c_round(c_host, server, N, WIDE, queue=True, host=True))
            add(f"AsyncHost.call, {WIDE} in flight", loop.run_until_complete(host_wide_round(ah, N)))
            add(f"ctypes call_sync, {WIDE} threads", threads_round(raw, N))
            add(f"asyncio floor, {WIDE} tasks", loop.run_until_complete(asyncio_floor(N)))
    finally:
        h.close()
        loop.run_until_complete(ah.close())
        c.close()
        loop.run_until_complete(ac.close())
        loop.close()
    return {
        name: (statistics.median(f[0] for f in v), statistics.median(f[1] for f in v)) for name, v in rows.items()
    }


def reference(name: str) -> Tuple[List[str], bool]:
    """The C rows a row is compared with, and whether the row is a 16-way
    one (compared by throughput) rather than a sequential one. A row of
    threads is compared with the C host's threads (the same model) and its
    16 in flight (the most a C host gets)."""
    wide = "in flight" in name or "threads" in name or "tasks" in name or name.startswith("AsyncClient")
    host = name.startswith(("Host", "AsyncHost", "C host (host)"))
    c = "C host (host)" if host else "C host"
    if not wide:
        return [f"{c}, call_sync"], False
    if "threads" in name:
        return [f"{c}, {WIDE} threads", f"{c}, {WIDE} in flight"], True
    return [f"{c}, {WIDE} in flight"], True


def report(server: str, med: Dict[str, Figure]) -> None:
    print(f"server {os.path.basename(server)}:   (µs per call: wall | client CPU)")
    for name, (wall, cpu) in med.items():
        ref_names, wide = reference(name)
        refs = [] if name.startswith("C host") else [(r, med[r]) for r in ref_names if r in med]
        ref_name, ref = refs[0] if refs else ("", None)
        extra = ""
        if wide:
            extra = "".join(f"   {r[0] / wall:.2f}x the {n}'s calls/s (CPU per call: {r[1] / cpu:.2f}x)" for n, r in refs)
            line = f"  {name:<40} {wall:7.1f} | {cpu:6.1f}  {1e6 / wall:7.0f} calls/s{extra}"
        else:
            if ref:
                extra = f"   {wall - ref[0]:+6.1f} | {cpu - ref[1]:+6.1f} over the {ref_name}"
            line = f"  {name:<40} {wall:7.1f} | {cpu:6.1f}{extra}"
        print(line)


def main() -> None:
    servers = [FIXTURE]
    rawecho = os.path.join(os.path.dirname(FIXTURE), "rawecho")
    if os.access(rawecho, os.X_OK):
        servers.append(rawecho)  # a minimal server: the client's own cost shows
    if os.environ.get("BENCH_SERVERS"):
        servers = os.environ["BENCH_SERVERS"].split(os.pathsep)
    as_json = "--json" in sys.argv[1:]
    if not as_json:
        print(f"lemonmcp {lemonmcp.library_version()}  python {sys.version.split()[0]}  "
              f"N={N} x {ROUNDS} rounds, alternating (median)")
    results: Dict[str, Dict[str, Dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="lemonmcp-bench-") as tmp:
        c_host = build_c_host(tmp)
        for server in servers:
            med = bench_server(server, c_host)
            results[os.path.basename(server)] = {k: {"wall": w, "cpu": c} for k, (w, c) in med.items()}
            if not as_json:
                report(server, med)
    if as_json:
        json.dump({"unit": "us_per_call", "n": N, "rounds": ROUNDS, "servers": results}, sys.stdout, indent=1)
        print()


if __name__ == "__main__":
    main()
