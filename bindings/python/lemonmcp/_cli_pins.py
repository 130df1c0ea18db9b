"""`lemonmcp --config FILE pins` and `lemonmcp --config FILE approve SERVER
[NAME]`: what the host holds of the file's servers and why, with a readable
diff of each change, and the approval of what a server offers now
(lemonmcp.Host.pins, lemonmcp.Host.approve; docs/host.md)."""

from __future__ import annotations

import difflib
import json
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

from ._cli_output import _dump, _one_line, format_table
from .errors import InvalidState

if TYPE_CHECKING:  # pragma: no cover
    from .host import Host

__all__ = ["run_pins", "run_approve"]

#: The statuses that hold a definition.
HELD = ("changed", "new", "flagged")


def _entries(pins: Dict[str, Any]) -> Iterator[Tuple[str, str, str, Dict[str, Any]]]:
    """(server, kind, name, entry) of every definition, in a stable order."""
    for server in sorted(pins):
        p = pins[server]
        if isinstance(p.get("instructions"), dict):
            yield server, "instructions", "", p["instructions"]
        for key, kind in (("tools", "tool"), ("prompts", "prompt"), ("resources", "resource")):
            for name in sorted(p.get(key) or {}):
                yield server, kind, name, p[key][name]


def _pretty(definition: Any) -> List[str]:
    return json.dumps(definition, indent=2, sort_keys=True, ensure_ascii=True).splitlines(keepends=True)


def _diff(server: str, kind: str, name: str, entry: Dict[str, Any]) -> str:
    """The change as a unified diff of the two definitions (pretty JSON,
    non-ASCII escaped: nothing reaches the terminal but plain text)."""
    label = f"{server} {kind} {name}".rstrip()
    pinned = _pretty(entry["pinned"]) if "pinned" in entry else []
    offered = _pretty(entry["offered"]) if "offered" in entry else []
    lines = difflib.unified_diff(pinned, offered, fromfile=f"{label} (pinned)", tofile=f"{label} (offered now)")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def run_pins(host: "Host", out: IO[str], err: IO[str], as_json: bool, width: Optional[int], prog: str) -> int:
    """Prints every definition the host holds and why, then the diff of
    each change; exit status 0."""
    pins = host.pins()
    if as_json:
        _dump(pins, out)
        return 0
    for server in sorted(pins):
        if pins[server].get("error"):
            err.write(f"{prog}: {server}: {pins[server]['error']}\n")
    rows: List[Tuple[str, ...]] = []
    diffs: List[str] = []
    for server, kind, name, entry in _entries(pins):
        if entry.get("status") == "approved":
            continue
        findings = ", ".join(sorted({f"{f['kind']} in {f['path']}" for f in entry.get("findings") or []}))
        rows.append((server, kind, json.dumps(name, ensure_ascii=True)[1:-1], entry.get("status", ""), _one_line(findings or entry.get("reason", "") or "no longer offered (not held)")))
        if entry.get("status") in ("changed", "flagged", "new"):
            diffs.append(_diff(server, kind, name, entry))
    if not any(row[3] in HELD for row in rows):
        err.write(f"{prog}: nothing is held: every definition offered is approved\n")
    if rows:
        out.write(format_table(("SERVER", "KIND", "NAME", "STATUS", "WHY"), rows, width) + "\n")
    for d in diffs:
        out.write("\n" + d)
    return 0


def run_approve(
    host: "Host",
    server: str,
    name: Optional[str],
    out: IO[str],
    err: IO[str],
    prog: str,
    *,
    hash: Optional[str] = None,  # noqa: A002 - the word pins prints
    yes: bool = False,
    ask: Optional[Callable[[str], bool]] = None,
) -> int:
    """Approves what SERVER offers and the host holds (only NAME when
    given): with ``hash``, only a definition offered with that hash (what
    ``pins`` showed; one that changed since is refused); with ``yes``,
    whatever is offered now; otherwise each definition is shown and
    approved when ``ask`` (a terminal's question) says so, and without a
    terminal nothing is approved. Exit status 0; 2 when it must ask and
    cannot; 7 when nothing of that is held; 8 when the server no longer
    offers what was shown (it stays held)."""
    if hash is not None and yes:
        err.write(f"{prog}: approve: --hash and --yes say different things; give one\n")
        return 2
    if hash is None and not yes and ask is None:
        err.write(f"{prog}: approve: not on a terminal, so nothing can be shown and confirmed: give --hash HASH "
                  f"(the hash `{prog} --config FILE pins` printed) or --yes (approve what {server} offers now)\n")
        return 2
    pins = host.pins()
    if server not in pins:
        err.write(f"{prog}: no server named {server!r} with pins\n")
        return 7
    done, matched = 0, 0
    for srv, kind, entry_name, entry in _entries({server: pins[server]}):
        if entry.get("status") not in HELD or (name is not None and entry_name != name):
            continue
        label = f"{kind} {json.dumps(entry_name, ensure_ascii=True)} of {srv}".replace(' "" of', " of")
        if hash is not None:
            if entry.get("hash") != hash:
                continue
        elif not yes:
            err.write(_diff(srv, kind, entry_name, entry) or "".join(_pretty(entry.get("offered"))) + "\n")
            if not ask(f"approve the {label} ({entry['status']}, {entry['hash']})?"):  # type: ignore[misc]
                continue
        matched += 1
        try:
            host.approve(srv, entry_name or None, hash=entry["hash"], kind=kind)
        except InvalidState as exc:
            err.write(f"{prog}: {_one_line(str(exc))}\n")
            return 8
        out.write(f"approved {label}: {entry['hash']}\n")
        done += 1
    if hash is not None and not matched:
        what = f"{name!r} of {server!r}" if name is not None else f"anything of {server!r}"
        err.write(f"{prog}: {what} is not offered with the hash {hash} now (it changed since, or is not held): "
                  f"review it again with `{prog} --config FILE pins`\n")
        return 8
    if not done:
        if not yes and hash is None:
            err.write(f"{prog}: nothing approved\n")
            return 0
        what = f"{name!r} of {server!r}" if name is not None else f"anything of {server!r}"
        err.write(f"{prog}: the host holds nothing: {what} is approved or not offered\n")
        return 7
    return 0
