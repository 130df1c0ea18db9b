"""`python -m lemonmcp` on a pseudo-terminal: what a person at a terminal
sees, and the interactive app requests (elicitation forms, sampling)."""

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


def test_elicitation_form_on_a_terminal(fixture_path: str) -> None:
    # The fixture's schema: name (string, default "anon"), age (integer).
    r = PtyRun(srv() + ["call", "elicit", "message=Who are you?"])
    r.expect("[elicitation] the server asks: Who are you?")
    r.expect("[a]: ")
    r.send("")  # answer
    # The fields come in the schema's order (the fixture's JSON sorts them).
    r.expect("age")
    r.expect("integer: ")
    r.send("forty")  # invalid: asked again
    r.expect("not valid: expected an integer")
    r.expect("integer: ")
    r.send("41")
    r.expect("name")
    r.expect("[anon]: ")
    r.send("")  # keep the default
    r.expect("[elicitation] sent")
    r.expect('"action":"accept"')
    assert r.finish() == 0, r.text
    assert '"content":{"age":41,"name":"anon"}' in r.text.replace(" ", ""), r.text


def test_elicitation_decline_and_cancel_on_a_terminal(fixture_path: str) -> None:
    for answer, action in (("d", "decline"), ("c", "cancel")):
        r = PtyRun(srv() + ["call", "elicit", "message=Share?"])
        r.expect("[a]: ")
        r.send(answer)
        r.expect(f'"action":"{action}"')
        assert r.finish() == 0, r.text


def test_sampling_on_a_terminal_is_shown_and_refused(fixture_path: str) -> None:
    # The legacy era: the fixture turns the refusal into an error result.
    status, out = run_pty(srv() + ["--protocol", "legacy", "call", "sample", "prompt=secret words here", "max_tokens=30"])
    assert status == 1, out
    line = next(ln for ln in out.splitlines() if ln.startswith("[sampling] refused"))
    # The redacted summary: counts and a hash, never the text.
    assert "lemon-fixture" in line and "1 message (user)" in line and "max_tokens 30" in line
    assert "request " in line and "--sampling-command" in line
    assert "secret words" not in line


def test_ctrl_c_during_a_form_interrupts(fixture_path: str) -> None:
    r = PtyRun(srv() + ["call", "elicit", "message=Who?"])
    r.expect("[a]: ")
    r.interrupt()
    assert r.finish(timeout=20) == 130, r.text
    assert "lemonmcp: interrupted" in r.text


def test_end_of_input_cancels_a_form(fixture_path: str) -> None:
    r = PtyRun(srv() + ["call", "elicit", "message=Who?"])
    r.expect("[a]: ")
    r.send("")
    r.expect("integer: ")
    r.end_of_input()
    r.expect('"action":"cancel"')
    assert r.finish() == 0, r.text


def test_server_dying_at_startup_on_a_terminal(fixture_path: str) -> None:
    import pathlib
    import sys

    script = pathlib.Path(__file__).parent / "cli_servers" / "dies_at_startup.py"
    status, out = run_pty(["--stdio", shlex.join([sys.executable, str(script)]), "tools"])
    assert status == 3, out
    assert "the server's stderr (last 2 lines):\n  | starting example server v1\n" in out
    assert "  | error: missing API key (set EXAMPLE_API_KEY)" in out
