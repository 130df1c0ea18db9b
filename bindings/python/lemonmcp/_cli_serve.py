"""``lemonmcp --config FILE serve``: every server of an application's
config file served as one MCP server (docs/gateway.md).

    lemonmcp --config ~/.cursor/mcp.json serve                      (stdio)
    lemonmcp --config mcp.json serve --http 127.0.0.1:8808           (Streamable HTTP at /mcp)
    TOKEN=... lemonmcp --config mcp.json serve --http 0.0.0.0:8808 --allow-remote --token-env TOKEN

A thin wrapper: the serving loop, the sessions, the relay and the HTTP
front's checks are the library's (``lmcp_server_*``, through
:meth:`lemonmcp.Host.serve`); this module turns the options into the
library's and runs the process's life:

- stdio: the front client talks on stdin and stdout (nothing else is
  written there: Python's ``sys.stdout`` is stderr while serving); when it
  closes stdin, serving ends, every server is closed and reaped, exit 0;
- HTTP: the URL is printed on stdout once listening (one line: port 0
  picks a free port); SIGTERM (or SIGINT) ends it gracefully: no new call is
  taken, the calls in flight finish for at most ``--grace`` seconds;
- exit statuses are the one table (lemonmcp._cli_exit): 0 when serving
  ended as asked, 2 for a usage error (a non-loopback address without
  authentication is one), 3 when serving could not start, 130 on SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from types import FrameType
from typing import IO, Any, Callable, Dict, Mapping, Optional

from ._cli_config import _log_printer, logged_to, parse_inputs
from .errors import InvalidArgument, LemonMCPError, PolicyDenied

__all__ = ["add_serve_parser", "run_serve", "server_options"]

#: Seconds the calls in flight may take to finish once asked to stop.
DEFAULT_GRACE_S = 10.0


def add_serve_parser(sub: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """The ``serve`` command and its options (``sub`` makes a subcommand
    with the common options)."""
    sp = sub("serve", "with --config FILE: serve every server of the file as one MCP server, over stdio "
                      "or (--http) Streamable HTTP (docs/gateway.md)")
    sp.add_argument("--http", dest="serve_http", metavar="HOST:PORT", default=None,
                    help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: any free port; "
                    "the URL is printed on stdout)")
    sp.add_argument("--allow-remote", dest="serve_allow_remote", action="store_true",
                    help="allow a non-loopback --http address (authentication is then required)")
    sp.add_argument("--token-env", dest="serve_token_env", metavar="VAR", default=None,
                    help="require 'Authorization: Bearer TOKEN', TOKEN (16 characters or more) read from environment variable VAR")
    sp.add_argument("--jwks-url", dest="serve_jwks_url", metavar="URL", default=None,
                    help="require an OAuth access token (a JWT) signed by a key of this JWKS")
    sp.add_argument("--issuer", dest="serve_issuer", metavar="URL", default=None,
                    help="the tokens' issuer (the authorization server), with --jwks-url")
    sp.add_argument("--audience", dest="serve_audience", metavar="URI", default=None,
                    help="the tokens' audience, with --jwks-url: this gateway's URL")
    sp.add_argument("--origin", dest="serve_origin", metavar="ORIGIN", action="append", default=None,
                    help="an Origin the HTTP front accepts besides loopback ones (repeatable)")
    sp.add_argument("--max-sessions", dest="serve_max_sessions", metavar="N", type=int, default=None,
                    help="at most N front sessions open at once (default 1024)")
    sp.add_argument("--session-idle", dest="serve_session_idle", metavar="SECONDS", type=float, default=None,
                    help="close a front session unused this long (default 1800)")
    sp.add_argument("--grace", dest="serve_grace", metavar="SECONDS", type=float, default=DEFAULT_GRACE_S,
                    help=f"on SIGTERM, how long the calls in flight may take to finish (default {DEFAULT_GRACE_S:g})")


def server_options(ns: argparse.Namespace) -> Dict[str, Any]:
    """The library's serving options (docs/gateway.md) for the command
    line's; ValueError names a flag given without what it needs. The
    token's variable is named to the library, which reads it: the token
    itself never passes through here."""
    http = ns.serve_http
    if not http:
        for flag, given in (("--allow-remote", ns.serve_allow_remote), ("--token-env", ns.serve_token_env),
                            ("--jwks-url", ns.serve_jwks_url), ("--issuer", ns.serve_issuer),
                            ("--audience", ns.serve_audience), ("--origin", ns.serve_origin),
                            ("--max-sessions", ns.serve_max_sessions), ("--session-idle", ns.serve_session_idle)):
            if given:
                raise ValueError(f"{flag} is an option of the HTTP front: give --http HOST:PORT")
        return {}
    opts: Dict[str, Any] = {"stop_timeout_ms": int(ns.serve_grace * 1000) or 1}
    if ns.serve_token_env and (ns.serve_jwks_url or ns.serve_issuer or ns.serve_audience):
        raise ValueError("give --token-env or --jwks-url (with --issuer and --audience), not both")
    if ns.serve_token_env:
        opts["auth"] = {"bearer_env": ns.serve_token_env}
    elif ns.serve_jwks_url or ns.serve_issuer or ns.serve_audience:
        if not (ns.serve_jwks_url and ns.serve_issuer and ns.serve_audience):
            raise ValueError("--jwks-url, --issuer and --audience go together (the audience is this gateway's URL)")
        opts["auth"] = {"jwks_url": ns.serve_jwks_url, "issuer": ns.serve_issuer, "audience": ns.serve_audience}
    if ns.serve_allow_remote:
        opts["allow_non_loopback"] = True
    if ns.serve_origin:
        opts["allowed_origins"] = list(ns.serve_origin)
    if ns.serve_max_sessions is not None:
        opts["max_sessions"] = ns.serve_max_sessions
    if ns.serve_session_idle is not None:
        opts["session_idle_timeout_ms"] = max(1, int(ns.serve_session_idle * 1000))
    return opts


class _Stop:
    """SIGTERM and SIGINT while serving: remembered, acted on by the
    waiting loop (a Python handler runs on the main thread between two
    slices of the wait)."""

    def __init__(self) -> None:
        self.signal: Optional[int] = None
        self.saved: Dict[int, Any] = {}

    def __enter__(self) -> "_Stop":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self.saved[sig] = signal.signal(sig, self._on)
        return self

    def _on(self, sig: int, frame: Optional[FrameType]) -> None:
        if self.signal is None:
            self.signal = sig

    def __exit__(self, *exc_info: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)


def _log_failed_servers(host: Any, ready: float, stop: "_Stop") -> None:
    """Wait (up to ``ready`` seconds, or a signal) for every server to be
    ready or to fail, and log each that failed, with why: the front is
    served meanwhile, and a failed server is restarted by the host."""
    deadline = time.monotonic() + ready
    while stop.signal is None and time.monotonic() < deadline:
        if host._session.settled():
            break
        time.sleep(0.05)
    try:
        host.wait_ready(0)
    except LemonMCPError:
        pass  # each failed server was logged, with why


def run_serve(
    ns: argparse.Namespace,
    out: IO[str],
    err: IO[str],
    *,
    prog: str,
    usage_error: Callable[[str], Exception],
    exits: Mapping[str, int],
    error_text: Callable[[LemonMCPError], str],
) -> int:
    """Runs ``serve`` until the front ends it (stdio), or a signal."""
    from ._serve import RELAYED_HANDLERS, Server  # asyncio, only for serve
    from .host import Host  # the host is only loaded when used

    if not getattr(ns, "config", None) or getattr(ns, "server", None) or ns.stdio or ns.url or ns.sse:
        raise usage_error("serve needs --config FILE (every server of the file is served; without --server)")
    if ns.serve_grace is not None and ns.serve_grace < 0:
        raise usage_error("--grace: expected a non-negative number of seconds")
    try:
        inputs = parse_inputs(getattr(ns, "input", None))
        options = server_options(ns)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    ready = ns.timeout if ns.timeout else 30.0
    stdio = not ns.serve_http
    with logged_to(err, prog, bool(ns.quiet)), _Stop() as stop:
        try:
            # Every server may ask what a front client answers: the gateway
            # relays each request to the front session whose call caused it
            # (and refuses it, naming why, when that client cannot answer).
            # -v: the servers' log lines on stderr (the host's events reach
            # it through the gateway, which holds the host's handler).
            host = Host(ns.config, ready_timeout=ready, strict=bool(getattr(ns, "strict", False)), inputs=inputs,
                        defaults={"handlers": RELAYED_HANDLERS},
                        on_event=_log_printer(err) if getattr(ns, "verbose", False) else None)
        except InvalidArgument as exc:
            raise usage_error(error_text(exc)) from None
        saved_stdout = sys.stdout
        try:
            # The gateway takes the host's server requests before the
            # servers start; the front is served once they are ready or
            # failed (a call to a server still starting would be refused).
            with Server(host, options) as server:
                host.connect()
                _log_failed_servers(host, ready, stop)
                if stop.signal is not None:
                    pass  # asked to end before serving began: nothing to stop
                elif stdio:
                    # The protocol owns fd 1 from here: a stray print goes to stderr.
                    sys.stdout = sys.stderr
                    server.serve_fds((0, 1))
                else:
                    server.serve_http(ns.serve_http)
                    out.write(f"{server.url}\n")
                    out.flush()
                    if not ns.quiet:
                        err.write(f"{prog}: serving {len(host.servers())} server(s) at {server.url}\n")
                        err.flush()
                while stop.signal is None and not server.wait_slice(200):
                    pass
                # Leaving the block stops serving, gracefully: the calls in
                # flight get --grace (stop_timeout_ms), then it is freed.
        except (InvalidArgument, PolicyDenied) as exc:
            raise usage_error(error_text(exc)) from None
        finally:
            sys.stdout = saved_stdout
            host.close()
    if stop.signal == signal.SIGINT:
        return exits["interrupted"]
    return exits["ok"]
