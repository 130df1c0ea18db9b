"""``lemonmcp --config FILE`` without ``--server``: every server of an
application's config file through one :class:`lemonmcp.Host`.

- the file is read by the library (``lmcp_host_new_file``): a malformed file
  is one line naming it; the members the host ignores are warnings on
  stderr (``--strict`` refuses them); ``--input ID=VALUE`` gives VS Code's
  ``${input:ID}``;
- ``call SERVER__TOOL`` starts only that server (the others stay unstarted:
  the host is lazy) and checks the arguments against that server's listing
  of the tool before anything is sent;
- a server that failed is reported at once with why: its reason, exit
  status or signal and its last stderr lines (bounded, escaped and scrubbed
  by the library); ``servers`` exits 3 when one failed;
- ``-v`` shows every server's log lines, labelled with its name;
- ``check`` loads the file and shows each server, starting nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
from typing import IO, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from ._cli_args import key_values
from ._host_file import FAILED_SERVER, failure_text, settled_report
from .errors import InvalidArgument, LemonMCPError

__all__ = ["run_config", "parse_inputs", "logged_to"]


class _StderrHandler(logging.Handler):
    """The ``lemonmcp`` logger's warnings as ``lemonmcp: warning: ...``
    lines (the Host logs ignored members and failed servers there)."""

    def __init__(self, err: IO[str], prog: str, quiet: bool) -> None:
        super().__init__(logging.WARNING)
        self.err, self.prog, self.quiet = err, prog, quiet

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        failure = hasattr(record, FAILED_SERVER)
        if self.quiet and not failure:
            return  # -q: no warnings; a failed server is an error and shows
        self.err.write(f"{self.prog}: {'' if failure else 'warning: '}{msg}\n")
        self.err.flush()


@contextlib.contextmanager
def logged_to(err: IO[str], prog: str, quiet: bool) -> Iterator[None]:
    """While inside, the ``lemonmcp`` logger's lines (a config file's
    warnings, failed servers) are printed on ``err`` by _StderrHandler, once,
    not by logging's last resort."""
    logger = logging.getLogger("lemonmcp")
    handler = _StderrHandler(err, prog, quiet)
    logger.addHandler(handler)
    propagate = logger.propagate
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def parse_inputs(items: Optional[Sequence[str]]) -> Dict[str, str]:
    """--input ID=VALUE words (ValueError names a malformed one)."""
    return key_values(items, "--input", "ID")


def _route_of(host: Any, tool: str) -> Optional[Tuple[str, str]]:
    """(server, its own name of the tool) the host routes a name given to
    ``call`` to, as the library tells it without starting a server (a
    sanitised or prefixed name is the library's to read, not split)."""
    route: Optional[Tuple[str, str]] = host.tool_route(tool)
    return route


def _log_printer(err: IO[str]) -> Callable[[str, Dict[str, Any]], None]:
    def on_event(kind: str, payload: Dict[str, Any]) -> None:
        if kind == "log":
            err.write(f"[{payload.get('server') or 'host'}] {payload.get('message', '')}\n")
            err.flush()

    return on_event


def run_config(
    ns: argparse.Namespace,
    out: IO[str],
    err: IO[str],
    *,
    prog: str,
    usage_error: Callable[[str], Exception],
    failure: Callable[[int, str], Exception],
    exits: Mapping[str, int],
    show_tools: Callable[[List[Any], IO[str], IO[str], bool], None],
    show_servers: Callable[[Dict[str, Dict[str, Any]], IO[str], bool], None],
    call_arguments: Callable[[argparse.Namespace, bool, Optional[Mapping[str, Any]]], Tuple[Dict[str, Any], bool]],
    schema_of: Callable[[Sequence[Any], str, str], Mapping[str, Any]],
    show_result: Callable[[Any, str, IO[str], IO[str], bool], int],
    error_text: Callable[[LemonMCPError], str],
    search: Callable[[Any, bool], int],
    pins: Callable[[Any, bool], int],
) -> int:
    """Runs ``tools``, ``call``, ``servers``, ``search`` or ``check`` over
    the file's servers; the
    command line's helpers are passed in (cli.py owns them)."""
    from .host import Host, HostTool  # the host is only loaded when used

    as_json = bool(getattr(ns, "json_output", False))
    if ns.timeout is not None and ns.timeout < 0:
        raise usage_error("--timeout: expected a non-negative number of seconds")
    try:
        inputs = parse_inputs(getattr(ns, "input", None))
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    ready = ns.timeout if ns.timeout else 30.0
    with logged_to(err, prog, bool(ns.quiet)):
        try:
            host = Host(
                ns.config,
                ready_timeout=ready,
                strict=bool(getattr(ns, "strict", False)),
                inputs=inputs,
                # `call` starts only the server it needs.
                start="lazy" if ns.command == "call" else None,
                # --server NAME: that server alone, through the host's guard
                # and sandbox, under its own tool names.
                only=[ns.server] if getattr(ns, "server", None) else None,
                stdio=_stdio_override(ns, usage_error),
                **({"tool_prefix": "never"} if getattr(ns, "server", None) else {}),
                on_event=_log_printer(err) if ns.verbose else None,
            )
        except InvalidArgument as exc:
            raise usage_error(error_text(exc)) from None
        if ns.command == "check":
            try:
                _check(host, out, as_json)
            finally:
                host.close()
            return exits["ok"]
        with host:
            if ns.command == "servers":
                servers = host.servers()
                show_servers(servers, out, as_json)
                failed = [n for n, s in servers.items() if s.get("state") == "failed"]
                return exits["connect"] if failed else exits["ok"]
            if ns.command == "tools":
                tools = host.list_tools()
                held = _held_tools(host) if not tools else []
                if held and not as_json:
                    err.write(f"{prog}: every tool is held by the host's pins ({', '.join(held)}): "
                              f"`{prog} --config FILE pins` shows why\n")
                    return exits["held"]
                show_tools(tools, out, err, as_json)
                return exits["ok"]
            if ns.command == "search":
                return search(host, as_json)
            if ns.command in ("pins", "approve"):
                return pins(host, as_json)
            return _call(host, HostTool, ns, out, err, as_json, failure, call_arguments, schema_of, show_result, exits)


def _stdio_override(ns: argparse.Namespace, usage_error: Callable[[str], Exception]) -> Optional[Dict[str, Any]]:
    """--env, --cwd and --inherit-env, laid over how the file's servers
    start (the library refuses them for a server reached by URL)."""
    o: Dict[str, Any] = {}
    try:
        env = key_values(getattr(ns, "env", None), "--env")
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    if env:
        o["env"] = env
    if getattr(ns, "cwd", None):
        o["cwd"] = ns.cwd
    if getattr(ns, "inherit_env", None):
        o["env_inherit"] = "all"
    return o or None


def _held_tools(host: Any) -> List[str]:
    """SERVER/TOOL of every tool the host's pins hold (none without pins)."""
    from .errors import InvalidState

    try:
        pins = host.pins()
    except InvalidState:
        return []  # no "pins" in the file
    held = [f"{server}/*: its instructions" for server, p in pins.items() if (p.get("instructions") or {}).get("held")]
    return held + sorted(f"{server}/{name}" for server, p in pins.items()
                         for name, e in (p.get("tools") or {}).items() if e.get("held"))


def _is_held(host: Any, tool: str, route: Optional[Tuple[str, str]]) -> bool:
    """Whether the host's pins hold the tool a name given to `call` names:
    the tool the library routes it to (route: (server, its own name), read
    from the library, never rebuilt from the name), else a server's tool of
    that own name; a server whose instructions are held holds them all."""
    from .errors import InvalidState

    try:
        pins = host.pins()
    except InvalidState:
        return False  # no "pins" in the file
    for server, p in pins.items():
        if route is not None and server != route[0]:
            continue
        held = ((p.get("tools") or {}).get(route[1] if route is not None else tool) or {}).get("held")
        if held or (route is not None and (p.get("instructions") or {}).get("held")):
            return True
    return False


def _check(host: Any, out: IO[str], as_json: bool) -> None:
    """``check``: what the host makes of the file (the warnings went to
    stderr as it was loaded)."""
    servers = host.servers()
    if as_json:
        json.dump({"servers": {n: {"enabled": s.get("enabled"), "start": s.get("start", "eager")} for n, s in servers.items()},
                   "warnings": host.warnings}, out, indent=2)
        out.write("\n")
        return
    for name, s in sorted(servers.items()):
        out.write(f"{name}: {'enabled' if s.get('enabled') else 'disabled'}, starts {s.get('start', 'eager')}\n")


def _call(
    host: Any,
    host_tool: Any,
    ns: argparse.Namespace,
    out: IO[str],
    err: IO[str],
    as_json: bool,
    failure: Callable[[int, str], Exception],
    call_arguments: Callable[[argparse.Namespace, bool, Optional[Mapping[str, Any]]], Tuple[Dict[str, Any], bool]],
    schema_of: Callable[[Sequence[Any], str, str], Mapping[str, Any]],
    show_result: Callable[[Any, str, IO[str], IO[str], bool], int],
    exits: Mapping[str, int],
) -> int:
    route = _route_of(host, ns.tool)
    server = route[0] if route is not None else None

    def failed_start(exc: LemonMCPError) -> Exception:
        if host.servers().get(server or "", {}).get("state") != "failed":
            return exc
        # A server process that died is reaped a moment after the call it
        # failed: its exit status and last stderr lines are waited for
        # (boundedly). A start that could not happen reports now.
        return failure(exits["connect"], failure_text(settled_report(host.servers, server or "")))

    try:
        tools: List[Any] = []
        paged = False
        if route is not None:
            # Only this server's listing: the others stay unstarted. The
            # routed tool carries the name it was called by; any other
            # answer (not there, held) is the host's list's to give.
            listing = host.call(route[0], "tools/list", {}, timeout=ns.timeout or None)
            tools = [host_tool.from_host_json({**t, "name": ns.tool, "server": route[0], "original_name": route[1]})
                     for t in listing.get("tools", []) if isinstance(t, dict) and t.get("name") == route[1]]
            where = f"the server {route[0]!r}"
            paged = not tools and bool(listing.get("nextCursor"))
        if not tools and not paged and not _is_held(host, ns.tool, route):
            tools = host.list_tools()
            where = "the host"
            # The host's list knows the routes of every name it exposes
            # (sanitised ones and held tools included): a route guessed from
            # the server__ prefix before it is replaced by the known one.
            route = _route_of(host, ns.tool)
        schema: Optional[Mapping[str, Any]]
        unlisted: Optional[Exception] = None
        if paged and not any(t.name == ns.tool for t in tools):
            schema = None  # on a later page: the call says what is wrong
        else:
            try:
                schema = schema_of(tools, ns.tool, where)
            except Exception as exc:  # not listed: held, or no such tool
                schema, unlisted = None, exc
        arguments, as_json = call_arguments(ns, as_json, schema)
        if unlisted is not None and not _is_held(host, ns.tool, route):
            raise unlisted
        # A held tool is not listed: the host's refusal says why.
        result = host.call_tool(ns.tool, arguments, timeout=ns.timeout or None)
    except LemonMCPError as exc:
        raise failed_start(exc) from None
    return show_result(result, ns.tool, out, err, as_json)
