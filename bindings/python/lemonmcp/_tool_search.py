"""Tool search over a host's catalogue (``LMCP_QUERY_SEARCH_TOOLS``, issue 22):
the request :meth:`lemonmcp.Host.search_tools` sends and the results it
returns. The ranking is the library's (BM25F over tool names split into
words, titles, descriptions, parameters and server names); nothing is
ranked here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .host import HostTool

__all__ = ["ToolSearchResult", "search_args", "parse_results"]


@dataclass(frozen=True)
class ToolSearchResult:
    """One ranked tool: ``name`` is the host's name for it (what
    :meth:`lemonmcp.Host.call_tool` takes), ``score`` its BM25F score (higher
    is better; equal scores are ordered by name), ``tool`` the whole tool as
    :meth:`lemonmcp.Host.list_tools` gives it."""

    name: str
    server: str
    score: float
    tool: "HostTool"

    @classmethod
    def from_json(cls, raw: Any) -> "ToolSearchResult":
        from .host import HostTool  # host.py imports this module

        r = raw if isinstance(raw, dict) else {}
        score = r.get("score")
        return cls(
            name=str(r.get("name", "")),
            server=str(r.get("server", "")),
            score=float(score) if isinstance(score, (int, float)) else 0.0,
            tool=HostTool.from_host_json(r.get("tool")),
        )


def search_args(query: str, limit: Optional[int], servers: Optional[Sequence[str]]) -> Dict[str, Any]:
    """The search's arguments (LMCP_QUERY_SEARCH_TOOLS); the library checks
    the values and names a bad one."""
    if not isinstance(query, str):
        raise TypeError("search_tools: query must be a str")
    if not isinstance(limit, (int, type(None))) or isinstance(limit, bool):
        raise TypeError("search_tools: limit must be an int")
    if isinstance(servers, str):
        raise TypeError("search_tools: servers must be a list of server names, not one string")
    o: Dict[str, Any] = {"query": query}
    if limit is not None:
        o["limit"] = limit
    if servers is not None:
        o["servers"] = list(servers)
    return o


def parse_results(doc: Any) -> List[ToolSearchResult]:
    results = doc.get("results", []) if isinstance(doc, dict) else []
    return [ToolSearchResult.from_json(r) for r in results]
