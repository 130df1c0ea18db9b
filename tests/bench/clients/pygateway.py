"""The gateway's cost (`make bench-gateway`, docs/gateway.md): what
`lemonmcp serve` adds to a call, run by the Python host of the command
line, over stdio and Streamable HTTP, against the minimal bench server.

    python pygateway.py -bin BUILD/bench -python PYTHON -pypath bindings/python [-rounds 3 -n 2000 -pn 4000] [-out RESULTS.md]

Per front transport, the same client (tests/bench/benchclient: LemonMCP's
Go core, and the go-sdk client) calls `echo`:

- directly: the server over stdio, or the server's own Streamable HTTP;
- through the gateway: `lemonmcp --config F serve` (the client starts it
  over stdio; over HTTP it is started here), the server behind it over stdio.

"added p50" is the gateway's p50 less the direct one, per client; calls/s
is 16 calls in flight on one client. CPU per call is the gateway process's
own (all its threads, the server excluded), against a C host's own call
(tests/bench/clients/bench_host -host 1: lmcp_host_call_tool_sync to the
same server, its process alone); both are differences between a long run
and a short one divided by the difference in calls, so that start and
stop cancel out. The floor row (the least code that speaks the protocol,
benchclient -client floor, directly) says how fast the machine was. Each
cell is the median of the rounds; figures are printed and written into
their own section of RESULTS.md, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

TITLE = "The gateway: a call through lemonmcp serve (make bench-gateway)"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> Optional[float]:
    """utime + stime of the whole process (every thread), or None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def find_pid(needle: str) -> Optional[int]:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle.encode() in f.read():
                    return int(entry)
        except OSError:
            pass
    return None


class Sampler(threading.Thread):
    """Follows one process's CPU time until it exits; ``last`` is the last
    reading (taken every 5 ms: the few ms it misses at the end are the
    process's shutdown, the same in a long run and a short one)."""

    def __init__(self, find: Callable[[], Optional[int]]) -> None:
        super().__init__(daemon=True)
        self.find, self.last, self.stop = find, 0.0, threading.Event()

    def run(self) -> None:
        pid = None
        while not self.stop.is_set():
            pid = pid or self.find()
            if pid is not None:
                cpu = cpu_seconds(pid)
                if cpu is None:
                    return
                self.last = cpu
            time.sleep(0.005)


def run_client(argv: List[str], env: Dict[str, str], find: Optional[Callable[[], Optional[int]]] = None) -> Tuple[Dict[str, Any], float]:
    """One benchclient (or bench_host) run: its JSON line, and the CPU
    seconds of the process ``find`` names (0 without one)."""
    sampler = Sampler(find) if find else None
    if sampler:
        sampler.start()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if sampler:
        sampler.stop.set()
        sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"pygateway: {' '.join(argv[:3])} failed: {proc.stderr.strip()[-2000:]}")
    line = [x for x in proc.stdout.splitlines() if x.startswith("{")][-1]
    return json.loads(line), (sampler.last if sampler else 0.0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-bin", required=True, help="the directory of benchclient, benchserver and bench_host")
    ap.add_argument("-python", default=sys.executable)
    ap.add_argument("-pypath", required=True)
    ap.add_argument("-rounds", type=int, default=3)
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("-pn", type=int, default=4000)
    ap.add_argument("-out", default="")
    a = ap.parse_args()
    started, load_before = time.time(), loadavg()
    tmp = tempfile.mkdtemp(prefix="lmcp-gw-bench-")
    server = os.path.join(a.bin, "benchserver")
    config = os.path.join(tmp, "mcp.json")
    with open(config, "w") as f:
        # tool_prefix "never": the client calls "echo" through the gateway too.
        json.dump({"tool_prefix": "never", "mcpServers": {"bench": {"command": server, "args": ["-server", "raw"]}}}, f)
    env = {**os.environ, "PYTHONPATH": os.path.abspath(a.pypath), "PYTHONDONTWRITEBYTECODE": "1"}
    gateway = [a.python, "-m", "lemonmcp", "--config", config, "serve"]
    bc = os.path.join(a.bin, "benchclient")
    # The gateway's own argv (NUL-separated in /proc), which the client's
    # -stdio argument (one string with spaces) never matches.
    gateway_pid = lambda: find_pid("\0".join(["-m", "lemonmcp", "--config", config, "serve"]))  # noqa: E731
    small_n, small_pn = max(1, a.n // 10), max(16, a.pn // 10)
    calls_big, calls_small = a.n + a.pn, small_n + small_pn

    def sizes(n: int, pn: int) -> List[str]:
        return ["-n", str(n), "-par", "16", "-pn", str(pn)]

    cells: Dict[Tuple[str, str, str], List[float]] = {}

    def put(key: Tuple[str, str, str], v: float) -> None:
        cells.setdefault(key, []).append(v)

    for _ in range(a.rounds):
        # The floor, and each client directly, over stdio.
        direct = f"{server} -server raw"
        for client in ("floor", "lemonmcp", "go-sdk"):
            out, _ = run_client([bc, "-client", client, "-stdio", direct, *sizes(a.n, a.pn)], env)
            put(("stdio", "direct", client), out["p50_us"])
            put(("stdio", "direct calls/s", client), out["cps"])
        # Through the stdio gateway (the client starts it).
        # A client gives the process it starts a minimal environment.
        gw = " ".join(["env", f"PYTHONPATH={env['PYTHONPATH']}", *gateway])
        for client in ("lemonmcp", "go-sdk"):
            big, cpu_big = run_client([bc, "-client", client, "-stdio", gw, *sizes(a.n, a.pn)], env, gateway_pid)
            small, cpu_small = run_client([bc, "-client", client, "-stdio", gw, *sizes(small_n, small_pn)], env, gateway_pid)
            put(("stdio", "gateway", client), big["p50_us"])
            put(("stdio", "gateway calls/s", client), big["cps"])
            put(("stdio", "gateway cpu", client), (cpu_big - cpu_small) / (calls_big - calls_small) * 1e6)
        # The C host's own call, and its CPU (its process alone).
        hb = os.path.join(a.bin, "bench_host")
        host_big, hcpu_big = run_client([hb, "-host", "1", "-mode", "calls", "-stdio", direct, *sizes(a.n, a.pn)], env,
                                        lambda: find_pid(hb + "\0-host"))
        _, hcpu_small = run_client([hb, "-host", "1", "-mode", "calls", "-stdio", direct, *sizes(small_n, small_pn)], env,
                                   lambda: find_pid(hb + "\0-host"))
        put(("stdio", "host", "C host"), host_big["p50_us"])
        put(("stdio", "host cpu", "C host"), (hcpu_big - hcpu_small) / (calls_big - calls_small) * 1e6)

        # Streamable HTTP: the server's own, and the gateway's front.
        port = free_port()
        srv = subprocess.Popen([server, "-server", "raw", "-http", f"127.0.0.1:{port}"], env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)  # it lives until its stdin closes
        try:
            assert srv.stdout is not None
            srv.stdout.readline()  # its URL, once listening
            direct_url = f"http://127.0.0.1:{port}/mcp"
            for client in ("floor", "lemonmcp", "go-sdk"):
                out, _ = run_client([bc, "-client", client, "-url", direct_url, *sizes(a.n, a.pn)], env)
                put(("http", "direct", client), out["p50_us"])
                put(("http", "direct calls/s", client), out["cps"])
            # The C host's own call to the server over HTTP.
            hout, hcpu_big = run_client([hb, "-host", "1", "-mode", "calls", "-url", direct_url, *sizes(a.n, a.pn)], env,
                                        lambda: find_pid(hb + "\0-host"))
            _, hcpu_small = run_client([hb, "-host", "1", "-mode", "calls", "-url", direct_url, *sizes(small_n, small_pn)],
                                       env, lambda: find_pid(hb + "\0-host"))
            put(("http", "host", "C host"), hout["p50_us"])
            put(("http", "host cpu", "C host"), (hcpu_big - hcpu_small) / (calls_big - calls_small) * 1e6)
        finally:
            assert srv.stdin is not None
            srv.stdin.close()
            srv.wait(30)
        g = subprocess.Popen([*gateway, "--http", "127.0.0.1:0", "-q"], stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert g.stdout is not None
            url = g.stdout.readline().strip()
            if not url.startswith("http://"):
                raise SystemExit("pygateway: the HTTP gateway printed no URL")
            for client in ("lemonmcp", "go-sdk"):
                before = cpu_seconds(g.pid) or 0.0
                out, _ = run_client([bc, "-client", client, "-url", url, *sizes(a.n, a.pn)], env)
                after = cpu_seconds(g.pid) or 0.0
                put(("http", "gateway", client), out["p50_us"])
                put(("http", "gateway calls/s", client), out["cps"])
                # The client's connect and close are a few requests among thousands.
                put(("http", "gateway cpu", client), (after - before) / calls_big * 1e6)
        finally:
            g.terminate()
            g.wait(60)

    med = {k: statistics.median(v) for k, v in cells.items()}
    text = table(med, a, started, load_before)
    print(text)
    if a.out:
        write_section(a.out, text)


def table(med: Dict[Tuple[str, str, str], float], a: argparse.Namespace, started: float, load_before: str) -> str:
    host_cpu = {front: med[(front, "host cpu", "C host")] for front in ("stdio", "http")}
    lines = [
        f"<!-- section: {TITLE} -->",
        f"## {TITLE}",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))} on `{os.uname().nodename}`, "
        f"{os.cpu_count()} CPUs; load average {load_before} before, {loadavg()} after. Machine's mode: the floor's "
        f"p50 over stdio {med[('stdio', 'direct', 'floor')]:.1f} µs, over HTTP {med[('http', 'direct', 'floor')]:.1f} µs.",
        "",
        f"The minimal bench server (`benchserver -server raw`) behind `lemonmcp --config F serve` (the command line's "
        f"Python host, the server over stdio), called by the same client directly and through the gateway: p50 of "
        f"{a.n} sequential calls, calls/s with 16 in flight ({a.pn} calls), median of {a.rounds} rounds. CPU µs per "
        f"call is the gateway process's own, against a C host's own call to the same server over the same transport "
        f"(`bench_host -host 1`: over stdio {host_cpu['stdio']:.1f} µs per call, p50 {med[('stdio', 'host', 'C host')]:.1f} µs; "
        f"over HTTP {host_cpu['http']:.1f} µs per call, p50 {med[('http', 'host', 'C host')]:.1f} µs); targets: added "
        "p50 ≤ 1,000 µs, gateway CPU ≤ 2× the host's own call.",
        "",
        "| front | client | p50 direct µs | p50 through µs | added p50 µs | calls/s direct | calls/s through | "
        "through ×direct | gateway CPU µs/call | ×host's own |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for front, label in (("stdio", "stdio"), ("http", "Streamable HTTP")):
        for client in ("lemonmcp", "go-sdk"):
            d, t = med[(front, "direct", client)], med[(front, "gateway", client)]
            dc, tc = med[(front, "direct calls/s", client)], med[(front, "gateway calls/s", client)]
            cpu = med[(front, "gateway cpu", client)]
            name = "LemonMCP (Go core)" if client == "lemonmcp" else "go-sdk"
            lines.append(f"| {label} | {name} | {d:.1f} | {t:.1f} | {t - d:+.1f} | {dc:.0f} | {tc:.0f} | {tc / dc:.2f}× | "
                         f"{cpu:.1f} | {cpu / host_cpu[front]:.2f}× |")
    lines += ["", f"<!-- end section: {TITLE} -->"]
    return "\n".join(lines)


def write_section(path: str, text: str) -> None:
    """Replace this section in RESULTS.md (or append it); `make bench`
    keeps it when it rewrites the file (benchtable's kept sections)."""
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    pattern = re.compile(re.escape(f"<!-- section: {TITLE} -->") + r".*?" + re.escape(f"<!-- end section: {TITLE} -->"), re.S)
    new = pattern.sub(lambda _: text, old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new.rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
