"""``lemonmcp``: a command-line MCP client.

    lemonmcp --stdio 'my-server --flag' tools
    lemonmcp --stdio ./server call echo text="hello there" count=3
    lemonmcp --stdio ./server read file:///logo.png -o logo.png
    lemonmcp --stdio ./server complete prompt greet name=Al
    lemonmcp --config mcp.json --server files read file:///etc/hostname
    lemonmcp --config mcp.json tools                  (every server: files__read, ...)
    lemonmcp --config mcp.json call files__read path=/etc/hostname
    lemonmcp --config mcp.json servers
    lemonmcp --config mcp.json search "create a github issue"
    lemonmcp --config mcp.json pins                   (what the host holds, and why)
    lemonmcp --config mcp.json approve github create_issue --hash sha256:...
    lemonmcp --url https://example.com/mcp --json info

KEY=VALUE arguments are typed by the tool's input schema (lemonmcp._cli_args).
Text a server returned is written as it came (lemonmcp._cli_output). Nothing
is offered to the server unasked: roots only with --root, sampling only with
--sampling-command (or, on a terminal, to show and refuse a request),
elicitation only on a terminal, as a form (lemonmcp._cli_host). With
--config and no --server, tools, call and servers go through one
lemonmcp.Host over every server of the file.

    lemonmcp --url https://example.com/mcp --client-id me --client-secret-env MY_SECRET tools
    lemonmcp --url https://example.com/mcp --authorize --redirect-uri http://127.0.0.1:8976/callback tools

OAuth (HTTP servers): --client-id, --client-secret-env VAR (the secret is
read from the environment, never from the command line), --scope,
--redirect-uri, --oauth-flow, and --authorize for the authorization code
flow: the URL to open is printed on stderr and the URL the browser was
redirected to is read from stdin.

Exit status: one table (lemonmcp._cli_exit), the same in every mode, shown
by --help and in bindings/python/README.md.

When a stdio server fails, the last lines it wrote on stderr are shown
(at most 20 lines, 4 KiB), labelled as the server's.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import threading
import time
from typing import IO, Any, Callable, Dict, List, Mapping, NoReturn, Optional, Sequence, Tuple

from . import __version__, _host_file
from ._base import LOG_LEVELS
from ._cli_args import ArgumentError, arguments_from_words, check_arguments, did_you_mean, env_words, split_words
from ._cli_config import logged_to, parse_inputs
from ._cli_exit import EXIT_CODES, exit_table_text
from ._cli_host import TerminalInput, denial_printer, elicitation_handler, review_printer, sampling_command_handler
from ._cli_output import (
    _describe_resource,
    _dump,
    _isatty,
    _line_end,
    _log_printer,
    _notification_printer,
    _one_line,
    _ProgressLine,
    _schema_args,
    _size,
    _width,
    _wrap,
    format_content,
    format_info,
    format_table,
    stderr_tail_text,
)
from ._cli_pins import run_approve, run_pins
from ._cli_search import run_search
from ._cli_serve import add_serve_parser, run_serve
from ._config import http_transport, stdio_transport
from .client import Client
from .errors import (
    AuthRequired,
    Cancelled,
    ClosedError,
    InvalidArgument,
    LemonMCPError,
    NotFound,
    PolicyDenied,
    ProtocolError,
    TimeoutError,
    TransportError,
    UnsupportedError,
)
from .types import CallToolResult, Closed, GetPromptResult, ReadResourceResult

__all__ = ["main", "build_parser", "parse_kv", "server_from_config", "format_table", "EXIT"]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECT = 3
EXIT_PROTOCOL = 4
EXIT_UNSUPPORTED = 5
EXIT_AUTH = 6
EXIT_NOT_FOUND = 7
EXIT_HELD = 8
# As timeout(1) does, so that scripts wrapping either read it the same way.
EXIT_TIMEOUT = 124
EXIT_INTERRUPTED = 130
#: Every exit status by name, from the one table (lemonmcp._cli_exit).
EXIT = {name: code for code, name, _ in EXIT_CODES}

PROG = "lemonmcp"


class UsageError(Exception):
    """A mistake in the command line or the config file (exit 2)."""


class Failure(Exception):
    """A failure with its exit status and one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ------------------------------------------------------------------ parsing


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One useful line, not the usage banner: --help has the rest.
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {PROG} --help)\n")


def _common(p: argparse.ArgumentParser, sub: bool) -> None:
    """Options accepted before and after the command (after it, they are
    suppressed unless given, so they never clobber the ones before)."""
    d: Any = argparse.SUPPRESS if sub else None
    sfx = "_sub" if sub else ""
    g = p.add_argument_group("server (give one)")
    g.add_argument("--stdio", metavar="COMMAND", default=d, help="run COMMAND (shell-like quoting, no shell) and talk over stdio")
    g.add_argument("--url", metavar="URL", default=d, help="Streamable HTTP server, falling back to legacy SSE")
    g.add_argument("--sse", metavar="URL", default=d, help="legacy HTTP+SSE server")
    g.add_argument("--config", metavar="FILE", default=d, help='JSON file in the "mcpServers" shape')
    g.add_argument("--server", metavar="NAME", default=d, help="which server of --config (optional when it has one)")
    g.add_argument("--input", dest="input" + sfx, metavar="ID=VALUE", action="append", default=d,
                   help="the value of ${input:ID} in a --config file (VS Code's inputs; repeatable)")
    g.add_argument("--strict", action="store_true", default=d,
                   help="refuse the members of a --config file LemonMCP does not use, instead of warning")
    g.add_argument("--header", dest="header" + sfx, metavar="'NAME: VALUE'", action="append", default=d, help="HTTP header (repeatable)")
    g.add_argument("--env", dest="env" + sfx, metavar="KEY=VALUE", action="append", default=d, help="environment variable for a stdio server (repeatable)")
    g.add_argument("--cwd", metavar="DIR", default=d, help="working directory of a stdio server")
    g.add_argument("--inherit-env", action="store_true", default=d, help="give a stdio server the whole environment, not a minimal one")
    a = p.add_argument_group("OAuth (HTTP servers)")
    a.add_argument("--client-id", metavar="ID", default=d, help="pre-registered OAuth client id")
    a.add_argument(
        "--client-secret-env",
        metavar="VAR",
        default=d,
        help="read the client secret from environment variable VAR (never pass a secret as an argument)",
    )
    # A secret on the command line ends up in shell history and `ps`: the
    # option exists only to refuse it (without echoing the value).
    a.add_argument("--client-secret", dest="client_secret_arg", metavar="SECRET", nargs="?", const="", default=d,
                   help=argparse.SUPPRESS)
    a.add_argument("--scope", dest="scope" + sfx, metavar="SCOPE", action="append", default=d,
                   help="scope to request when the server names none (repeatable, or space-separated)")
    a.add_argument("--redirect-uri", metavar="URI", default=d, help="redirect URI of the authorization code flow (loopback http or https)")
    a.add_argument("--oauth-flow", metavar="FLOW", choices=("auto", "client_credentials", "authorization_code"), default=d,
                   help="auto (default), client_credentials or authorization_code")
    a.add_argument("--authorize", action="store_true", default=d,
                   help="run the authorization code flow interactively: print the URL to open, read the redirected URL from stdin")
    o = p.add_argument_group("behaviour")
    o.add_argument("--timeout", metavar="SECONDS", type=float, default=d, help="bound the connection and each request")
    o.add_argument("--protocol", metavar="MODE", choices=("auto", "legacy", "modern"), default=d,
                   help="protocol era: auto (default: 2026-07-28 when the server speaks it, else the initialize "
                   "handshake), legacy (initialize only) or modern (2026-07-28 only)")
    o.add_argument("-v", "--verbose", action="store_true", default=d, help="show the server's log lines on stderr")
    o.add_argument("-q", "--quiet", action="store_true", default=d, help="no progress on stderr")
    o.add_argument("--log-level", metavar="LEVEL", choices=LOG_LEVELS, default=d,
                   help="ask the server for its log messages at LEVEL and above (" + ", ".join(LOG_LEVELS)
                   + "); they are shown on stderr")
    o.add_argument("--sampling-command", metavar="CMD", default=d,
                   help="answer the server's sampling requests with CMD (shell-like quoting, no shell): the request's "
                   "params as JSON on its stdin, the result as JSON on its stdout")
    o.add_argument("--root", dest="root" + sfx, metavar="PATH", action="append", default=d,
                   help="offer PATH (a directory, or a URI) to the server as a root (repeatable); no root is offered without it")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="A Model Context Protocol client: ask an MCP server for its tools, resources and prompts, and use them.",
        epilog="Elicitation is offered only on a terminal (a form); sampling only with --sampling-command\n"
        "(on a terminal without it a request is shown and refused); roots only with --root.\n\n" + exit_table_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _common(parser, sub=False)
    parser.add_argument("--json", dest="json_output", action="store_true", help="machine-readable output (the raw result)")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subs.required = True

    def sub(name: str, help: str) -> argparse.ArgumentParser:
        sp = subs.add_parser(name, help=help, description=help)
        _common(sp, sub=True)
        return sp

    def json_flag(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--json", dest="json_output", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")

    json_flag(sub("info", "show the server's name, version, protocol and capabilities"))
    json_flag(sub("tools", "list the tools"))
    c = sub("call", "call a tool")
    c.add_argument("tool", metavar="TOOL")
    c.add_argument("args", metavar="KEY=VALUE", nargs="*",
                   help="arguments, typed by the tool's input schema: VALUE is a number, boolean, array or object only "
                   "where the schema allows one, else the text as typed (a repeated KEY builds an array)")
    c.add_argument(
        "--json",
        dest="call_json",
        metavar="ARGS",
        nargs="?",
        const=True,
        default=argparse.SUPPRESS,
        help="the arguments as one JSON object (@FILE reads a file, - stdin); without ARGS: machine-readable output",
    )
    c.add_argument("--args", dest="call_args", metavar="JSON", default=None, help="the arguments as one JSON object")
    json_flag(sub("resources", "list the resources"))
    json_flag(sub("templates", "list the resource templates"))
    r = sub("read", "read a resource")
    r.add_argument("uri", metavar="URI")
    r.add_argument("-o", "--output", metavar="FILE", default=None,
                   help="write the resource's exact bytes (text, or the decoded blob) to FILE ('-': stdout)")
    json_flag(r)
    json_flag(sub("prompts", "list the prompts"))
    pr = sub("prompt", "get a prompt")
    pr.add_argument("name", metavar="NAME")
    pr.add_argument("args", metavar="KEY=VALUE", nargs="*", help="prompt arguments (strings)")
    json_flag(pr)
    json_flag(sub("ping", "check that the server answers"))
    co = sub("complete", "ask the server to complete an argument of a prompt or a resource template")
    co.add_argument("kind", metavar="prompt|resource", choices=("prompt", "resource"))
    co.add_argument("ref", metavar="NAME|URI_TEMPLATE", help="the prompt's name, or the resource template's URI template")
    co.add_argument("argument", metavar="ARG=PARTIAL", help="the argument and what is typed so far (may be empty: ARG=)")
    co.add_argument("--context", dest="context", metavar="KEY=VALUE", action="append", default=None,
                    help="an argument already given (repeatable)")
    json_flag(co)
    json_flag(sub("servers", "with --config FILE and no --server: each server's state"))
    se = sub("search", "with --config FILE and no --server: every server's tools ranked against QUERY")
    se.add_argument("query", metavar="QUERY", help='what the tool should do, in a few words ("create a github issue")')
    se.add_argument("--limit", metavar="N", type=int, default=10, help="at most N tools (1-100, default 10)")
    json_flag(se)
    json_flag(sub("pins", "with --config FILE (and \"pins\" in it): what the host holds and why, with a diff of each change"))
    ap = sub("approve", "with --config FILE: approve what SERVER offers and the host holds (only NAME when given): "
             "the definition with the hash `pins` printed (--hash), or, on a terminal, each one shown and confirmed")
    ap.add_argument("approve_server", metavar="SERVER")
    ap.add_argument("approve_name", metavar="NAME", nargs="?", default=None, help="a tool's, prompt's or resource's name (default: everything held)")
    ap.add_argument("--hash", dest="approve_hash", metavar="HASH", default=None,
                    help="approve only a definition offered with this hash (the one `pins` printed): a server that changed it since is refused")
    ap.add_argument("--yes", dest="approve_yes", action="store_true",
                    help="approve what the server offers now without asking (it may differ from what `pins` showed)")
    json_flag(sub("check", "with --config FILE: load it as the host would and show each server and every warning, starting nothing"))
    add_serve_parser(sub)
    return parser


def _merge_sub(ns: argparse.Namespace) -> argparse.Namespace:
    for name in ("header", "env", "scope", "root", "input"):
        extra = getattr(ns, name + "_sub", None)
        if extra:
            setattr(ns, name, (getattr(ns, name) or []) + list(extra))
        if hasattr(ns, name + "_sub"):
            delattr(ns, name + "_sub")
    return ns


def parse_kv(items: Sequence[str], *, json_values: bool = True) -> Dict[str, Any]:
    """KEY=VALUE words to a dict; a VALUE that parses as JSON is that JSON
    value (``n=3``, ``flag=true``, ``xs=[1,2]``), else the string itself."""
    out: Dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"expected KEY=VALUE, got {item!r}")
        if json_values:
            try:
                out[key] = json.loads(value)
            except ValueError:
                out[key] = value
        else:
            out[key] = value
    return out


def _json_object(text: str, what: str) -> Dict[str, Any]:
    if text == "-":
        text = sys.stdin.read()
    elif text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise UsageError(f"{what}: cannot read {text[1:]}: {exc.strerror}") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what}: not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{what}: expected a JSON object")
    return value


def _headers(items: Optional[Sequence[str]]) -> Optional[Dict[str, str]]:
    if not items:
        return None
    out: Dict[str, str] = {}
    for h in items:
        name, sep, value = h.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header: expected 'NAME: VALUE', got {h!r}")
        out[name.strip()] = value.strip()
    return out


def _env(items: Optional[Sequence[str]]) -> Optional[Dict[str, str]]:
    try:
        return env_words(items) or None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def server_from_config(
    path: str, name: Optional[str], inputs: Optional[Mapping[str, str]] = None, *, command: Optional[str] = None
) -> Tuple[str, Dict[str, Any]]:
    """The transport object of server ``name`` of a config file, read by
    the host's own reader (every dialect: VS Code's comments and
    ``servers``, ``serverUrl``/``httpUrl``, ``${VAR}``, ``envFile``), so the
    file means the same with and without --server. Returns (name,
    transport); the file's warnings are printed by the caller's logger.
    A ``command`` that would talk to the server alone is refused when the
    file guards it in ways only a host applies (pins, tools.allow/deny)."""
    try:
        doc = _host_file.file_server(path, name, _host_file.load_options(inputs=inputs))
    except LemonMCPError as exc:
        raise UsageError(f"--config: {exc}") from None
    _host_file.log_warnings([str(w) for w in doc.get("warnings", [])])
    guards = [str(g) for g in doc.get("host_guards") or []]
    if command is not None and guards:
        words = {"pins": "pins its servers' definitions", "tool_filters": "filters this server's tools (tools.allow/tools.deny)"}
        raise UsageError(
            f"--server {doc['name']}: the file {' and '.join(words.get(g, g) for g in guards)}, which `{command}` "
            f"would go around (it talks to the server alone); use {', '.join(HOST_COMMANDS)}, which go through the host")
    transport = dict(doc["config"]["transport"])
    if transport.get("type") == "stdio":
        transport.setdefault("stderr", "capture")
    return str(doc["name"]), transport


def _transport(ns: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    given = [o for o in ("stdio", "url", "sse", "config") if getattr(ns, o, None)]
    if not given:
        raise UsageError("give a server: --stdio 'COMMAND ARGS', --url URL, --sse URL, or --config FILE [--server NAME]")
    if len(given) > 1:
        raise UsageError(f"give one server, not --{' and --'.join(given)}")
    if ns.server and not ns.config:
        raise UsageError("--server needs --config")
    try:
        if ns.stdio:
            try:
                words = shlex.split(ns.stdio)
            except ValueError as exc:
                raise UsageError(f"--stdio: {exc}") from None
            if not words:
                raise UsageError("--stdio: empty command")
            return words[0], stdio_transport(
                words[0],
                words[1:],
                env=_env(ns.env),
                cwd=ns.cwd,
                env_inherit="all" if ns.inherit_env else None,
                stderr="capture",
            )
        if ns.url:
            return ns.url, http_transport(ns.url, _headers(ns.header), type="http")
        if ns.sse:
            return ns.sse, http_transport(ns.sse, _headers(ns.header), type="sse")
    except InvalidArgument as exc:
        raise UsageError(str(exc)) from None
    try:
        inputs = parse_inputs(getattr(ns, "input", None))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    name, t = server_from_config(ns.config, ns.server, inputs, command=ns.command)
    if t["type"] == "stdio":
        extra = _env(ns.env)
        if extra:
            t["env"] = {**t.get("env", {}), **extra}
        if ns.cwd:
            t["cwd"] = ns.cwd
        if ns.inherit_env:
            t["env_inherit"] = "all"
    elif ns.header:
        t["headers"] = {**t.get("headers", {}), **(_headers(ns.header) or {})}
    return name, t


# ------------------------------------------------------------------ OAuth

#: How long the interactive authorization waits for the pasted URL (seconds).
AUTHORIZE_TIMEOUT_S = 300.0


def _auth_options(ns: argparse.Namespace, transport: Mapping[str, Any], stdin: IO[str], err: IO[str]) -> Dict[str, Any]:
    """The client options for the OAuth flags: ``auth`` and, with
    --authorize, the interactive ``authorize`` handler. {} without them."""
    auth: Dict[str, Any] = {}
    if getattr(ns, "client_secret_arg", None) is not None:
        raise UsageError("--client-secret is not accepted (a secret in argv is visible to other users): "
                         "put it in an environment variable and pass --client-secret-env VAR")
    if ns.client_id:
        auth["client_id"] = ns.client_id
    if ns.client_secret_env:
        secret = os.environ.get(ns.client_secret_env)
        if not secret:
            raise UsageError(f"--client-secret-env: the environment variable {ns.client_secret_env} is not set or empty")
        auth["client_secret"] = secret
    if ns.scope:
        scopes = [w for item in ns.scope for w in item.split()]
        if scopes:
            auth["scopes"] = scopes
    if ns.redirect_uri:
        auth["redirect_uri"] = ns.redirect_uri
    if ns.oauth_flow:
        auth["flow"] = ns.oauth_flow
    options: Dict[str, Any] = {}
    if ns.authorize:
        if not ns.redirect_uri:
            raise UsageError("--authorize needs --redirect-uri (where the authorization server sends the browser back)")
        auth.setdefault("authorization_timeout_ms", int(AUTHORIZE_TIMEOUT_S * 1000))
        options["authorize"] = interactive_authorize(stdin, err)
    if auth:
        if transport.get("type") == "stdio":
            raise UsageError("the OAuth options apply to HTTP servers (--url, --sse), not to --stdio")
        options["auth"] = auth
    return options


def interactive_authorize(stdin: IO[str], err: IO[str]) -> Callable[[Dict[str, Any]], Dict[str, str]]:
    """An ``authorize`` handler for a terminal: print the authorization URL,
    read back the URL the browser was redirected to (query included). The
    library checks the state (and iss) of what is pasted."""

    def authorize(request: Dict[str, Any]) -> Dict[str, str]:
        url = request.get("authorization_url")
        if not isinstance(url, str) or not url:
            raise InvalidArgument("the authorize request has no authorization_url")
        issuer = request.get("issuer") or "the authorization server"
        err.write(
            f"{PROG}: authorization needed by {issuer}. Open this URL in a browser:\n\n    {url}\n\n"
            f"then paste the URL the browser was redirected to ({request.get('redirect_uri') or 'the redirect URI'}...):\n"
        )
        err.flush()
        line = stdin.readline()
        answer = line.strip()
        if not answer:
            raise InvalidArgument("no redirect URL was given")
        return {"redirect_url": answer}

    return authorize


#: What fixes a 401, as command-line flags.
AUTH_FLAGS_HINT = ("give --client-id ID with --client-secret-env VAR (client credentials), "
                   "or --authorize --redirect-uri URI (sign in), or --header 'Authorization: Bearer ...'")


def _auth_required_text(exc: AuthRequired) -> str:
    msg = _error_text(exc)
    servers = exc.authorization_servers
    where = f"authorization server: {', '.join(servers)}; " if servers else ""
    return f"{msg} ({where}{AUTH_FLAGS_HINT})"


# ------------------------------------------------------------------ output
def _save_resource(rr: ReadResourceResult, uri: str, path: str, out: IO[str], err: IO[str]) -> int:
    """``read URI -o PATH``: the resource's exact bytes (text as UTF-8, a
    blob decoded) to PATH, or to stdout's bytes for "-"."""
    contents = rr.contents
    if len(contents) > 1:
        # A read may return several items (a directory, say): keep the one
        # asked for when it is there, never glue items together.
        contents = [c for c in contents if c.uri == uri]
    if len(contents) != 1:
        raise Failure(EXIT_PROTOCOL, f"{uri}: the server returned {len(rr.contents)} content items"
                      + (" and none has that URI" if rr.contents else "") + "; use --json to see them all")
    try:
        data = contents[0].bytes()
    except ValueError as exc:
        raise Failure(EXIT_PROTOCOL, f"{uri}: the blob is not valid base64: {exc}") from None
    if data is None:
        raise Failure(EXIT_PROTOCOL, f"{uri}: the content has neither text nor blob")
    if path == "-":
        out.flush()
        buf = getattr(out, "buffer", None)
        if buf is None:
            raise UsageError("-o -: stdout takes no bytes here; give a file name")
        buf.write(data)
        buf.flush()
        return EXIT_OK
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise Failure(EXIT_USAGE, f"-o: cannot write {path}: {exc.strerror}") from None
    err.write(f"{PROG}: wrote {_size(len(data))} to {path}\n")
    return EXIT_OK


# ------------------------------------------------------------------ server requests


def _app_request_options(ns: argparse.Namespace, stdin: IO[str], err: IO[str], term: TerminalInput) -> Dict[str, Any]:
    """What the client offers to answer, and how. Nothing is declared that
    cannot be answered:

    - elicitation: only on a terminal (stdin and stderr), as a form;
    - sampling: with --sampling-command, answered by the command (the
      library's sampling policy in "reviewed_model" mode: local bounds
      first, the redacted summary shown, then the command); on a terminal
      without it, declared with the "deny" policy so that a request is
      shown (its summary) and refused with a reason; elsewhere not declared.
    """
    options: Dict[str, Any] = {}
    interactive = _isatty(stdin) and _isatty(err)
    if ns.sampling_command is not None:
        try:
            words = shlex.split(ns.sampling_command)
        except ValueError as exc:
            raise UsageError(f"--sampling-command: {exc}") from None
        if not words:
            raise UsageError("--sampling-command: empty command")
        if shutil.which(words[0]) is None:
            raise UsageError(f"--sampling-command: executable not found: {words[0]}")
        options["sampling_policy"] = {"mode": "reviewed_model"}
        options["review"] = review_printer(err, os.path.basename(words[0]), bool(ns.quiet))
        options["sampling"] = sampling_command_handler(ns.sampling_command, err)
        options["on_sampling_denied"] = denial_printer(err)
    elif interactive:
        options["sampling_policy"] = {"mode": "deny"}
        options["on_sampling_denied"] = denial_printer(err)
    if interactive:
        options["elicitation"] = elicitation_handler(term, err)
    return options


# ------------------------------------------------------------------ running

#: How long a failed connection waits for the "closed" event carrying them.
CLOSED_WAIT_S = 2.0


class _ClosedWatch:
    """on_closed: keeps the Closed event (its stderr_tail says why a server
    died at startup)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.closed: Optional[Closed] = None

    def __call__(self, c: Closed) -> None:
        if self.closed is None:
            self.closed = c
        self._event.set()

    def wait(self, timeout: float = CLOSED_WAIT_S) -> Optional[Closed]:
        self._event.wait(timeout)
        return self.closed


def _show_stderr_tail(c: Optional[Closed], err: IO[str]) -> None:
    if c is None or not c.stderr_tail:
        return
    text = stderr_tail_text(c.stderr_tail)
    if text:
        err.write(text)
        err.flush()


def _connect_exit(exc: LemonMCPError) -> int:
    return EXIT_TIMEOUT if isinstance(exc, TimeoutError) else EXIT_CONNECT


def _exit_for(exc: LemonMCPError) -> int:
    if isinstance(exc, PolicyDenied) and exc.held is not None:
        return EXIT_HELD
    if isinstance(exc, AuthRequired):
        return EXIT_AUTH
    if isinstance(exc, UnsupportedError):
        return EXIT_UNSUPPORTED
    if isinstance(exc, TimeoutError):
        return EXIT_TIMEOUT
    if isinstance(exc, (ClosedError, TransportError)):
        return EXIT_CONNECT
    if isinstance(exc, Cancelled):
        return EXIT_INTERRUPTED
    if isinstance(exc, NotFound):
        return EXIT_NOT_FOUND
    if isinstance(exc, InvalidArgument):
        return EXIT_USAGE
    return EXIT_PROTOCOL


def _held_text(exc: PolicyDenied, held: Dict[str, str]) -> str:
    """A held definition in the command line's words, from the library's
    data: its own message (without the Python binding's hint), then the
    commands that review and approve it."""
    server, kind, name = held.get("server", ""), held.get("kind", ""), held.get("name", "")
    words = exc.raw.get("message") if isinstance(exc.raw.get("message"), str) else exc.message
    if held.get("status") == "unchecked":
        return _one_line(words)
    target = f"{shlex.quote(server)}" if kind == "instructions" else f"{shlex.quote(server)} {shlex.quote(name)}"
    return (f"{_one_line(words)}: `{PROG} --config FILE pins` shows it, "
            f"`{PROG} --config FILE approve {target} --hash HASH` approves it")


def _error_text(exc: LemonMCPError) -> str:
    if isinstance(exc, PolicyDenied) and exc.held is not None:
        return _held_text(exc, exc.held)
    msg = _one_line(exc.message) or exc.status_name
    if isinstance(exc, ProtocolError) and exc.code is not None and str(exc.code) not in msg:
        msg = f"{msg} (code {exc.code})"
    return msg


def _set_log_level(client: Client, level: str, err: IO[str]) -> None:
    """--log-level: logging/setLevel, or a warning when the server has no
    logging (the command still runs)."""
    if not client.server_info.has_capability("logging"):
        err.write(f"{PROG}: warning: the server does not declare logging; --log-level {level} is not sent\n")
        return
    if client.server_info.era == "modern":
        err.write(f"{PROG}: warning: the server speaks 2026-07-28, which has no logging/setLevel; "
                  f"--log-level {level} is not sent (use --protocol legacy for a dual-era server)\n")
        return
    client.set_logging_level(level)


def _complete(client: Client, ns: argparse.Namespace, out: IO[str], err: IO[str], as_json: bool) -> int:
    """``complete prompt NAME ARG=PARTIAL`` / ``complete resource URI ARG=PARTIAL``."""
    arg, sep, partial = ns.argument.partition("=")
    if not sep or not arg:
        raise UsageError(f"complete: expected ARG=PARTIAL, got {ns.argument!r}")
    ref: Dict[str, Any] = (
        {"type": "ref/prompt", "name": ns.ref} if ns.kind == "prompt" else {"type": "ref/resource", "uri": ns.ref}
    )
    context = parse_kv(ns.context or [], json_values=False) or None
    res = client.complete(ref, arg, partial, context=context)
    if as_json:
        _dump(res.raw, out)
        return EXIT_OK
    for v in res.values:
        out.write(v + "\n")
    if res.has_more or (res.total is not None and res.total > len(res.values)):
        more = f"{res.total - len(res.values)} more" if res.total is not None else "more"
        err.write(f"{PROG}: the server has {more} values\n")
    return EXIT_OK


def _run_command(client: Client, ns: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    as_json = bool(getattr(ns, "json_output", False))
    cmd = ns.command
    # Fitting to a width is for a person at a terminal; a pipe or a file
    # gets every character.
    width: Optional[int] = _width() if _isatty(out) else None
    if cmd == "info":
        info = client.server_info
        if as_json:
            _dump(info.raw, out)
        else:
            out.write(format_info(info, width) + "\n")
        return EXIT_OK
    if cmd == "tools":
        tools = client.list_tools()
        if as_json:
            _dump(tools.raw, out)
        elif not tools:
            err.write(f"{PROG}: the server has no tools\n")
        else:
            rows: List[Tuple[str, ...]] = [(t.name, _schema_args(t.input_schema), _one_line(t.description or t.title or "")) for t in tools]
            out.write(format_table(("NAME", "ARGUMENTS", "DESCRIPTION"), rows, width) + "\n")
        return EXIT_OK
    if cmd == "call":
        return _call(client, ns, out, err, as_json, width)
    if cmd == "resources":
        res = client.list_resources()
        if as_json:
            _dump(res.raw, out)
        elif not res:
            err.write(f"{PROG}: the server has no resources\n")
        else:
            if any(r.size is not None for r in res):
                rows = [
                    (r.uri, r.title or r.name, r.mime_type or "", "" if r.size is None else _size(r.size))
                    for r in res
                ]
                out.write(format_table(("URI", "NAME", "TYPE", "SIZE"), rows, width) + "\n")
            else:
                rows = [(r.uri, r.title or r.name, r.mime_type or "") for r in res]
                out.write(format_table(("URI", "NAME", "TYPE"), rows, width) + "\n")
        return EXIT_OK
    if cmd == "templates":
        tps = client.list_resource_templates()
        if as_json:
            _dump(tps.raw, out)
        elif not tps:
            err.write(f"{PROG}: the server has no resource templates\n")
        else:
            rows = [(t.uri_template, t.title or t.name, t.mime_type or "", _one_line(t.description)) for t in tps]
            out.write(format_table(("URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"), rows, width) + "\n")
        return EXIT_OK
    if cmd == "read":
        rr: ReadResourceResult = client.read_resource(ns.uri)
        if ns.output is not None:
            return _save_resource(rr, ns.uri, ns.output, out, err)
        if as_json:
            _dump(rr.raw, out)
        else:
            for c in rr.contents:
                desc = _describe_resource(c)
                out.write(_line_end(c.text or "") if desc is None else desc + " (read -o FILE saves it)\n")
        return EXIT_OK
    if cmd == "prompts":
        ps = client.list_prompts()
        if as_json:
            _dump(ps.raw, out)
        elif not ps:
            err.write(f"{PROG}: the server has no prompts\n")
        else:
            rows = [
                (p.name, ", ".join(a.name + ("*" if a.required else "") for a in p.arguments), _one_line(p.description or p.title))
                for p in ps
            ]
            out.write(format_table(("NAME", "ARGUMENTS", "DESCRIPTION"), rows, width) + "\n")
        return EXIT_OK
    if cmd == "prompt":
        gp: GetPromptResult = client.get_prompt(ns.name, parse_kv(ns.args, json_values=False) or None)
        if as_json:
            _dump(gp.raw, out)
        else:
            if gp.description:
                out.write(_wrap(gp.description, width) + "\n\n")
            for m in gp.messages:
                out.write(f"[{m.role}]\n{format_content([m.content])}")
        return EXIT_OK
    if cmd == "complete":
        return _complete(client, ns, out, err, as_json)
    if cmd == "ping":
        start = time.perf_counter()
        if client.server_info.era == "modern":
            # The 2026-07-28 era has no ping; server/discover past the result
            # cache is the cheapest request such a server must answer.
            client.call("server/discover", {}, no_cache=True)
        else:
            client.ping()
        ms = (time.perf_counter() - start) * 1000.0
        if as_json:
            _dump({"ok": True, "ms": round(ms, 3)}, out)
        else:
            name = client.server_info.name or "the server"
            out.write(f"pong from {name} in {ms:.1f} ms\n")
        return EXIT_OK
    raise UsageError(f"unknown command {cmd!r}")  # pragma: no cover - argparse guards


def _schema_of(tools: Sequence[Any], tool: str, where: str) -> Mapping[str, Any]:
    """The input schema of ``tool`` among ``tools`` (a listing), or
    Failure(EXIT_NOT_FOUND) naming it, with a "did you mean"."""
    for t in tools:
        if t.name == tool:
            return t.input_schema if isinstance(t.input_schema, Mapping) else {}
    # A host's tool is named for the application (everything__echo): the
    # server's own name is its original_name, as the library gives it.
    same = [t.name for t in tools if getattr(t, "original_name", None) == tool]
    hint = f' (did you mean "{same[0]}"?)' if same else did_you_mean(tool, [t.name for t in tools])
    raise Failure(EXIT_NOT_FOUND, f"{where} has no tool named {tool!r}{hint} (see {PROG} tools)")


def _input_schema(client: Client, tool: str) -> Optional[Mapping[str, Any]]:
    """The tool's inputSchema from tools/list (None when the server cannot
    list its tools: then the call itself says what is wrong)."""
    try:
        tools = client.list_tools()
    except UnsupportedError:
        return None
    return _schema_of(tools, tool, "the server")


def _typed_arguments(tool: str, words: Sequence[str], schema: Callable[[], Optional[Mapping[str, Any]]]) -> Dict[str, Any]:
    """KEY=VALUE words typed by the tool's input schema (see _cli_args)."""
    try:
        split_words(words)  # a malformed word is a usage error before any request
        return arguments_from_words(words, schema())
    except ArgumentError as exc:
        raise UsageError(f"call {tool}: {exc}") from None


def _checked_arguments(ns: argparse.Namespace, as_json: bool, schema: Optional[Mapping[str, Any]]) -> Tuple[Dict[str, Any], bool]:
    """The call's arguments, checked against the tool's input schema before
    anything is sent (required arguments, unknown keys)."""
    arguments, as_json = _tool_arguments(ns, as_json, lambda: schema)
    try:
        check_arguments(arguments, schema)
    except ArgumentError as exc:
        raise UsageError(f"call {ns.tool}: {exc}") from None
    return arguments, as_json


def _call(client: Client, ns: argparse.Namespace, out: IO[str], err: IO[str], as_json: bool, width: Optional[int]) -> int:
    arguments, as_json = _checked_arguments(ns, as_json, _input_schema(client, ns.tool))
    progress = None if ns.quiet else _ProgressLine(err)
    try:
        result: CallToolResult = client.call_tool(ns.tool, arguments, progress=progress if progress else None)
    finally:
        if progress is not None:
            progress.finish()
    return _show_tool_result(result, ns.tool, out, err, as_json, width)


def _tool_arguments(
    ns: argparse.Namespace, as_json: bool, schema: Callable[[], Optional[Mapping[str, Any]]]
) -> Tuple[Dict[str, Any], bool]:
    """The arguments of `call` (KEY=VALUE words typed by the tool's input
    schema, which ``schema()`` fetches only when there are words; --json
    ARGS, --args JSON), and whether the output is JSON."""
    words = list(ns.args)
    arguments: Dict[str, Any] = {}
    call_json = getattr(ns, "call_json", None)
    if call_json is True:
        as_json = True
    elif isinstance(call_json, str):
        stripped = call_json.strip()
        if stripped.startswith("{") or call_json in ("-",) or call_json.startswith("@"):
            arguments.update(_json_object(call_json, "--json"))
        else:  # `call TOOL --json key=value`: the flag, then an argument
            as_json = True
            words.insert(0, call_json)
    if ns.call_args is not None:
        arguments.update(_json_object(ns.call_args, "--args"))
    if words:
        arguments.update(_typed_arguments(ns.tool, words, schema))
    return arguments, as_json


def _show_tool_result(
    result: CallToolResult, tool: str, out: IO[str], err: IO[str], as_json: bool, width: Optional[int]
) -> int:
    if as_json:
        _dump(result.raw, out)
    else:
        text = format_content(result.content)
        if text:
            out.write(text)
        elif result.structured_content is not None:
            _dump(result.structured_content, out)
    if result.is_error:
        # The error's text is the result, on stdout; it is not repeated.
        err.write(f"{PROG}: tool {tool} reported an error (exit status {EXIT_TOOL_ERROR})\n")
        return EXIT_TOOL_ERROR
    return EXIT_OK


# The commands that, with --config and no --server, run every server of the
# file through one host (lemonmcp.Host): tools are listed as server__tool,
# `call server__tool` routes, `servers` shows each server's state.
HOST_COMMANDS = ("tools", "call", "servers", "search", "check", "pins", "approve")


def _sandbox_summary(sandbox: Any, refusals: Any = None) -> str:
    """What confines a server, in a few words (docs/sandbox.md): "-" for an
    unconfined one, else its layers, what is missing and what the sandbox's
    proxy refused it."""
    if not isinstance(sandbox, dict):
        return "-"
    parts = []
    if sandbox.get("namespaces"):
        parts.append("namespaces")
    if sandbox.get("landlock"):
        parts.append(f"landlock {sandbox['landlock']}")
    parts.append(f"network {sandbox.get('network', '?')}")
    missing = sandbox.get("missing") or []
    if missing:
        parts.append("missing: " + ", ".join(missing))
    if refusals:
        parts.append("refused: " + "; ".join(r.removeprefix("the sandbox refused network access to ") for r in refusals))
    return ", ".join(parts)


def _terminal_question(inp: IO[str], err: IO[str]) -> Callable[[str], bool]:
    """A yes/no question on the terminal (default no)."""

    def ask(question: str) -> bool:
        err.write(f"{question} [y/N] ")
        err.flush()
        answer = inp.readline()
        return answer.strip().lower() in ("y", "yes")

    return ask


def _host_main(ns: argparse.Namespace, out: IO[str], err: IO[str], inp: IO[str]) -> int:
    from ._cli_config import run_config

    width: Optional[int] = _width() if _isatty(out) else None
    # approve without --hash or --yes asks, on a terminal only.
    ask = _terminal_question(inp, err) if _isatty(inp) and _isatty(err) else None

    def show_tools(tools: List[Any], out: IO[str], err: IO[str], as_json: bool) -> None:
        if as_json:
            _dump({"tools": [t.raw for t in tools]}, out)
        elif not tools:
            err.write(f"{PROG}: no server has tools\n")
        else:
            rows = [(t.name, t.server, _schema_args(t.input_schema), _one_line(t.description or t.title or "")) for t in tools]
            out.write(format_table(("NAME", "SERVER", "ARGUMENTS", "DESCRIPTION"), rows, width) + "\n")

    def show_servers(servers: Dict[str, Dict[str, Any]], out: IO[str], as_json: bool) -> None:
        if as_json:
            _dump(servers, out)
            return
        rows: List[Tuple[str, ...]] = [
            (
                name,
                s.get("state", ""),
                s.get("era", ""),
                str(s.get("restarts", 0)),
                _sandbox_summary(s.get("sandbox"), s.get("sandbox_refusals")),
                _one_line(s.get("last_error", "")),
            )
            for name, s in sorted(servers.items())
        ]
        out.write(format_table(("SERVER", "STATE", "ERA", "RESTARTS", "SANDBOX", "LAST ERROR"), rows, width) + "\n")

    return run_config(
        ns,
        out,
        err,
        prog=PROG,
        usage_error=UsageError,
        failure=Failure,
        exits=EXIT,
        show_tools=show_tools,
        show_servers=show_servers,
        call_arguments=_checked_arguments,
        schema_of=_schema_of,
        show_result=lambda result, tool, out, err, as_json: _show_tool_result(result, tool, out, err, as_json, width),
        error_text=_error_text,
        search=lambda host, as_json: run_search(host, ns.query, ns.limit, out, err, as_json, width, PROG),
        pins=lambda host, as_json: (
            run_pins(host, out, err, as_json, width, PROG)
            if ns.command == "pins"
            else run_approve(host, ns.approve_server, ns.approve_name, out, err, PROG,
                             hash=ns.approve_hash, yes=ns.approve_yes, ask=ask)
        ),
    )


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    stdout: Optional[IO[str]] = None,
    stderr: Optional[IO[str]] = None,
    stdin: Optional[IO[str]] = None,
) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    inp = stdin or sys.stdin
    parser = build_parser()
    try:
        ns = _merge_sub(parser.parse_args(argv))
    except SystemExit as exc:  # argparse: --help, --version, usage errors
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE

    def fail(status: int, message: str) -> int:
        err.write(f"{PROG}: {message}\n")
        err.flush()
        return status

    if ns.command == "serve" or (ns.command in HOST_COMMANDS and getattr(ns, "config", None)):
        # With --server too: the host's guard (pins, filters) and sandbox
        # apply to one server as to all (the host runs that one alone).
        try:
            if ns.command == "serve":
                return run_serve(ns, out, err, prog=PROG, usage_error=UsageError, exits=EXIT, error_text=_error_text)
            return _host_main(ns, out, err, inp)
        except UsageError as exc:
            return fail(EXIT_USAGE, str(exc))
        except Failure as exc:
            return fail(exc.status, str(exc))
        except AuthRequired as exc:
            return fail(EXIT_AUTH, _auth_required_text(exc))
        except LemonMCPError as exc:
            return fail(_exit_for(exc), _error_text(exc))
        except KeyboardInterrupt:
            return fail(EXIT_INTERRUPTED, "interrupted")
    if ns.command in ("servers", "search", "check", "pins", "approve"):
        return fail(EXIT_USAGE, f"{ns.command} needs --config FILE")

    try:
        with logged_to(err, PROG, bool(ns.quiet)):  # the --config file's warnings
            target, transport = _transport(ns)
        auth_options = _auth_options(ns, transport, inp, err)
    except UsageError as exc:
        return fail(EXIT_USAGE, str(exc))

    options: Dict[str, Any] = dict(auth_options)
    if ns.root:
        # Offered only when asked: a root tells the server where it may look.
        options["roots"] = list(ns.root)
    if "authorize" in auth_options and ns.timeout is None:
        # The handshake includes the person in front of the browser.
        options["ready_timeout"] = AUTHORIZE_TIMEOUT_S + 30.0
    if ns.timeout is not None:
        if ns.timeout < 0:
            return fail(EXIT_USAGE, "--timeout: expected a non-negative number of seconds")
        options["call_timeout"] = ns.timeout  # 0: no limit
        if ns.timeout > 0:
            options["ready_timeout"] = ns.timeout
    if ns.protocol:
        options["protocol"] = {"mode": ns.protocol}
    if ns.verbose:
        options["on_log"] = _log_printer(err)
    if ns.verbose or ns.log_level:
        # -v: every notification; --log-level: the log messages asked for.
        options["on_notification"] = _notification_printer(err, only_logs=not ns.verbose)
    closed = _ClosedWatch()
    options["on_closed"] = closed
    term = TerminalInput(inp)
    stdio = transport.get("type") == "stdio"  # only a process has a stderr
    try:
        options.update(_app_request_options(ns, inp, err, term))
    except UsageError as exc:
        return fail(EXIT_USAGE, str(exc))

    client: Optional[Client] = None
    try:
        try:
            client = Client({"transport": transport}, **options)
        except InvalidArgument as exc:
            return fail(EXIT_USAGE, _error_text(exc))
        except UnsupportedError as exc:
            return fail(EXIT_UNSUPPORTED, f"{_error_text(exc)}")
        except LemonMCPError as exc:
            return fail(EXIT_CONNECT, f"cannot set up a client for {target}: {_error_text(exc)}")
        try:
            client.open()
        except AuthRequired as exc:
            return fail(EXIT_AUTH, f"{target} requires authorization: {_auth_required_text(exc)}")
        except (ProtocolError, UnsupportedError) as exc:
            code = EXIT_PROTOCOL if isinstance(exc, ProtocolError) else EXIT_UNSUPPORTED
            return fail(code, f"the server {target} failed the handshake: {_error_text(exc)}")
        except LemonMCPError as exc:
            status = fail(_connect_exit(exc), f"cannot connect to {target}: {_error_text(exc)}")
            if stdio and not ns.verbose and isinstance(exc, ClosedError):
                # The process ran and died: its last words come with the
                # closed event. A start that failed (no such executable) has
                # none to wait for, and reports at once.
                _show_stderr_tail(closed.wait(), err)
            return status
        try:
            if ns.log_level:
                _set_log_level(client, ns.log_level, err)
            return _run_command(client, ns, out, err)
        except UsageError as exc:
            return fail(EXIT_USAGE, str(exc))
        except Failure as exc:
            return fail(exc.status, str(exc))
        except LemonMCPError as exc:
            status = fail(_exit_for(exc), _error_text(exc))
            if stdio and isinstance(exc, ClosedError) and not ns.verbose:
                _show_stderr_tail(closed.wait(), err)  # the server died: its last words
            return status
    except KeyboardInterrupt:
        return fail(EXIT_INTERRUPTED, "interrupted")
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): not an error of ours.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    finally:
        term.stop()  # a form still waiting for input is cancelled
        if client is not None:
            try:
                client.close()
            except (LemonMCPError, KeyboardInterrupt):
                pass
        try:
            out.flush()
        except (OSError, ValueError):
            pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
