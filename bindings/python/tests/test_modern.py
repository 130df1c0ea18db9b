"""The 2026-07-28 era through the Python binding: a dual-era client
(protocol_mode "auto") against the fixture server, which speaks both eras."""

from __future__ import annotations

from typing import Callable

import pytest

import lemonmcp
from lemonmcp import Client

MakeClient = Callable[..., Client]


def test_features_list_the_modern_era() -> None:
    f = lemonmcp.features()
    assert "2026-07-28" in f["protocol_versions"]
    assert f["protocol_modes"] == ["legacy", "auto", "modern"]
    assert f["legacy"] == ["tasks", "tasks_receiver"], "2025-11-25 tasks, both sides"


@pytest.mark.parametrize("mode", ["auto", "modern"])
def test_modern_happy_path(make_client: MakeClient, mode: str) -> None:
    client = make_client(protocol_mode=mode)
    info = client.server_info
    assert info.raw["era"] == "modern"
    assert info.protocol_version == "2026-07-28"
    assert info.name == "lemon-fixture"
    assert "echo" in {t.name for t in client.list_tools()}
    assert client.call_tool("echo", {"text": "modern lemon"}).text == "modern lemon"
    with pytest.raises(lemonmcp.UnsupportedError) as exc:
        client.call("ping", {})
    assert "2026-07-28" in exc.value.message
