"""``lemonmcp --config FILE servers``: connect every server of an
``mcpServers`` file at once and report each one's state.

Each server gets a :class:`lemonmcp.Client` of its own, opened on a thread
of its own, so one slow or broken server delays nobody (every open is bounded
by the ready timeout). :func:`check_servers` is the one place that knows how
the servers are connected; a multi-server host object can take its place
without changing what the command prints.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .client import Client
from .errors import LemonMCPError
from .types import Closed

__all__ = ["ServerStatus", "check_servers"]


@dataclass
class ServerStatus:
    """What connecting one server gave: ``state`` is "ready", "failed" or
    "invalid" (its config entry is wrong; nothing was started)."""

    name: str
    state: str
    era: Optional[str] = None
    protocol: Optional[str] = None
    transport: Optional[str] = None
    server: Optional[str] = None  # the server's name and version
    error: Optional[str] = None
    status: Optional[str] = None  # the library's status name, on failure
    stderr_tail: List[str] = field(default_factory=list)

    def as_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"name": self.name, "state": self.state}
        for key in ("era", "protocol", "transport", "server", "error", "status"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.stderr_tail:
            out["stderr_tail"] = list(self.stderr_tail)
        return out


#: One server to check: (name, transport object, or None with the reason the
#: entry is invalid).
Entry = Tuple[str, Optional[Mapping[str, Any]], Optional[str]]


def _probe(
    name: str,
    transport: Mapping[str, Any],
    options: Mapping[str, Any],
    error_text: Callable[[LemonMCPError], str],
    closed_wait: float,
) -> ServerStatus:
    closed: List[Closed] = []
    got = threading.Event()

    def on_closed(c: Closed) -> None:
        closed.append(c)
        got.set()

    client: Optional[Client] = None
    try:
        client = Client({"transport": dict(transport)}, on_closed=on_closed, **options)
        info = client.open()
        era = info.raw.get("era")
        return ServerStatus(
            name=name,
            state="ready",
            era=era if isinstance(era, str) else None,
            protocol=info.protocol_version or None,
            transport=info.transport or None,
            server=f"{info.name} {info.version}".strip() or None,
        )
    except LemonMCPError as exc:
        got.wait(closed_wait)  # the "closed" event carries the stderr tail
        return ServerStatus(
            name=name,
            state="failed",
            error=error_text(exc),
            status=exc.status_name,
            stderr_tail=list(closed[0].stderr_tail) if closed else [],
        )
    finally:
        if client is not None:
            try:
                client.close()
            except LemonMCPError:
                pass


def check_servers(
    entries: Sequence[Entry],
    options: Mapping[str, Any],
    error_text: Callable[[LemonMCPError], str],
    closed_wait: float = 2.0,
) -> List[ServerStatus]:
    """Connect every entry in parallel and return their states, in the
    entries' order. ``options`` are the Client keyword options (timeouts);
    each open is bounded by them, so this returns."""
    results: List[Optional[ServerStatus]] = [None] * len(entries)

    def run(i: int, name: str, transport: Mapping[str, Any]) -> None:
        try:
            results[i] = _probe(name, transport, options, error_text, closed_wait)
        except Exception as exc:  # a bug here must not hide the other servers
            results[i] = ServerStatus(name=name, state="failed", error=f"{type(exc).__name__}: {exc}")

    threads: List[threading.Thread] = []
    for i, (name, transport, invalid) in enumerate(entries):
        if transport is None:
            results[i] = ServerStatus(name=name, state="invalid", error=invalid or "invalid entry")
            continue
        t = threading.Thread(target=run, args=(i, name, transport), name=f"lemonmcp-servers-{name}", daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    return [r if r is not None else ServerStatus(name=e[0], state="failed", error="not checked") for r, e in zip(results, entries)]
