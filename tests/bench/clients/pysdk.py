"""The official Python SDK's client, for `make bench` (tests/bench): the
anchor a Python user compares LemonMCP's Python rows with.

Same command line and JSON line as tests/bench/benchclient:

    python pysdk.py -mode calls|large -n N -par P -pn PN (-stdio "CMD ARGS" | -url URL)

Run by the interpreter of a venv holding one `mcp` release (make
bench-pysdk-setup installs 1.x and 2.x under .cache); the script works with
both. `mcp.ClientSession.call_tool` awaited one at a time for p50/p99; the
P-way figure is P tasks on one event loop, as for LemonMCP's AsyncClient.

Protocol: neither SDK release lets a client choose the version it offers;
both send their newest handshake version, 2025-11-25, in initialize. The
script checks that the server agreed to it and fails otherwise, so every
row is at 2025-11-25 like the other clients'. Figures are printed, never
checked.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import sys
import time
from typing import Any, Dict

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# The helpers every Python bench client shares (this script's directory is
# sys.path[0]); pyclient imports lemonmcp only in its main.
from pyclient import PINNED, measure_async

try:  # 2.x
    from mcp.client.streamable_http import streamable_http_client as http_client
except ImportError:  # pragma: no cover - older 1.x spelling
    from mcp.client.streamable_http import streamablehttp_client as http_client


# 2.x caps one SSE event at 1 MiB by default, and a go-sdk server sends the
# 10 MiB result as one event: the cap is lifted, as a user expecting such
# results would (1.x has no cap).
HTTP_OPTIONS: Dict[str, Any] = (
    {"max_sse_event_size": None} if "max_sse_event_size" in inspect.signature(http_client).parameters else {}
)


async def connect(args: argparse.Namespace, stack: contextlib.AsyncExitStack) -> ClientSession:
    if args.url:
        streams = await stack.enter_async_context(http_client(args.url, **HTTP_OPTIONS))
    else:
        argv = args.stdio.split()
        streams = await stack.enter_async_context(stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])))
    # 1.x's HTTP transport yields a third item (the session id getter).
    session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
    result = await session.initialize()
    version = getattr(result, "protocol_version", None) or getattr(result, "protocolVersion", None)
    if version != PINNED:
        raise SystemExit(f"pysdk: the server negotiated protocol {version!r}, not {PINNED}")
    return session


async def run(args: argparse.Namespace) -> Dict[str, Any]:
    async with contextlib.AsyncExitStack() as stack:
        t0 = time.perf_counter()
        c = await connect(args, stack)
        return await measure_async(c.call_tool, args, time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("-mode", choices=["calls", "large"], default="calls")
    p.add_argument("-stdio", default="")
    p.add_argument("-url", default="")
    p.add_argument("-n", type=int, default=2000)
    p.add_argument("-par", type=int, default=16)
    p.add_argument("-pn", type=int, default=4000)
    args = p.parse_args()
    if bool(args.stdio) == bool(args.url):
        sys.exit("pysdk: need exactly one of -stdio and -url")
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
