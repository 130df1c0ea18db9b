"""Approvals of pinned definitions (lmcp_host_approve): the request
:meth:`lemonmcp.Host.approve` sends, checked before it leaves Python."""

import json
from typing import Optional

#: The kinds of definition the host pins (include/lemonmcp.h).
KINDS = ("tool", "prompt", "resource", "instructions")


def approval(server: str, name: Optional[str], hash: str, kind: str) -> bytes:  # noqa: A002 - the ABI's word
    """The JSON of one approval."""
    if not isinstance(server, str) or not server:
        raise TypeError("approve: server must be a non-empty str")
    if kind not in KINDS:
        raise ValueError(f"approve: kind must be one of {', '.join(KINDS)}")
    if not isinstance(hash, str) or not hash:
        raise TypeError("approve: hash must be the str pins() or a definition_changed event gave")
    doc = {"server": server, "kind": kind, "hash": hash}
    if kind != "instructions":
        if not isinstance(name, str):
            raise TypeError(f"approve: a {kind} needs its name (a resource its URI)")
        doc["name"] = name
    return json.dumps(doc).encode()
