"""The command line's answers to server requests: sampling through
--sampling-command, and the elicitation form's parsing (lemonmcp._cli_host).
Without a terminal neither is offered; tests/test_cli_term.py drives the
terminal side."""

from __future__ import annotations

import json
import pathlib
import shlex
import sys
from typing import Any, Dict, List, Optional

import pytest

from lemonmcp import _ffi
from lemonmcp._cli_host import FormCancelled, ask_form, check_sampling_result, parse_field, summary_text
from lemonmcp.errors import InvalidArgument

from cli_run import run_cli
from conftest import FIXTURE

MODEL = pathlib.Path(__file__).parent / "cli_servers" / "model.py"


def srv() -> List[str]:
    return ["--stdio", shlex.join([FIXTURE])]


def model(mode: str) -> List[str]:
    return ["--sampling-command", shlex.join([sys.executable, str(MODEL), mode])]


def test_sampling_command_answers(fixture_path: str) -> None:
    r = run_cli(srv() + model("ok") + ["call", "sample", "prompt=hello model", "max_tokens=40"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "role": "assistant",
        "content": {"type": "text", "text": "model says: hello model"},
        "model": "stand-in",
        "stopReason": "endTurn",
    }
    # The redacted summary is shown on stderr; the request's text is not.
    assert "[sampling] lemon-fixture asks for a completion: 1 message (user)" in r.stderr
    assert "hello model" not in r.stderr
    r = run_cli(srv() + model("ok") + ["-q", "call", "sample", "prompt=x", "max_tokens=40"])
    assert r.returncode == 0 and "[sampling]" not in r.stderr


@pytest.mark.parametrize(
    "mode,why",
    [
        ("fail", "exited with status 3"),
        ("garbage", "did not print a JSON object"),
        ("wrong-role", 'printed an invalid result: a sampling answer needs role "assistant"'),
    ],
)
def test_sampling_command_failure_is_a_clear_refusal(fixture_path: str, mode: str, why: str) -> None:
    # The legacy era: the fixture reports the client's refusal as an error
    # result (in the 2026-07-28 era the refusal ends the call in the client).
    r = run_cli(srv() + ["--protocol", "legacy"] + model(mode) + ["call", "sample", "prompt=p", "max_tokens=40"])
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "[sampling] refused: the sampling command python" in r.stderr and why in r.stderr
    assert why in r.stdout  # what the server was told
    assert "out of credit" not in r.stdout  # the command's stderr is its own, never sent


def test_sampling_command_local_bounds_apply(fixture_path: str) -> None:
    # The legacy era: the fixture reports the refusal as an error result.
    r = run_cli(srv() + ["--protocol", "legacy"] + model("ok") + ["call", "sample", "prompt=p", "max_tokens=5000"])
    assert r.returncode == 1
    assert "[sampling] refused a request from lemon-fixture: max_tokens_exceeded" in r.stderr


def test_sampling_command_must_exist() -> None:
    r = run_cli(srv() + ["--sampling-command", "no-such-model-xyz --flag", "info"])
    assert r.returncode == 2 and "--sampling-command: executable not found: no-such-model-xyz" in r.stderr


@pytest.mark.parametrize(
    "tool,args,refusal",
    [
        ("sample", ["prompt=p", "max_tokens=10"], "method not found: sampling/createMessage"),
        ("elicit", ["message=m"], "does not support elicitation"),
        ("roots", [], "method not found: roots/list"),
    ],
)
def test_nothing_is_offered_without_a_terminal(fixture_path: str, tool: str, args: List[str], refusal: str) -> None:
    # Legacy era: the server's request is refused and the fixture reports
    # that as the tool's error.
    r = run_cli(srv() + ["--protocol", "legacy", "call", tool, *args])
    assert r.returncode == 1 and refusal in r.stdout, (r.stdout, r.stderr)
    # 2026-07-28: the request comes back inside the result, and the client
    # ends the call itself, naming what it did not declare.
    r = run_cli(srv() + ["call", tool, *args])
    assert r.returncode == 4 and "did not declare" in r.stderr, (r.stdout, r.stderr)


FIELDS = [
    # (id, field schema, typed text, value)
    ("string", {"type": "string"}, "Ann", "Ann"),
    ("integer", {"type": "integer"}, "41", 41),
    ("number", {"type": "number"}, "2.5", 2.5),
    ("boolean-y", {"type": "boolean"}, "y", True),
    ("boolean-false", {"type": "boolean"}, "false", False),
    ("enum-by-number", {"type": "string", "enum": ["red", "green"]}, "2", "green"),
    ("enum-by-value", {"type": "string", "enum": ["red", "green"]}, "red", "red"),
    ("enum-names", {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]}, "Green", "g"),
    ("oneOf-const", {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}, "B", "b"),
    ("multi", {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}}, "1, z", ["x", "z"]),
    ("email", {"type": "string", "format": "email"}, "a@b.io", "a@b.io"),
    ("date", {"type": "string", "format": "date"}, "2026-12-02", "2026-12-02"),
]


@pytest.mark.parametrize("schema,text,want", [f[1:] for f in FIELDS], ids=[f[0] for f in FIELDS])
def test_parse_field(schema: Dict[str, Any], text: str, want: Any) -> None:
    got = parse_field("f", schema, text)
    assert got == want and type(got) is type(want)


BAD_FIELDS = [
    # (id, field schema, typed text, message): the typing is the form's, the
    # rest the library's validator's
    ("integer", {"type": "integer"}, "4.5", "expected an integer"),
    ("minimum", {"type": "integer", "minimum": 18}, "12", "content.f is below minimum"),
    ("maximum", {"type": "number", "maximum": 1}, "2", "content.f is above maximum"),
    ("boolean", {"type": "boolean"}, "maybe", "answer y or n"),
    ("enum", {"type": "string", "enum": ["red", "green"]}, "3", "pick one of 1-2"),
    ("minLength", {"type": "string", "minLength": 3}, "ab", "content.f is shorter than minLength"),
    ("maxLength", {"type": "string", "maxLength": 2}, "abc", "content.f is longer than maxLength"),
    ("email", {"type": "string", "format": "email"}, "nope", "content.f is not an email address"),
    ("uri", {"type": "string", "format": "uri"}, "nope", "content.f is not an absolute URI"),
    ("date-time", {"type": "string", "format": "date-time"}, "today", "content.f is not a date-time"),
    # HH:MM without seconds: the form's own pattern once took it, and the
    # library then refused the whole form once it was filled in
    ("date-time-hh-mm", {"type": "string", "format": "date-time"}, "2026-12-02T10:30Z", "content.f is not a date-time"),
    ("maxItems", {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 1}, "1,2", "content.f has more items than maxItems"),
]


@pytest.mark.parametrize("schema,text,message", [f[1:] for f in BAD_FIELDS], ids=[f[0] for f in BAD_FIELDS])
def test_parse_field_refuses(schema: Dict[str, Any], text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_field("f", schema, text)
    assert message in str(info.value)


def test_a_form_answer_passes_or_fails_as_in_the_library() -> None:
    """The form refuses up front what the library refuses when the answer
    is given, and what it takes the library takes."""
    form = {"message": "when?", "requestedSchema": {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}}
    for text in ("2026-12-02T10:30Z", "2026-12-02T10:30:00Z"):
        try:
            parse_field("at", form["requestedSchema"]["properties"]["at"], text)  # type: ignore[index]
            form_ok = True
        except ValueError:
            form_ok = False
        try:
            _ffi.validate_answer("elicitation", form, {"action": "accept", "content": {"at": text}})
            library_ok = True
        except InvalidArgument:
            library_ok = False
        assert form_ok == library_ok, text
    content, shown = _run_form(form["requestedSchema"], ["2026-12-02T10:30Z", "2026-12-02T10:30:00Z"])  # type: ignore[arg-type]
    assert content == {"at": "2026-12-02T10:30:00Z"}
    assert "not valid: content.at is not a date-time (RFC 3339)" in shown


def _run_form(schema: Dict[str, Any], answers: List[Optional[str]]) -> "tuple[Dict[str, Any], str]":
    lines = list(answers)
    shown: List[str] = []

    def read() -> Optional[str]:
        return lines.pop(0) if lines else None

    content = ask_form("m", schema, read, shown.append)
    return content, "".join(shown)


def test_ask_form_defaults_required_and_retries() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "anon"},
            "age": {"type": "integer", "minimum": 0},
            "note": {"type": "string"},
        },
        "required": ["age"],
    }
    content, shown = _run_form(schema, ["", "", "-1", "7", ""])
    assert content == {"name": "anon", "age": 7}
    assert "[anon]" in shown and "a value is required" in shown and "not valid: content.age is below minimum" in shown


def test_ask_form_cancels_on_eof_bang_cancel_and_endless_mistakes() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    with pytest.raises(FormCancelled):
        _run_form(schema, [None])
    with pytest.raises(FormCancelled):
        _run_form(schema, ["!cancel"])
    with pytest.raises(FormCancelled) as info:
        _run_form(schema, ["x"] * 10)
    assert "no valid answer for n" in str(info.value)


def test_ask_form_shows_server_text_without_control_characters() -> None:
    schema = {"type": "object", "properties": {"f": {"type": "string", "description": "evil \x1b[2J"}}}
    _, shown = _run_form(schema, ["v"])
    assert "\x1b" not in shown and "\\x1b[2J" in shown


@pytest.mark.parametrize(
    "value,message",
    [
        ([], "expected a JSON object"),
        ({"role": "system", "content": {"type": "text", "text": "x"}, "model": "m"}, "role"),
        ({"role": "assistant", "content": "x", "model": "m"}, "needs content"),
        ({"role": "assistant", "content": {"type": "text"}, "model": "m"}, "text string"),
        ({"role": "assistant", "content": {"type": "text", "text": "x"}}, "model"),
        ({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m", "stopReason": 1}, "stopReason"),
    ],
)
def test_check_sampling_result_refuses(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        check_sampling_result(value)
    assert message in str(info.value)


def test_summary_text_has_counts_not_text() -> None:
    s = summary_text(
        {
            "request_hash_short": "0123456789abcdef",
            "message_count": 2,
            "roles": ["user", "assistant"],
            "content_kinds": {"text": 1, "image": 1},
            "text_char_count": 12,
            "system_prompt_chars": 5,
            "max_tokens": 100,
            "requested_models": ["m1"],
            "has_tools": True,
        }
    )
    assert s == (
        "2 messages (user, assistant); 12 characters of text; system prompt 5 characters; "
        "content text 1, image 1; max_tokens 100; models m1; with tools; request 0123456789abcdef"
    )
