"""`python -m lemonmcp` on a pseudo-terminal: what a person at a terminal
sees, and the interactive host requests (elicitation forms, sampling)."""

from __future__ import annotations

import shlex
from typing import List

from cli_run import PtyRun, run_pty
from conftest import FIXTURE


def srv(*flags: str) -> List[str]:
    return ["--stdio", shlex.join([FIXTURE, *flags])]


def test_terminal_fits_tables_but_not_text(fixture_path: str) -> None:
    status, out = run_pty(srv() + ["tools"], columns=60)
    assert status == 0, out
    # The table's last column is cut to the terminal's width...
    assert "…" in out
    assert max(len(line) for line in out.splitlines()) <= 60, out
    # ...but what a tool returned is never re-wrapped: the terminal wraps
    # the long line itself, and copying it gives the server's text back.
    status, out = run_pty(srv() + ["call", "large", "bytes=250"], columns=40)
    assert status == 0, out
    assert "x" * 250 in out


def test_terminal_run_is_bounded_and_reaped(fixture_path: str) -> None:
    r = PtyRun(srv() + ["ping"])
    r.expect("pong from lemon-fixture")
    assert r.finish() == 0
