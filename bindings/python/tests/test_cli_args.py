"""KEY=VALUE words typed by a tool's input schema (lemonmcp._cli_args), and
the same through `lemonmcp call` against the fixture server."""

from __future__ import annotations

import json
import shlex
from typing import Any, Dict, List, Optional

import pytest

from lemonmcp._cli_args import ArgumentError, arguments_from_words, coerce_value

from cli_run import run_cli
from conftest import FIXTURE

S = {"type": "string"}
N = {"type": "number"}
I = {"type": "integer"}
B = {"type": "boolean"}

COERCE = [
    # (id, schema, typed value, expected value)
    ("string-keeps-digits", S, "42", "42"),
    ("string-keeps-json-text", S, '{"a": 1}', '{"a": 1}'),
    ("string-keeps-true", S, "true", "true"),
    ("string-empty", S, "", ""),
    ("number-int", N, "3", 3),
    ("number-float", N, "3.5", 3.5),
    ("number-exponent", N, "1e3", 1000.0),
    ("integer", I, "7", 7),
    ("integer-from-whole-float", I, "7.0", 7),
    ("boolean-true", B, "true", True),
    ("boolean-false", B, "false", False),
    ("array", {"type": "array"}, "[1, 2]", [1, 2]),
    ("object", {"type": "object"}, '{"k": "v"}', {"k": "v"}),
    ("null", {"type": "null"}, "null", None),
    ("type-list-null-integer", {"type": ["null", "integer"]}, "3", 3),
    ("type-list-null-integer-null", {"type": ["null", "integer"]}, "null", None),
    ("type-list-string-number-prefers-number", {"type": ["string", "number"]}, "3", 3),
    ("type-list-string-number-text", {"type": ["string", "number"]}, "three", "three"),
    ("anyOf-string-null", {"anyOf": [S, {"type": "null"}]}, "null", None),
    ("anyOf-string-null-text", {"anyOf": [S, {"type": "null"}]}, "x", "x"),
    ("oneOf-integer-boolean", {"oneOf": [I, B]}, "false", False),
    ("enum-strings", {"type": "string", "enum": ["a", "1"]}, "1", "1"),
    ("enum-numbers", {"enum": [1, 2]}, "2", 2),
    ("const", {"const": "fixed"}, "fixed", "fixed"),
    ("no-type-json", {"description": "anything"}, "[1]", [1]),
    ("no-type-text", {}, "hello", "hello"),
    ("anyOf-with-open-alternative", {"anyOf": [N, {}]}, "x", "x"),
]


@pytest.mark.parametrize("schema,value,want", [c[1:] for c in COERCE], ids=[c[0] for c in COERCE])
def test_coerce_value(schema: Dict[str, Any], value: str, want: Any) -> None:
    got = coerce_value("arg", value, schema)
    assert got == want and type(got) is type(want)


REFUSE = [
    # (id, schema, typed value, text in the error)
    ("number-from-text", N, "abc", "argument arg: expected a number, got 'abc'"),
    ("integer-from-float", I, "1.5", "expected an integer"),
    ("boolean-from-yes", B, "yes", "expected true or false"),
    ("array-from-text", {"type": "array"}, "a,b", "expected a JSON array"),
    ("object-from-array", {"type": "object"}, "[1]", "expected a JSON object"),
    ("nan", N, "NaN", "expected a number"),
    ("enum", {"enum": ["red", "green"]}, "blue", "'blue' is not one of red, green"),
    ("type-list", {"type": ["null", "integer"]}, "x", "expected null or an integer"),
]


@pytest.mark.parametrize("schema,value,message", [c[1:] for c in REFUSE], ids=[c[0] for c in REFUSE])
def test_coerce_value_refuses(schema: Dict[str, Any], value: str, message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        coerce_value("arg", value, schema)
    assert message in str(info.value)


TOOL = {
    "type": "object",
    "properties": {"text": S, "n": I, "tags": {"type": "array", "items": I}, "on": B},
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "words,schema,want",
    [
        (["text=42", "n=42"], TOOL, {"text": "42", "n": 42}),
        (["tags=1", "tags=2"], TOOL, {"tags": [1, 2]}),
        (["tags=5"], TOOL, {"tags": [5]}),
        (["tags=[5, 6]"], TOOL, {"tags": [5, 6]}),
        (["text=a=b"], TOOL, {"text": "a=b"}),
        (["x=1", "y=z"], None, {"x": 1, "y": "z"}),
        (["extra=1"], {"type": "object", "properties": {}}, {"extra": 1}),
        (["extra=1"], {"type": "object", "additionalProperties": S}, {"extra": "1"}),
    ],
)
def test_arguments_from_words(words: List[str], schema: Optional[Dict[str, Any]], want: Dict[str, Any]) -> None:
    assert arguments_from_words(words, schema) == want


@pytest.mark.parametrize(
    "words,message",
    [
        (["nope=1"], "argument nope: the tool takes no such argument (it takes: text, n, tags, on)"),
        (["text=a", "text=b"], "argument text: given 2 times"),
        (["novalue"], "expected KEY=VALUE"),
        (["=v"], "expected KEY=VALUE"),
        (["tags=x"], "argument tags: expected an integer"),
    ],
)
def test_arguments_from_words_refuses(words: List[str], message: str) -> None:
    with pytest.raises(ArgumentError) as info:
        arguments_from_words(words, TOOL)
    assert message in str(info.value)


def srv() -> List[str]:
    return ["--stdio", shlex.join([FIXTURE])]


def test_call_sends_a_string_where_the_schema_says_string(fixture_path: str) -> None:
    r = run_cli(srv() + ["--json", "call", "echo", "text=42"])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["structuredContent"] == {"text": "42"}
    r = run_cli(srv() + ["--json", "call", "echo", "text=[1, 2]"])
    assert json.loads(r.stdout)["structuredContent"] == {"text": "[1, 2]"}
    r = run_cli(srv() + ["call", "add", "a=2", "b=0.5"])
    assert r.returncode == 0 and r.stdout.strip() == "2.5", (r.stdout, r.stderr)


@pytest.mark.parametrize(
    "words,message",
    [
        (["add", "a=2", "b=two"], "lemonmcp: call add: argument b: expected a number, got 'two'"),
        (["add", "a=2", "b=3", "c=4"], "argument c: the tool takes no such argument (it takes: a, b)"),
        (["large", "bytes=many"], "argument bytes: expected an integer, got 'many'"),
    ],
)
def test_call_refuses_a_value_that_fits_nothing(fixture_path: str, words: List[str], message: str) -> None:
    r = run_cli(srv() + ["call", *words])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and r.stdout == ""


def test_call_json_and_stdin_arguments_are_sent_as_given(fixture_path: str) -> None:
    # --json / --args / stdin bypass the typing: the JSON is the arguments.
    r = run_cli(srv() + ["--json", "call", "echo", "--args", '{"text": "7"}'])
    assert json.loads(r.stdout)["structuredContent"] == {"text": "7"}
    r = run_cli(srv() + ["call", "add", "--json", "-"], stdin='{"a": 1, "b": 2}')
    assert r.returncode == 0 and r.stdout.strip() == "3", r.stderr
