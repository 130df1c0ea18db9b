"""What the command line prints: tables, content blocks, server info, a
server's stderr tail, progress and log lines. Text a server returned is
written as it came; fitting to a width is only for a terminal, and only for
the command line's own tables and prose."""

from __future__ import annotations

import json
import shutil
import textwrap
from typing import IO, Any, Callable, List, Mapping, Optional, Sequence

from .types import Content, LogRecord, Notification, Progress, ResourceContents, ServerInfo


def _width() -> int:
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def _one_line(text: Optional[str]) -> str:
    return " ".join((text or "").split())


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: Optional[int] = None) -> str:
    """Aligned columns; on a terminal (``width`` given) the table fits it:
    the last column is cut (with "…") to the room left, and when the others
    leave it fewer than TABLE_LAST_MIN characters the widest of them are cut
    too (to no fewer than TABLE_CELL_MIN); elsewhere (None) nothing is cut."""
    cols = len(headers)
    cells = [[_one_line(c) for c in r] for r in rows]
    widths = [max([len(headers[i])] + [len(r[i]) for r in cells]) for i in range(cols)]
    if width is not None:
        _fit_columns(widths, width)
    lines = []
    for r in [list(headers)] + cells:
        parts = [_cut(r[i], widths[i]).ljust(widths[i]) for i in range(cols - 1)]
        prefix = "  ".join(parts) + ("  " if parts else "")
        last = r[cols - 1]
        if width is not None:
            last = _cut(last, max(TABLE_LAST_MIN, width - len(prefix)))
        lines.append((prefix + last).rstrip())
    return "\n".join(lines)


# The fewest characters a terminal table leaves its last column (a
# description), and cuts another column to.
TABLE_LAST_MIN = 12
TABLE_CELL_MIN = 8


def _fit_columns(widths: List[int], width: int) -> None:
    """Narrows the widest of the columns before the last, one character at
    a time, until they leave the last TABLE_LAST_MIN of ``width`` (or none
    can be narrowed further: a terminal too narrow for any table)."""
    others = len(widths) - 1
    while others > 0 and sum(widths[:others]) + 2 * others > width - TABLE_LAST_MIN:
        i = max(range(others), key=lambda k: widths[k])
        if widths[i] <= TABLE_CELL_MIN:
            return
        widths[i] -= 1


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 1] + "…"


def _wrap(text: str, width: Optional[int], indent: str = "") -> str:
    """The CLI's own prose (server instructions, a prompt's description),
    wrapped for a terminal; None (not a terminal): only indented. Never used
    on what a tool or resource returned."""
    if width is None:
        return "\n".join(indent + line for line in text.splitlines() or [""])
    out: List[str] = []
    for line in text.splitlines() or [""]:
        if len(indent) + len(line) <= width or not line.strip():
            out.append(indent + line)
        else:
            out.extend(
                textwrap.wrap(
                    line,
                    width=width,
                    initial_indent=indent,
                    subsequent_indent=indent,
                    break_long_words=True,
                    break_on_hyphens=False,
                    replace_whitespace=False,
                    drop_whitespace=True,
                )
                or [indent]
            )
    return "\n".join(out)


def _size(n: Optional[int]) -> str:
    if n is None:
        return "unknown size"
    return f"{n} byte" if n == 1 else f"{n:,} bytes"


def _describe_resource(c: ResourceContents) -> Optional[str]:
    """None for text (printed as is), else a one-line description."""
    if c.text is not None:
        return None
    return f"[blob {c.mime_type or 'application/octet-stream'}, {_size(c.size)}] {c.uri}".rstrip()


def _line_end(text: str) -> str:
    """text ending with exactly the newline it had, or one added."""
    return text if text.endswith("\n") else text + "\n"


def format_content(blocks: Sequence[Content]) -> str:
    """Content blocks as text: a text block is written as the server sent it
    (never re-wrapped, so JSON text still parses), other blocks as one
    descriptive line each. Every block ends with a newline."""
    out: List[str] = []
    for b in blocks:
        if b.type == "text":
            out.append(_line_end(b.text or ""))
        elif b.type in ("image", "audio"):
            out.append(f"[{b.type} {b.mime_type or 'unknown type'}, {_size(b.size)}]\n")
        elif b.type == "resource_link":
            extra = ", ".join(x for x in (b.name, b.mime_type) if x)
            out.append(f"[resource link] {b.uri or ''}" + (f" ({extra})" if extra else "") + "\n")
        elif b.type == "resource" and b.resource is not None:
            desc = _describe_resource(b.resource)
            if desc is None:
                out.append(f"[resource {b.resource.uri}]\n")
                out.append(_line_end(b.resource.text or ""))
            else:
                out.append(desc + "\n")
        else:
            out.append(f"[{b.type or 'unknown'} content] " + json.dumps(b.raw, ensure_ascii=False) + "\n")
    return "".join(out)


def _schema_args(schema: Mapping[str, Any]) -> str:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return ""
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    return ", ".join(f"{k}*" if k in (required or []) else k for k in props)


def _capabilities(caps: Mapping[str, Any]) -> str:
    parts = []
    for name, value in caps.items():
        flags = [k for k, v in value.items() if v is True] if isinstance(value, dict) else []
        parts.append(f"{name} ({', '.join(flags)})" if flags else name)
    return ", ".join(parts) or "none"


def format_info(info: ServerInfo, width: Optional[int] = None) -> str:
    title = f" — {info.title}" if info.title else ""
    lines = [
        f"server        {info.name} {info.version}{title}".rstrip(),
        f"protocol      {info.protocol_version or '?'} over {info.transport or '?'}",
        f"capabilities  {_capabilities(info.capabilities)}",
    ]
    if info.instructions:
        lines.append("instructions")
        lines.append(_wrap(info.instructions, width, indent="  "))
    return "\n".join(lines)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _dump(value: Any, out: IO[str]) -> None:
    json.dump(value, out, indent=2, ensure_ascii=False)
    out.write("\n")


#: The server's stderr shown when connecting fails: at most this many of the
#: last lines the library kept, and this many characters in all.
STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 4096

def printable(text: str, keep: str = "\t") -> str:
    """Server text made safe for a terminal: control characters (escape
    sequences) shown as \\xNN, never interpreted; those in ``keep`` (a tab,
    and for a multi-line text a newline) stay."""
    return "".join(ch if ch.isprintable() or ch in keep else f"\\x{ord(ch):02x}" for ch in text)


def stderr_tail_text(lines: Sequence[str], max_lines: int = STDERR_TAIL_LINES, max_chars: int = STDERR_TAIL_CHARS) -> str:
    """The last lines of a server's stderr, bounded in lines and characters,
    labelled as the server's own words (an empty string when there are none)."""
    kept: List[str] = []
    used = 0
    for raw in reversed([ln for ln in lines if ln.strip()][-max_lines:]):
        line = printable(raw.rstrip("\r\n"))
        if used + len(line) > max_chars:
            room = max_chars - used
            if room > 40:
                kept.append("…" + line[-(room - 1):])
            break
        kept.append(line)
        used += len(line)
    if not kept:
        return ""
    kept.reverse()
    n = len(kept)
    head = f"the server's stderr (last {n} line{'s' if n != 1 else ''}):"
    return head + "\n" + "".join(f"  | {ln}\n" for ln in kept)


class _ProgressLine:
    """Progress on stderr: one rewritten line on a terminal, lines elsewhere."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.dirty = False

    def __call__(self, p: Progress) -> None:
        if p.total:
            amount = f"{p.progress:g}/{p.total:g} ({100.0 * p.progress / p.total:.0f}%)"
        else:
            amount = f"{p.progress:g}"
        text = f"progress {amount}" + (f" {_one_line(p.message)}" if p.message else "")
        if self.tty:
            self.stream.write("\r\033[K" + text[: _width() - 1])
            self.dirty = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.dirty:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.dirty = False


def _log_printer(stream: IO[str]) -> Callable[[LogRecord], None]:
    def show(rec: LogRecord) -> None:
        label = "server" if rec.source == "stderr" else rec.source or "log"
        stream.write(f"[{label}] {rec.message}\n")
        stream.flush()

    return show


def _notification_printer(stream: IO[str], only_logs: bool = False) -> Callable[[Notification], None]:
    def show(n: Notification) -> None:
        if only_logs and n.method != "notifications/message":
            return
        if n.method == "notifications/message":
            data = n.params.get("data")
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            logger = n.params.get("logger")
            level = n.params.get("level", "info")
            stream.write(printable(f"[server {level}{' ' + logger if isinstance(logger, str) else ''}] {text}") + "\n")
        else:
            stream.write(f"[notification] {n.method}\n")
        stream.flush()

    return show
