"""Approvals of pinned definitions (lmcp_host_approve): the request
:meth:`lemonmcp.Host.approve` sends. The library knows the kinds of
definition and which need a name, and refuses the rest by name
(InvalidArgument); only the Python types are checked here."""

import json
from typing import Optional


def approval(server: str, name: Optional[str], hash: str, kind: str) -> bytes:  # noqa: A002 - the ABI's word
    """The JSON of one approval (name None: none, as for "instructions")."""
    for field, value in (("server", server), ("kind", kind), ("hash", hash)):
        if not isinstance(value, str):
            raise TypeError(f"approve: {field} must be a str")
    if name is not None and not isinstance(name, str):
        raise TypeError("approve: name must be a str (a resource's: its URI) or None")
    doc = {"server": server, "kind": kind, "hash": hash}
    if name is not None:
        doc["name"] = name
    return json.dumps(doc).encode()
