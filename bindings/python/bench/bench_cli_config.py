"""Time from `lemonmcp --config FILE call fx__echo` to its result, for a file
of five servers, against `lemonmcp --stdio SERVER call echo` for that one
server (`make python-bench-cli`).

Each run is a fresh `python -m lemonmcp` process, as a user types it, so the
figures include the interpreter and the library's start. Rounds alternate the
rows so that a noisy machine hurts them alike; each row reports the median and
the spread of its runs.

Rows:
  --stdio             the one server, named on the command line
  --config, 5 quick   five copies of the server in one file; `call` starts
                      only the one it needs
  --config, 4 slow    the four other servers take SLOW_S seconds to start
                      (a shell that sleeps, then runs the server): a call that
                      waited for every server would show it
  --config, eager     the slow file with "start": "eager" on every server:
                      what `call` cost when it started them all (it waits
                      for every server to be ready or failed)

Environment: LEMONMCP_FIXTURE (the server, default build/fixtures/mcpfixture),
BENCH_RUNS runs per row (default 10), BENCH_SLOW_S (default 1).
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(PKG_ROOT))
FIXTURE = os.environ.get("LEMONMCP_FIXTURE") or os.path.join(REPO, "build", "fixtures", "mcpfixture")
RUNS = int(os.environ.get("BENCH_RUNS", "10"))
SLOW_S = float(os.environ.get("BENCH_SLOW_S", "1"))


def config_file(directory: str, name: str, slow: bool, start: str) -> str:
    """Writes a file of five servers: fx, the one called, and four others."""
    servers: Dict[str, Dict[str, object]] = {"fx": {"command": FIXTURE}}
    for i in range(4):
        if slow:
            script = f"sleep {SLOW_S}; exec {shlex.quote(FIXTURE)}"
            servers[f"other{i}"] = {"command": "/bin/sh", "args": ["-c", script]}
        else:
            servers[f"other{i}"] = {"command": FIXTURE}
    if start:
        for s in servers.values():
            s["start"] = start  # a server's own "start" wins over the CLI's lazy call
    body: Dict[str, object] = {"mcpServers": servers}
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(body, f)
    return path


def timed(argv: List[str]) -> float:
    """Runs the CLI once; returns its wall time in ms (it must succeed)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "lemonmcp", *argv], env=env, capture_output=True, text=True, timeout=120)
    ms = (time.perf_counter() - t0) * 1000
    if r.returncode != 0 or "hi" not in r.stdout:
        raise SystemExit(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return ms


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        rows = {
            "--stdio": ["--stdio", FIXTURE, "call", "echo", "text=hi"],
            "--config, 5 quick": ["--config", config_file(d, "quick.json", False, ""), "call", "fx__echo", "text=hi"],
            "--config, 4 slow": ["--config", config_file(d, "slow.json", True, ""), "call", "fx__echo", "text=hi"],
            "--config, eager": ["--config", config_file(d, "eager.json", True, "eager"), "call", "fx__echo", "text=hi"],
        }
        times: Dict[str, List[float]] = {name: [] for name in rows}
        for _ in range(RUNS):
            for name, argv in rows.items():
                times[name].append(timed(argv))
    base = statistics.median(times["--stdio"])
    print(f"{RUNS} runs per row; the four slow servers sleep {SLOW_S:g} s before they start")
    print(f"{'row':<20} {'median ms':>10} {'min':>8} {'max':>8} {'vs --stdio':>11}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<20} {med:>10.0f} {min(ts):>8.0f} {max(ts):>8.0f} {med / base:>10.2f}x")


if __name__ == "__main__":
    main()
