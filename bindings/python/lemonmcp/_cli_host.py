"""The command line's answers to a server's own requests.

- elicitation (``elicitation/create``, form mode): on a terminal, a form on
  stderr read from stdin, field by field, checked against the requested
  schema (defaults, enums, bounds, formats), asking again after a mistake;
- sampling (``sampling/createMessage``): the library's redacted summary is
  shown, then the request is refused, or answered by ``--sampling-command
  CMD`` (the request's params as JSON on its stdin, the result as JSON on
  its stdout, checked here).

Which of these the client declares at all is decided in cli.py: nothing is
declared that cannot be answered.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import threading
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ._cli_output import printable
from ._ffi import validate_answer
from .errors import InvalidArgument, PolicyDenied

if TYPE_CHECKING:
    import subprocess  # loaded by the sampling command only

__all__ = [
    "FormCancelled",
    "TerminalInput",
    "ask_form",
    "elicitation_handler",
    "sampling_command_handler",
    "summary_text",
    "review_printer",
    "denial_printer",
    "check_sampling_result",
    "SAMPLING_COMMAND_TIMEOUT_S",
]

#: How long a --sampling-command may run before it is killed (seconds).
SAMPLING_COMMAND_TIMEOUT_S = 300.0
#: The most a sampling command may print (bytes).
SAMPLING_OUTPUT_MAX = 4 * 1024 * 1024

# One form at a time on the terminal, even if the server asks twice at once.
_TERMINAL = threading.Lock()

class FormCancelled(Exception):
    """The person cancelled the form (or stdin ended)."""


# ------------------------------------------------------------------ forms


def _printable(text: str) -> str:
    """Server text for a terminal: control characters shown, not obeyed."""
    return printable(text, keep="\n\t")


def _choices(schema: Mapping[str, Any]) -> Optional[List[Tuple[Any, str]]]:
    """(value, label) pairs of a single-choice field, or None."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        names = schema.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(enum) else enum
        return [(v, str(lbl)) for v, lbl in zip(enum, labels)]
    for key in ("oneOf", "anyOf"):
        alts = schema.get(key)
        if isinstance(alts, list) and alts and all(isinstance(a, Mapping) and "const" in a for a in alts):
            return [(a["const"], str(a.get("title") or a["const"])) for a in alts]
    return None


def _multi_choices(schema: Mapping[str, Any]) -> Optional[List[Tuple[Any, str]]]:
    """(value, label) pairs of a multiple-choice (array) field, or None."""
    if schema.get("type") != "array":
        return None
    items = schema.get("items")
    return _choices(items) if isinstance(items, Mapping) else None


def _pick(word: str, choices: Sequence[Tuple[Any, str]]) -> Any:
    """A choice by its number (1-based), its value or its label."""
    if word.isdigit() and 1 <= int(word) <= len(choices):
        return choices[int(word) - 1][0]
    for value, label in choices:
        if word == str(value) or word == label:
            return value
    raise ValueError(f"pick one of 1-{len(choices)}")


def _typed(schema: Mapping[str, Any], text: str) -> Any:
    """A typed answer as the field's JSON value: a choice by its number or
    label, y/n, a number; ValueError when it cannot be read as one."""
    choices = _choices(schema)
    if choices is not None:
        return _pick(text, choices)
    multi = _multi_choices(schema)
    if multi is not None:
        return [_pick(w.strip(), multi) for w in text.split(",") if w.strip()]
    kind = schema.get("type")
    if kind == "boolean":
        low = text.lower()
        if low in ("y", "yes", "true"):
            return True
        if low in ("n", "no", "false"):
            return False
        raise ValueError("answer y or n")
    if kind in ("integer", "number"):
        try:
            value: Any = int(text) if kind == "integer" else float(text)
        except ValueError:
            raise ValueError("expected an integer" if kind == "integer" else "expected a number") from None
        if kind == "number" and value.is_integer() and "." not in text and "e" not in text.lower():
            value = int(value)
        return value
    return text


def parse_field(name: str, schema: Mapping[str, Any], text: str) -> Any:
    """One typed answer as the field's value, checked by the library's own
    validator (bounds, lengths, formats: the check the answer meets when it
    is sent), so that a form never takes an answer the library then
    refuses. ValueError says what is wrong."""
    value = _typed(schema, text)
    form = {"message": "", "requestedSchema": {"type": "object", "properties": {name: dict(schema)}}}
    try:
        validate_answer("elicitation", form, {"action": "accept", "content": {name: value}})
    except InvalidArgument as exc:
        raise ValueError(exc.message) from None
    return value


def _describe_default(schema: Mapping[str, Any], value: Any) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _field_hint(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if _choices(schema) is not None:
        return "choose one"
    if _multi_choices(schema) is not None:
        return "choose any, comma-separated"
    if kind == "boolean":
        return "y/n"
    fmt = schema.get("format")
    return str(fmt or kind or "text")


def ask_form(
    message: str,
    schema: Mapping[str, Any],
    read_line: Callable[[], Optional[str]],
    write: Callable[[str], None],
    max_tries: int = 5,
) -> Dict[str, Any]:
    """Ask every field of ``schema`` (an object schema of primitive fields)
    and return the content. Enter takes the default, or leaves an optional
    field out; a field answered wrongly is asked again (``max_tries`` times).
    Raises FormCancelled when stdin ends or on ``!cancel``."""
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = schema.get("required")
    required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    content: Dict[str, Any] = {}
    for name, field in props.items():
        field = field if isinstance(field, Mapping) else {}
        title = _printable(str(field.get("title") or name))
        desc = field.get("description")
        must = name in required
        default = field.get("default")
        write(f"\n{title}{' (required)' if must else ''}" + (f": {_printable(str(desc))}" if desc else "") + "\n")
        opts = _choices(field) or _multi_choices(field)
        if opts:
            for i, (_, label) in enumerate(opts, 1):
                write(f"  {i}) {_printable(label)}\n")
        prompt = f"  {_field_hint(field)}" + (f" [{_printable(_describe_default(field, default))}]" if default is not None else "") + ": "
        for attempt in range(max_tries):
            write(prompt)
            line = read_line()
            if line is None:
                raise FormCancelled("stdin ended")
            text = line.strip()
            if text == "!cancel":
                raise FormCancelled("cancelled")
            if text == "":
                if default is not None:
                    content[name] = default
                    break
                if not must:
                    break
                write("  a value is required\n")
                continue
            try:
                content[name] = parse_field(name, field, text)
                break
            except ValueError as exc:
                write(f"  not valid: {exc}\n")
        else:
            raise FormCancelled(f"no valid answer for {name} after {max_tries} tries")
    return content


class TerminalInput:
    """Lines typed at the terminal, read on a app-request thread in a way
    the main thread can stop: after Ctrl-C or when the command ends, a form
    waiting for input is cancelled instead of keeping the process alive."""

    POLL_S = 0.1

    def __init__(self, stdin: IO[str]) -> None:
        self.stdin = stdin
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def read_line(self) -> Optional[str]:
        """One line, or None at end of input or once stopped."""
        try:
            fd: Optional[int] = self.stdin.fileno()
        except (AttributeError, ValueError, OSError):
            fd = None
        while fd is not None and not self._stop.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], self.POLL_S)
            except (OSError, ValueError):
                break
            if ready:
                break
        if self._stop.is_set():
            return None
        line = self.stdin.readline()
        return None if line == "" else line


def elicitation_handler(term: TerminalInput, err: IO[str]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    """An ``elicitation`` host handler for a terminal (form mode)."""

    def write(text: str) -> None:
        err.write(text)
        err.flush()

    read_line = term.read_line

    def handle(params: Dict[str, Any]) -> Dict[str, Any]:
        message = params.get("message")
        schema = params.get("requestedSchema")
        schema = schema if isinstance(schema, Mapping) else {}
        with _TERMINAL:
            write(f"\n[elicitation] the server asks: {_printable(str(message or ''))}\n")
            write("Answer (a), decline (d) or cancel (c)? [a]: ")
            line = read_line()
            choice = (line or "").strip().lower()
            if line is None or choice in ("c", "cancel"):
                write("[elicitation] cancelled\n")
                return {"action": "cancel"}
            if choice in ("d", "decline", "n", "no"):
                write("[elicitation] declined\n")
                return {"action": "decline"}
            write("(Enter keeps the [default] or skips an optional field; !cancel cancels)\n")
            try:
                content = ask_form(str(message or ""), schema, read_line, write)
            except FormCancelled as exc:
                write(f"[elicitation] cancelled: {exc}\n")
                return {"action": "cancel"}
            write("[elicitation] sent\n")
            return {"action": "accept", "content": content}

    return handle


# ------------------------------------------------------------------ sampling


def summary_text(summary: Mapping[str, Any]) -> str:
    """The library's redacted summary of a sampling request in one line:
    counts and hashes, never the request's text."""
    parts: List[str] = []
    n = summary.get("message_count")
    if isinstance(n, int):
        roles = summary.get("roles")
        who = f" ({', '.join(str(r) for r in roles)})" if isinstance(roles, list) and roles else ""
        parts.append(f"{n} message{'s' if n != 1 else ''}{who}")
    chars = summary.get("text_char_count")
    if isinstance(chars, int):
        parts.append(f"{chars} characters of text")
    sp = summary.get("system_prompt_chars")
    if isinstance(sp, int) and sp:
        parts.append(f"system prompt {sp} characters")
    kinds = summary.get("content_kinds")
    if isinstance(kinds, Mapping) and set(kinds) - {"text"}:
        parts.append("content " + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    mt = summary.get("max_tokens")
    if isinstance(mt, int):
        parts.append(f"max_tokens {mt}")
    models = summary.get("requested_models")
    if isinstance(models, list) and models:
        parts.append("models " + ", ".join(_printable(str(m)) for m in models))
    if summary.get("has_tools"):
        parts.append("with tools")
    h = summary.get("request_hash_short")
    if isinstance(h, str):
        parts.append(f"request {h}")
    return "; ".join(parts) or "no details"


def _server_name(payload: Mapping[str, Any]) -> str:
    server = payload.get("server")
    if isinstance(server, Mapping):
        info = server.get("serverInfo") if isinstance(server.get("serverInfo"), Mapping) else server
        name = info.get("name") if isinstance(info, Mapping) else None
        if isinstance(name, str) and name:
            return _printable(name)
    return "the server"


def review_printer(err: IO[str], command: str, quiet: bool) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    """The ``review`` handler with --sampling-command: the summary is shown
    (unless quiet) and the request goes on to the command, which decides."""

    def review(payload: Dict[str, Any]) -> Dict[str, Any]:
        summary = payload.get("summary")
        if not quiet:
            err.write(
                f"[sampling] {_server_name(payload)} asks for a completion: "
                f"{summary_text(summary if isinstance(summary, Mapping) else {})}; "
                f"asking {command}\n"
            )
            err.flush()
        return {"approved": True}

    return review


def denial_printer(err: IO[str]) -> Callable[[Dict[str, Any]], None]:
    """on_sampling_denied: say on stderr what was refused and why."""

    def show(payload: Dict[str, Any]) -> None:
        denial = payload.get("denial") if isinstance(payload.get("denial"), Mapping) else {}
        reason = denial.get("reason") if isinstance(denial, Mapping) else None
        request = denial.get("request") if isinstance(denial, Mapping) else None
        hint = " (give --sampling-command CMD to answer sampling requests)" if reason == "sampling_disabled" else ""
        err.write(
            f"[sampling] refused a request from {_server_name(payload)}: {reason or 'refused'}{hint}; "
            f"{summary_text(request if isinstance(request, Mapping) else {})}\n"
        )
        err.flush()

    return show


def check_sampling_result(value: Any) -> Dict[str, Any]:
    """A sampling command's answer, checked by the library's own validator
    (the check it meets when it is given): a CreateMessageResult object.
    ValueError says what is wrong."""
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object")
    try:
        validate_answer("sampling", None, value)
    except InvalidArgument as exc:
        raise ValueError(exc.message) from None
    return value


def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def sampling_command_handler(
    command: str, err: IO[str], timeout: float = SAMPLING_COMMAND_TIMEOUT_S
) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    """A ``sampling`` host handler that runs COMMAND (shell-like quoting, no
    shell) with the request's params as JSON on stdin and reads the result
    as JSON from its stdout. Any failure is a refusal (PolicyDenied, with a
    message naming what went wrong; never the command's output)."""
    argv = shlex.split(command)
    label = os.path.basename(argv[0]) if argv else command

    def refuse(why: str) -> PolicyDenied:
        err.write(f"[sampling] refused: the sampling command {why}\n")
        err.flush()
        return PolicyDenied(f"the client's sampling command {why}")

    def handle(params: Dict[str, Any]) -> Dict[str, Any]:
        import subprocess

        request = json.dumps(params, ensure_ascii=False).encode("utf-8")
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,  # killed as a group on timeout
                close_fds=True,
            )
        except OSError as exc:
            raise refuse(f"{label} could not be started: {exc.strerror or exc}") from None
        try:
            out, _ = proc.communicate(request, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise refuse(f"{label} did not answer within {timeout:g} s") from None
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        if proc.returncode != 0:
            raise refuse(f"{label} exited with status {proc.returncode}")
        if len(out) > SAMPLING_OUTPUT_MAX:
            raise refuse(f"{label} printed more than {SAMPLING_OUTPUT_MAX} bytes")
        try:
            value = json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise refuse(f"{label} did not print a JSON object") from None
        try:
            return check_sampling_result(value)
        except ValueError as exc:
            raise refuse(f"{label} printed an invalid result: {exc}") from None

    return handle
