"""The bindings read the facts the core gives as data (a server report's
``summary`` and ``final``, an error's ``data.cause``), never a message text:
a lint over both bindings' sources for matching on a message, and the
behaviour that replaced each match."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Mapping

import pytest

from lemonmcp import _host_file
from lemonmcp.errors import error_from_status

BINDINGS = Path(__file__).resolve().parents[2]
SOURCES = sorted(BINDINGS.glob("python/lemonmcp/**/*.py")) + sorted(BINDINGS.glob("elixir_nif/lib/**/*.ex"))

#: Texts of the core's messages that bindings once branched on.
CORE_PHRASES = ("not retried", "executable not found", "sampling_policy", "gave up", "failed to start")

#: A line that tests a text: Python's `in`, startswith, re; Elixir's =~,
#: String.contains?, Regex.
_PHRASE = "|".join(re.escape(p) for p in CORE_PHRASES)
MATCHING = [
    re.compile(rf"""["'][^"']*({_PHRASE})[^"']*["']\s+(not\s+)?in\b""", re.I),
    re.compile(rf"""\b(re\.\w+|startswith|endswith)\([^)]*({_PHRASE})""", re.I),
    re.compile(rf"""=~\s*(~r.)?[^\n]*({_PHRASE})""", re.I),
    re.compile(rf"""(String\.contains\?|Regex\.\w+\??)\(.*({_PHRASE})""", re.I),
    # a message itself searched, whatever the text
    re.compile(r"""\bin\s+(str\((exc|err|error|e)\)|\w+\.message\b|str\(\w+\.get\("(last_error|cause|message)")"""),
    re.compile(r"""\b(msg|message|Error\.message\([^)]*\))\s*=~"""),
    re.compile(r"""\b(msg|message|getMessage\(\))\.(startswith|endswith)\("""),
]


def message_matches(text: str) -> List[str]:
    return [line.strip() for line in text.splitlines() if any(p.search(line) for p in MATCHING)]


@pytest.mark.parametrize(
    "line",
    [
        '        and "not retried" not in str(report.get("last_error", ""))',
        '      msg =~ ~r/executable not found/i ->',
        '    if msg =~ "sampling_policy" and msg =~ ~r/unknown|not allowed|unexpected/ do',
        '    if "executable not found" in str(exc):',
        '    String.contains?(Error.message(info), "not retried")',
        '        failure = msg.startswith("server ")',
    ],
)
def test_the_lint_catches_a_message_match(line: str) -> None:
    assert message_matches(line) == [line.strip()]


def test_no_binding_matches_a_message_text() -> None:
    assert SOURCES, "the binding sources are where this test expects them"
    found: Dict[str, List[str]] = {}
    for path in SOURCES:
        hits = message_matches(path.read_text())
        if hits:
            found[str(path.relative_to(BINDINGS))] = hits
    assert found == {}, "branch on the data the core gives (include/lemonmcp.h), not on a message"


class _Reports:
    """A host's servers() that answers with each report in turn."""

    def __init__(self, *reports: Mapping[str, Any]) -> None:
        self.reports = list(reports)
        self.calls = 0

    def __call__(self) -> Mapping[str, Mapping[str, Any]]:
        self.calls += 1
        return {"s": self.reports[min(self.calls, len(self.reports)) - 1]}


def test_a_final_report_is_not_waited_for() -> None:
    # A start that could not happen: no exit status will come, and the core
    # says so with "final" (no text says "not retried" here).
    servers = _Reports({"state": "failed", "final": True, "last_error": "x", "summary": 'server "s" failed to start: x'})
    report = _host_file.settled_report(servers, "s")
    assert servers.calls == 1
    assert _host_file.failure_text(report) == 'server "s" failed to start: x'


def test_a_report_is_waited_for_until_final_whatever_its_message() -> None:
    pending = {"state": "failed", "final": False, "last_error": "no such thing (not retried: starting it again cannot succeed)"}
    done = {**pending, "final": True, "exit_code": 1, "summary": 'server "s" failed to start: ...; exit status 1'}
    servers = _Reports(pending, pending, done)
    report = _host_file.settled_report(servers, "s", wait_s=60)
    assert servers.calls == 3
    assert _host_file.failure_text(report).endswith("exit status 1")


def test_an_error_names_its_cause_from_data() -> None:
    exc = error_from_status(-8, {"status": -8, "message": "whatever the wording", "data": {"cause": "executable_not_found"}})
    assert exc.cause == "executable_not_found"
    assert error_from_status(-8, {"status": -8, "message": "executable not found: x"}).cause is None
