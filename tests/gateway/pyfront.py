"""A front client of `lemonmcp serve`: the official Python SDK's
ClientSession (1.x or 2.x, whichever venv runs this), driving the gateway
over stdio or Streamable HTTP through the scenarios the gateway tests check
(bindings/python/tests/test_gateway_fronts.py). Prints one JSON object,
{scenario: report}, and exits 0; what each report must say is the test's to
judge.

    python pyfront.py (--stdio 'CMD ARGS' | --url URL) --prefix fx__ [--scenarios a,b] [--token T]

The fixture's tools (tests/fixtures/mcpfixture) behind the gateway do the
asking: `sample`, `elicit` and `roots` send their request to the client
that called them (through the gateway), `slow` reports progress, `notify`
adds a tool (tools/list_changed), `crash` kills its server mid-call.
Every wait is bounded (WAIT_S).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shlex
import sys
import time
from typing import Any, Dict, List

import mcp.types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

try:  # 2.x
    from mcp.client.streamable_http import streamable_http_client as http_client
except ImportError:  # 1.x before the rename
    from mcp.client.streamable_http import streamablehttp_client as http_client

WAIT_S = 30.0
ROOT = "file:///front/root"


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []) or [])


def is_error(result: Any) -> bool:
    """isError in 1.x, is_error in 2.x."""
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


class Front:
    """One front session and what reached it."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.sampled: List[str] = []
        self.elicited: List[str] = []
        self.rooted = 0
        self.notified: List[str] = []

    async def sampling(self, context: Any, params: Any) -> Any:
        prompt = "".join(getattr(m.content, "text", "") for m in params.messages)
        self.sampled.append(prompt)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"{self.label} answers {prompt}"), model=f"model-{self.label}"
        )

    async def elicitation(self, context: Any, params: Any) -> Any:
        self.elicited.append(getattr(params, "message", ""))
        return types.ElicitResult(action="accept", content={"name": self.label, "age": 7})

    async def roots(self, context: Any) -> Any:
        self.rooted += 1
        return types.ListRootsResult(roots=[types.Root(uri=ROOT, name=self.label)])

    async def messages(self, message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if isinstance(method, str):
            self.notified.append(method)


@contextlib.asynccontextmanager
async def session(args: argparse.Namespace, front: Front):  # type: ignore[no-untyped-def]
    async with contextlib.AsyncExitStack() as stack:
        if args.url:
            headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
            if headers is not None:
                try:
                    import httpx

                    streams = await stack.enter_async_context(
                        http_client(args.url, http_client=httpx.AsyncClient(headers=headers, timeout=WAIT_S)))
                except TypeError:  # 1.x spelling
                    streams = await stack.enter_async_context(http_client(args.url, headers=headers))
            else:
                streams = await stack.enter_async_context(http_client(args.url))
        else:
            argv = shlex.split(args.stdio)
            streams = await stack.enter_async_context(stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])))
        s = await stack.enter_async_context(
            ClientSession(streams[0], streams[1], sampling_callback=front.sampling, elicitation_callback=front.elicitation,
                          list_roots_callback=front.roots, message_handler=front.messages))
        if args.era == "modern":  # 2.x only: server/discover, then stateless requests
            await asyncio.wait_for(s.discover(), WAIT_S)
            MODERN[id(s)] = front
        else:
            await asyncio.wait_for(s.initialize(), WAIT_S)
        yield s


#: The fronts of 2026-07-28 sessions (by id of the session): their calls
#: answer input_required results with the front's handlers and retry.
MODERN: Dict[int, Front] = {}


async def call(s: ClientSession, name: str, arguments: Dict[str, Any], **kw: Any) -> Any:
    front = MODERN.get(id(s))
    if front is None:
        return await asyncio.wait_for(s.call_tool(name, arguments, **kw), WAIT_S)
    responses: Any = None
    state: Any = None
    for _ in range(5):  # bounded rounds
        r = await asyncio.wait_for(s.call_tool(name, arguments, allow_input_required=True, input_responses=responses,
                                               request_state=state, **kw), WAIT_S)
        if getattr(r, "result_type", None) != "input_required":
            return r
        responses = {}
        for key, req in (r.input_requests or {}).items():
            if req.method == "sampling/createMessage":
                responses[key] = await front.sampling(None, req.params)
            elif req.method == "elicitation/create":
                responses[key] = await front.elicitation(None, req.params)
            else:
                responses[key] = await front.roots(None)
        state = r.request_state
    raise RuntimeError(f"{name}: still input_required after 5 rounds")


async def run(args: argparse.Namespace) -> Dict[str, Any]:
    p = args.prefix
    wanted = [w for w in args.scenarios.split(",") if w]
    report: Dict[str, Any] = {}
    front = Front("A")
    async with session(args, front) as s:
        if "tools" in wanted:
            listing = await asyncio.wait_for(s.list_tools(), WAIT_S)
            report["tools"] = {"names": sorted(t.name for t in listing.tools)}
        if "call" in wanted:
            r = await call(s, p + "echo", {"text": "hello through the gateway"})
            report["call"] = {"text": text_of(r), "is_error": is_error(r)}
        if "sampling" in wanted:
            r = await call(s, p + "sample", {"prompt": "two plus two", "max_tokens": 5})
            report["sampling"] = {"text": text_of(r), "is_error": is_error(r), "asked": front.sampled}
        if "elicitation" in wanted:
            r = await call(s, p + "elicit", {"message": "who are you?"})
            report["elicitation"] = {"text": text_of(r), "is_error": is_error(r), "asked": front.elicited}
        if "roots" in wanted:
            r = await call(s, p + "roots", {})
            report["roots"] = {"text": text_of(r), "is_error": is_error(r), "asked": front.rooted}
        if "progress" in wanted:
            seen: List[float] = []

            async def on_progress(progress: float, total: Any, message: Any) -> None:
                seen.append(progress)

            r = await call(s, p + "slow", {"ms": 300, "steps": 3}, progress_callback=on_progress)
            report["progress"] = {"text": text_of(r), "progress": seen}
        if "list_changed" in wanted and args.era == "modern":
            # 2026-07-28: list_changed comes on a subscriptions/listen stream.
            from mcp.client.subscriptions import listen

            front.notified.clear()
            async with listen(s, tools_list_changed=True) as sub:
                await call(s, p + "notify", {})
                event = await asyncio.wait_for(sub.__anext__(), WAIT_S)
                kind = type(event).__name__  # ToolsListChanged: the SDK's event for it
                front.notified.append("notifications/tools/list_changed" if kind == "ToolsListChanged" else kind)
            listing = await asyncio.wait_for(s.list_tools(), WAIT_S)
            report["list_changed"] = {"notified": front.notified,
                                      "dynamic": sorted(t.name for t in listing.tools if "dynamic_" in t.name)}
        elif "list_changed" in wanted:
            front.notified.clear()
            await call(s, p + "notify", {})
            deadline = time.monotonic() + WAIT_S
            while "notifications/tools/list_changed" not in front.notified and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            listing = await asyncio.wait_for(s.list_tools(), WAIT_S)
            report["list_changed"] = {"notified": front.notified,
                                      "dynamic": sorted(t.name for t in listing.tools if "dynamic_" in t.name)}
        if "killed" in wanted:
            # One server killed mid-call: only that call fails; a call to
            # another server at the same time, and the session, go on.
            slow = asyncio.ensure_future(call(s, args.other + "slow", {"ms": 1500, "steps": 3}))
            try:
                crashed = await call(s, p + "crash", {"kill": True})
                killed: Dict[str, Any] = {"failed": is_error(crashed), "text": text_of(crashed)}
            except Exception as exc:  # noqa: BLE001 - a JSON-RPC error is the expected failure
                killed = {"failed": True, "error": str(exc)}
            other = await slow
            after = await call(s, args.other + "echo", {"text": "still here"})
            killed.update({"other": text_of(other), "after": text_of(after)})
            report["killed"] = killed
    if "two_sessions" in wanted:
        report["two_sessions"] = await two_sessions(args)
    return report


async def two_sessions(args: argparse.Namespace) -> Dict[str, Any]:
    """Two front sessions at once, each calling `sample` several times: each
    answer comes from its own session's handler, never the other's."""
    a, b = Front("A"), Front("B")
    async with session(args, a) as sa, session(args, b) as sb:
        async def calls(s: ClientSession, label: str) -> List[str]:
            out = await asyncio.gather(*(call(s, args.prefix + "sample", {"prompt": f"{label}{i}", "max_tokens": 5})
                                         for i in range(4)))
            return [text_of(r) for r in out]

        ra, rb = await asyncio.gather(calls(sa, "a"), calls(sb, "b"))
    return {"a": {"results": ra, "asked": sorted(a.sampled)}, "b": {"results": rb, "asked": sorted(b.sampled)}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdio", default="")
    ap.add_argument("--url", default="")
    ap.add_argument("--token", default="")
    ap.add_argument("--prefix", default="fx__")
    ap.add_argument("--other", default="fy__")
    ap.add_argument("--era", default="legacy", choices=("legacy", "modern"))
    ap.add_argument("--scenarios", default="tools,call,sampling,elicitation,roots,progress,list_changed")
    args = ap.parse_args()
    report = asyncio.run(run(args))
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
