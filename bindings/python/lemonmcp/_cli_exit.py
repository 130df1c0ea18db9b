"""The command line's exit statuses: one table, the same in every mode
(``--stdio``, ``--url``, ``--config``), written into ``--help``, the module
docstring's reader and bindings/python/README.md (a test keeps the README's
table equal to this one)."""

from __future__ import annotations

from typing import Tuple

__all__ = ["EXIT_CODES", "exit_table_text", "exit_table_markdown"]

#: (status, name, meaning), lowest status first.
EXIT_CODES: Tuple[Tuple[int, str, str], ...] = (
    (0, "ok", "ok"),
    (1, "tool_error", "the tool returned an error result (isError)"),
    (2, "usage", "usage error: a bad option, argument or config file (one line says which)"),
    (3, "connect", "connection failure: a server could not be started (its executable not found included) "
     "or reached, or went away; for servers, a server failed"),
    (4, "protocol", "protocol error (a JSON-RPC error from the server)"),
    (5, "unsupported", "unsupported (by the server or by this build)"),
    (6, "auth", "authorization required"),
    (7, "not_found", "not found: no such tool, server, prompt or resource"),
    (8, "held", "held: the host's pins hold the tool, prompt or resource (review it with pins, approve it with approve)"),
    (124, "timeout", "timeout (--timeout, or the handshake's bound; as timeout(1))"),
    (130, "interrupted", "interrupted"),
)


def exit_table_text() -> str:
    """The table for --help (one status a line)."""
    return "exit status:\n" + "\n".join(f"  {code:>3}  {meaning}" for code, _, meaning in EXIT_CODES)


def exit_table_markdown() -> str:
    """The table as bindings/python/README.md writes it."""
    rows = [f"| {code} | {meaning} |" for code, _, meaning in EXIT_CODES]
    return "\n".join(["| status | meaning |", "|---|---|", *rows])
