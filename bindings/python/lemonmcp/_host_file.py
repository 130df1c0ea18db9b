"""Creating a host from an application's config file, and telling the user
what went wrong through ``logging``.

A config file belongs to another program (Claude Desktop, Claude Code,
Cursor, VS Code, Cline, Roo Code, Windsurf): the library reads it by path
(``lmcp_host_new_file``), so that every message names the file, VS Code's
``${workspaceFolder}`` and relative ``envFile`` are found from it, and the
members it ignores come back as warnings. Each warning, and each server that
failed to start, is logged once on the ``lemonmcp`` logger.
"""

from __future__ import annotations

import json
import logging
import os
import time
from ctypes import byref, c_size_t, c_void_p
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from . import _ffi

log = logging.getLogger("lemonmcp")


def load_options(
    *,
    strict: Optional[bool] = False,
    inputs: Optional[Mapping[str, str]] = None,
    workspace_folder: Optional[Union[str, "os.PathLike[str]"]] = None,
    start: Optional[str] = None,
    override: Optional[Mapping[str, Any]] = None,
    only: Optional[Sequence[str]] = None,
    stdio: Optional[Mapping[str, Any]] = None,
) -> bytes:
    """The options JSON of ``lmcp_host_new_file``; the library validates it."""
    o: Dict[str, Any] = {}
    if strict:
        o["strict"] = True
    if inputs:
        o["inputs"] = dict(inputs)
    if workspace_folder is not None:
        o["workspace_folder"] = os.fspath(workspace_folder)
    if start is not None:
        o["start"] = start
    if override:
        o["override"] = dict(override)
    if only:
        o["only"] = list(only)
    if stdio:
        o["stdio"] = dict(stdio)
    return json.dumps(o).encode() if o else b""


def new_host_from_file(path: Union[str, "os.PathLike[str]"], options: bytes) -> Any:
    """``lmcp_host_new_file``: a malformed or invalid file raises an error
    whose message starts with the path."""
    handle = _ffi.HostHandle()
    _ffi.lib.lmcp_host_new_file(os.fsencode(path), options or None, len(options), byref(handle), c_void_p())
    return handle


def file_server(path: Union[str, "os.PathLike[str]"], name: Optional[str], options: bytes) -> Dict[str, Any]:
    """``lmcp_host_file_server``: one server of a config file as the host
    reads it, {"name", "enabled", "config" (its client configuration),
    "warnings"}; a file or name the library refuses raises its error."""
    out = c_void_p()
    length = c_size_t()
    _ffi.lib.lmcp_host_file_server(
        os.fsencode(path), options or None, len(options), name.encode() if name else None, out, byref(length), c_void_p()
    )
    doc = _ffi.decode_json(_ffi.take_bytes(out, length.value))
    return doc if isinstance(doc, dict) else {}


def warnings_of(handle: Any) -> List[str]:
    """``lmcp_host_warnings``: one line per member the host ignored."""
    out = c_void_p()
    length = c_size_t()
    _ffi.lib.lmcp_host_warnings(handle, out, byref(length), c_void_p())
    result = _ffi.decode_json(_ffi.take_bytes(out, length.value))
    return [str(w) for w in result] if isinstance(result, list) else []


#: The attribute a log record of a failed server carries (its name), so a
#: handler tells it from a warning without reading its text.
FAILED_SERVER = "lemonmcp_failed_server"


def log_warnings(warnings: List[str]) -> None:
    for w in warnings:
        log.warning("%s", w)


def failure_text(report: Mapping[str, Any]) -> str:
    """The library's one line saying why a server failed (its report's
    ``summary``: reason, first cause, exit status or signal, last stderr
    lines, already bounded, escaped and scrubbed)."""
    return str(report.get("summary", "a server failed to start"))


#: How long a failed server's report may wait for its exit status (seconds).
EXIT_REPORT_WAIT_S = 2.0


def _awaits_exit(report: Mapping[str, Any]) -> bool:
    """A failed server whose report is not complete yet (``final``: its
    process is reaped a moment after the failure it caused)."""
    return report.get("state") == "failed" and not report.get("final")


def settled_report(
    servers: Callable[[], Mapping[str, Mapping[str, Any]]], name: str, wait_s: float = EXIT_REPORT_WAIT_S
) -> Mapping[str, Any]:
    """The report of server ``name``, waiting (at most ``wait_s``) for the
    exit report of a process that died."""
    report = servers().get(name, {})
    deadline = time.monotonic() + wait_s
    while _awaits_exit(report) and time.monotonic() < deadline:
        time.sleep(0.02)
        report = servers().get(name, {})
    return report


def exit_reports_pending(servers: Callable[[], Mapping[str, Mapping[str, Any]]], logged: Set[str]) -> bool:
    """A failed server not logged yet still waits for its exit report (see
    settled_report): an event loop waits for it on the loop before
    log_failed, which then need not sleep."""
    return any(name not in logged and _awaits_exit(r) for name, r in servers().items())


def log_failed(
    servers: Callable[[], Mapping[str, Mapping[str, Any]]], logged: Set[str], wait_s: float = EXIT_REPORT_WAIT_S
) -> Tuple[str, ...]:
    """Logs a warning for each server that failed and was not logged yet,
    with why (waiting up to ``wait_s`` for each one's exit report); returns
    their names."""
    failed = []
    current = servers()
    for name in sorted(current):
        if current[name].get("state") == "failed" and name not in logged:
            logged.add(name)
            failed.append(name)
            log.warning("%s", failure_text(settled_report(servers, name, wait_s)), extra={FAILED_SERVER: name})
    return tuple(failed)
