"""Tool search through the Python binding, for `make bench-search-python`.

    python3 pysearch.py -replay REPLAYSERVER -catalogues DIR -queries FILE [-runs N]

Two hosts of recorded catalogues (tests/searcheval), served by replayserver:

- 39 tools: the five servers of issue 31's measurement plus
  sequential-thinking; time and fetch speak 2026-07-28 and send no ttlMs
  (as mcp-server-time and mcp-server-fetch do), the others 2025-11-25;
- 1,000 tools: one 2026-07-28 server without ttlMs offering the recorded
  catalogues repeated.

Each query of FILE is searched N times with Host.search_tools (after one
warm-up search, which lists the servers); every search's time is taken in
Python, so it covers the binding, the C ABI and the host. One JSON line per
host: {"host", "tools", "searches", "p50_us", "p99_us", "max_us"}. Figures
are printed, never checked.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any, Dict, List

import lemonmcp

MODERN = {"time", "fetch"}
SMALL = ["time", "fetch", "filesystem", "git", "memory", "sequential-thinking"]


def server(replay: str, args: List[str], modern: bool) -> Dict[str, Any]:
    return {
        "command": replay,
        "args": (["-modern"] if modern else []) + args,
        "protocol": {"mode": "auto" if modern else "legacy"},
        "timeouts": {"ready_ms": 20000, "close_grace_ms": 300},
    }


def small_config(replay: str, cats: str) -> Dict[str, Any]:
    return {"mcpServers": {n: server(replay, [os.path.join(cats, n + ".json")], n in MODERN) for n in SMALL}}


def thousand_config(replay: str, cats: str) -> Dict[str, Any]:
    files = sorted(os.path.join(cats, f) for f in os.listdir(cats) if f.endswith(".json"))
    return {"mcpServers": {"big": server(replay, ["-copies", "20", "-max", "1000"] + files, True)}}


def percentile(sorted_us: List[float], p: float) -> float:
    return sorted_us[min(len(sorted_us) - 1, int(p * len(sorted_us)))]


def measure(name: str, config: Dict[str, Any], queries: List[str], runs: int) -> Dict[str, Any]:
    with lemonmcp.Host(config, ready_timeout=60) as host:
        for srv, st in host.servers().items():
            if st["state"] != "ready":
                raise SystemExit(f"server {srv} is {st['state']}: {st.get('last_error')}")
            if "-modern" in config["mcpServers"][srv]["args"] and st.get("era") != "modern":
                raise SystemExit(f"server {srv} speaks the {st.get('era')} era, not 2026-07-28")
        tools = len(host.list_tools())
        host.search_tools(queries[0])  # warm-up: lists every server once
        samples: List[float] = []
        for _ in range(runs):
            for q in queries:
                t0 = time.perf_counter()
                host.search_tools(q)
                samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    return {"host": name, "tools": tools, "searches": len(samples), "p50_us": round(percentile(samples, 0.50), 1),
            "p99_us": round(percentile(samples, 0.99), 1), "max_us": round(samples[-1], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-replay", required=True, help="the replayserver binary")
    ap.add_argument("-catalogues", required=True, help="tests/searcheval/catalogues")
    ap.add_argument("-queries", required=True, help="tests/searcheval/queries.json")
    ap.add_argument("-runs", type=int, default=20, help="searches of each query")
    args = ap.parse_args()
    with open(args.queries) as f:
        queries = [q["query"] for q in json.load(f)]
    for name, config in (("39 tools", small_config(args.replay, args.catalogues)),
                         ("1,000 tools", thousand_config(args.replay, args.catalogues))):
        print(json.dumps(measure(name, config, queries, args.runs)), flush=True)


if __name__ == "__main__":
    main()
