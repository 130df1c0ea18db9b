"""`lemonmcp --config FILE search "QUERY"`: every server's tools of the file,
ranked by the host against QUERY (lemonmcp.Host.search_tools), as a table or,
with --json, as the library's result."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, List, Optional, Tuple

from ._cli_exit import EXIT_CODES
from ._cli_output import _dump, _one_line, format_table

if TYPE_CHECKING:  # pragma: no cover
    from .host import Host

__all__ = ["run_search"]

#: The exit status of a search that matched nothing (lemonmcp._cli_exit).
NOT_FOUND = next(code for code, name, _ in EXIT_CODES if name == "not_found")


def run_search(
    host: "Host", query: str, limit: int, out: IO[str], err: IO[str], as_json: bool, width: Optional[int], prog: str
) -> int:
    """Prints the ranked tools; exit status 0, or 7 (not found) when
    nothing matches, which is said on stderr (with --json too, after the
    empty result), so that a script can tell."""
    results = host.search_tools(query, limit=limit)
    if as_json:
        _dump(
            {"results": [{"name": r.name, "server": r.server, "score": r.score, "tool": r.tool.raw} for r in results]},
            out,
        )
    if not results:
        err.write(f"{prog}: no tool matches {query!r}\n")
        return NOT_FOUND
    if as_json:
        return 0
    rows: List[Tuple[str, ...]] = [
        (r.name, r.server, f"{r.score:.2f}", _one_line(r.tool.description or r.tool.title or "")) for r in results
    ]
    out.write(format_table(("NAME", "SERVER", "SCORE", "DESCRIPTION"), rows, width) + "\n")
    return 0
