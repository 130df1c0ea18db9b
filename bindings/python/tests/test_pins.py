"""Pinned definitions through lemonmcp.Host and AsyncHost: the attacker
cases of tests/fixtures/rugpull/cases.json (the table every binding runs)
against the rugpull fixture, which changes what it offers on SIGUSR1."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import lemonmcp
from lemonmcp.aio import AsyncHost

from conftest import wait_until
from test_oauth import MemoryStore as AppStore

REPO = Path(__file__).resolve().parents[3]
CASES = json.loads((REPO / "tests" / "fixtures" / "rugpull" / "cases.json").read_text())


@pytest.fixture(scope="session")
def rugpull(fixture_path: str) -> str:
    path = os.path.join(os.path.dirname(fixture_path), "rugpull")
    assert os.access(path, os.X_OK), f"{path} is built by make fixtures"
    return path


class Rig:
    """One rugpull server's files: its definitions, its process id, the pin file."""

    def __init__(self, tmp: Path, binary: str, defs: Any) -> None:
        self.defs, self.pidfile, self.pins_path = tmp / "defs.json", tmp / "pid", tmp / "pins.json"
        self.binary = binary
        self.write(defs)

    def write(self, defs: Any) -> None:
        tmp = self.defs.with_suffix(".tmp")
        tmp.write_text(json.dumps(defs))
        os.replace(tmp, self.defs)

    def config(self, **pins: Any) -> Dict[str, Any]:
        return {
            "pins": {"store": {"type": "file", "path": str(self.pins_path)}, **pins},
            "mcpServers": {
                "r": {
                    "command": self.binary,
                    "args": ["-defs", str(self.defs)],
                    "env": {"RUGPULL_PIDFILE": str(self.pidfile)},
                    "timeouts": {"ready_ms": 5000, "close_grace_ms": 300},
                }
            },
        }

    def signal(self) -> None:
        os.kill(int(self.pidfile.read_text()), signal.SIGUSR1)


def _entry(pins: Dict[str, Any], kind: str, name: str) -> Dict[str, Any]:
    if kind == "instructions":
        entry: Dict[str, Any] = pins["instructions"]
        return entry
    result: Dict[str, Any] = pins[kind + "s"][name]
    return result


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_pins_attacker_case(case: Dict[str, Any], rugpull: str, tmp_path: Path) -> None:
    rig = Rig(tmp_path, rugpull, CASES["base"])
    events: List[Tuple[str, Dict[str, Any]]] = []
    host = lemonmcp.Host(rig.config(), on_event=lambda k, p: events.append((k, p))).__enter__()
    try:
        assert all(e["status"] == "approved" for e in host.pins()["r"]["tools"].values())
        assert host.call_tool("r__echo").text == "called echo"
        rig.write(case["defs"])
        if case["name"] == "instructions":
            host.close()  # instructions come with the next handshake
            events = []
            host = lemonmcp.Host(rig.config(), on_event=lambda k, p: events.append((k, p))).__enter__()
        else:
            rig.signal()
        for want in case["expect"]:
            assert wait_until(
                lambda: any(
                    k == "definition_changed" and p["server"] == "r" and p["kind"] == want["kind"] and p["name"] == want["name"] and p["status"] == want["status"]
                    for k, p in list(events)
                )
            ), want
        pins = host.pins()["r"]
        for want in case["expect"]:
            entry = _entry(pins, want["kind"], want["name"])
            assert entry["status"] == want["status"]
            assert entry.get("held", False) is (want["status"] != "removed")
        listed = {t.name for t in host.list_tools()}
        for tool in case["held_tools"]:
            assert "r__" + tool not in listed
            assert all(r.name != "r__" + tool for r in host.search_tools(tool))
            with pytest.raises(lemonmcp.PolicyDenied, match="is held"):
                host.call_tool("r__" + tool)
        for tool in case["callable_tools"]:
            assert host.call_tool("r__" + tool).text == "called " + tool
        for want in case["expect"]:
            if want["status"] == "removed":
                continue
            entry = _entry(pins, want["kind"], want["name"])
            name = None if want["kind"] == "instructions" else want["name"]
            with pytest.raises(lemonmcp.InvalidState):  # a stale approval
                host.approve("r", name, hash=entry.get("pinned_hash") or "sha256:" + "0" * 64, kind=want["kind"])
            host.approve("r", name, hash=entry["hash"], kind=want["kind"])
        for tool in case["held_tools"] + case["callable_tools"]:
            assert host.call_tool("r__" + tool).text == "called " + tool
    finally:
        host.close()


def test_async_host_pins(rugpull: str, tmp_path: Path) -> None:
    rig = Rig(tmp_path, rugpull, CASES["base"])
    changed = next(c for c in CASES["cases"] if c["name"] == "annotation_flip")

    async def run() -> None:
        async with AsyncHost(rig.config()) as host:
            assert (await host.pins())["r"]["tools"]["echo"]["status"] == "approved"
            rig.write(changed["defs"])
            rig.signal()
            for _ in range(500):
                pins = await host.pins()
                if pins["r"]["tools"]["echo"]["status"] == "changed":
                    break
                await asyncio.sleep(0.02)
            entry = pins["r"]["tools"]["echo"]
            assert entry["status"] == "changed"
            assert entry["pinned"]["annotations"] == {"destructiveHint": True}
            assert entry["offered"]["annotations"] == {"destructiveHint": False}
            with pytest.raises(lemonmcp.PolicyDenied):
                await host.call_tool("r__echo")
            await host.approve("r", "echo", hash=entry["hash"])
            assert (await host.call_tool("r__echo")).text == "called echo"

    asyncio.run(run())


def test_pins_without_configuration(fixture_path: str) -> None:
    with lemonmcp.Host({"mcpServers": {"a": {"command": fixture_path}}}) as host:
        with pytest.raises(lemonmcp.InvalidState, match="no \"pins\""):
            host.pins()
        with pytest.raises(lemonmcp.InvalidArgument, match="approval.name: is required"):
            host.approve("a", None, hash="sha256:0")  # a tool needs its name: the library says so
        with pytest.raises(lemonmcp.InvalidArgument, match="approval.kind"):
            host.approve("a", "x", hash="sha256:0", kind="widget")
        with pytest.raises(TypeError):
            host.approve("a", 3, hash="sha256:0")  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_cli_pins_and_approve(case: Dict[str, Any], rugpull: str, tmp_path: Path) -> None:
    """The same table through the command line: each run is a new host on
    the same pin file, so a change shows in the next run."""
    from cli_run import run_cli

    rig = Rig(tmp_path, rugpull, CASES["base"])
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config()))
    cli = ["--config", str(config)]
    r = run_cli(cli + ["pins"])
    assert r.returncode == 0, r.stderr
    assert "nothing is held" in r.stderr  # pinned on first use

    rig.write(case["defs"])
    r = run_cli(cli + ["pins"])
    assert r.returncode == 0, r.stderr
    table = r.stdout
    for want in case["expect"]:
        row = [line.split() for line in table.splitlines() if line.split()[:2] == ["r", want["kind"]]]
        assert any(want["status"] in cells for cells in row), (want, table)
    assert "\x1b" not in table and "\U000e0069" not in table, "no hidden character reaches the terminal"
    if any(w["status"] == "changed" for w in case["expect"]):
        assert "(pinned)" in table and "(offered now)" in table
        changed = [line for line in table.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        assert changed, table
    r = run_cli(cli + ["--json", "tools"])
    listed = {t["name"] for t in json.loads(r.stdout)["tools"]}
    for tool in case["held_tools"]:
        assert "r__" + tool not in listed
    for tool in case["callable_tools"]:
        assert "r__" + tool in listed

    r = run_cli(cli + ["approve", "r", "no_such_definition", "--yes"])
    assert r.returncode == 7, r.stderr
    r = run_cli(cli + ["approve", "r", "--yes"])
    assert r.returncode == 0, r.stderr
    assert "approved" in r.stdout
    r = run_cli(cli + ["pins"])
    assert "nothing is held" in r.stderr, r.stdout
    r = run_cli(cli + ["--json", "tools"])
    listed = {t["name"] for t in json.loads(r.stdout)["tools"]}
    for tool in case["held_tools"] + case["callable_tools"]:
        assert "r__" + tool in listed


def _app_config(rig: Rig) -> Dict[str, Any]:
    config = rig.config()
    config["pins"] = {"store": {"type": "app"}}
    return config


def test_pins_app_store_across_runs(rugpull: str, tmp_path: Path) -> None:
    rig = Rig(tmp_path, rugpull, CASES["base"])
    store = AppStore()
    with lemonmcp.Host(_app_config(rig), store=store) as host:
        assert all(e["status"] == "approved" for e in host.pins()["r"]["tools"].values())
        assert host.call_tool("r__echo").text == "called echo"
    assert store.saves and all(c == "pins" for c, _ in store.docs)
    assert not rig.pins_path.exists()  # kept by the application, not in a file

    # The second run reads what the first saved: a changed definition is held.
    changed = next(c for c in CASES["cases"] if c["name"] == "description")
    rig.write(changed["defs"])
    loads_before = len(store.loads)
    with lemonmcp.Host(_app_config(rig), store=(store.load, store.save)) as host:
        assert len(store.loads) > loads_before
        entry = host.pins()["r"]["tools"]["echo"]
        assert entry["status"] == "changed"
        with pytest.raises(lemonmcp.PolicyDenied, match="held"):
            host.call_tool("r__echo")
        host.approve("r", "echo", hash=entry["hash"])
        assert entry["hash"] in json.dumps([d for d, _v in store.docs.values()])  # the approval went to the app
        assert host.call_tool("r__echo").text == "called echo"


def test_async_host_pins_app_store(rugpull: str, tmp_path: Path) -> None:
    rig = Rig(tmp_path, rugpull, CASES["base"])
    store = AppStore()

    async def load(collection: str, key: str) -> Any:  # an application's store may be asynchronous
        return store.load(collection, key)

    async def save(collection: str, key: str, expected: int, document: Dict[str, Any]) -> Any:
        return store.save(collection, key, expected, document)

    async def run(expect: str) -> None:
        async with AsyncHost(_app_config(rig), store=(load, save)) as host:
            assert (await host.pins())["r"]["tools"]["echo"]["status"] == expect

    asyncio.run(run("approved"))
    assert store.saves
    rig.write(next(c for c in CASES["cases"] if c["name"] == "annotation_flip")["defs"])
    asyncio.run(run("changed"))


@pytest.mark.parametrize(
    "config, options, error, message",
    [
        ({}, {"store": object()}, lemonmcp.InvalidArgument, "store: expected an object with load"),
        ({}, {"pin_store": AppStore()}, TypeError, "pin_store= is retired"),
        ({"pins": {"store": "/tmp/pins.json"}}, {}, lemonmcp.InvalidArgument, "a path is retired"),
        ({"pins": {"store": "app"}}, {}, lemonmcp.InvalidArgument, '"app" is retired'),
    ],
)
def test_pin_store_bad_input(config: Dict[str, Any], options: Dict[str, Any], error: Any, message: str) -> None:
    with pytest.raises(error, match=message):
        lemonmcp.Host({**config, "mcpServers": {}}, **options)


def test_pins_app_store_failure_holds(rugpull: str, tmp_path: Path) -> None:
    rig = Rig(tmp_path, rugpull, CASES["base"])

    def load(collection: str, key: str) -> Any:
        raise lemonmcp.LemonMCPError("the database is down")

    with lemonmcp.Host(_app_config(rig), store=(load, lambda *args: 1)) as host:
        pins = host.pins()["r"]
        assert "the application refused store_load" in pins.get("error", "")
        with pytest.raises(lemonmcp.PolicyDenied):
            host.call_tool("r__echo")


#: Fresh hosts each first-use test starts: the defect (a use that went out
#: before the server's pin verdict) showed in most starts, never in all.
STARTS = 100
#: Fresh command-line processes the command line's first-use test starts:
#: each is a whole Python and library start (about 0.15 s of CPU, 100 of
#: them 15 s, the longest test of a loaded make test). With the defect in
#: most starts, 16 miss it with a chance under 1 in 65,000; the 100 hosts
#: above look for the race itself.
CLI_STARTS = 16


def _changed_while_off(rugpull: str, tmp_path: Path, echo: str = "echo") -> Rig:
    """A rig whose tools were pinned by one host, then echo's description
    changed while no host ran (echo: the tool's name)."""

    def named(defs: Any) -> Any:
        defs = json.loads(json.dumps(defs))
        for t in defs["tools"]:
            t["name"] = echo if t["name"] == "echo" else t["name"]
        return defs

    rig = Rig(tmp_path, rugpull, named(CASES["base"]))
    with lemonmcp.Host(rig.config()) as host:
        assert all(e["status"] == "approved" for e in host.pins()["r"]["tools"].values())
    rig.write(named(next(c for c in CASES["cases"] if c["name"] == "description")["defs"]))
    return rig


def _held_call(host: lemonmcp.Host) -> str:
    try:
        host.call_tool("r__echo", {"text": "hi"})
    except lemonmcp.PolicyDenied as exc:
        want = {"server": "r", "kind": "tool", "name": "echo", "status": "changed"}
        if exc.held != want:
            return f"held is {exc.held!r}"
        if "Host.approve('r', 'echo'" not in str(exc) or "lmcp_" in str(exc):
            return f"the message names no Python way out: {exc}"
        return ""
    return "the held tool was called"


def _not_listed(host: lemonmcp.Host) -> str:
    names = {t.name for t in host.list_tools()}
    return "" if "r__add" in names and "r__echo" not in names else f"listed {sorted(names)}"


def _not_found(host: lemonmcp.Host) -> str:
    hits = [r.name for r in host.search_tools("echoes text")]
    return "" if "r__echo" not in hits else f"found {hits}"


def _not_loaded(host: lemonmcp.Host) -> str:
    text = host.call_tool("search_tools", {"query": "echoes text", "limit": 10}).text
    return "" if "r__echo" not in text else f"search_tools offered {text}"


def test_pins_held_from_the_first_use(rugpull: str, tmp_path: Path) -> None:
    """A tool changed while no host ran is held from the first use of each
    of STARTS fresh hosts: a call right after the start (its own exit
    from the pins: PolicyDenied with .held), and, over as many starts, a
    lazy server's first call, a list, a search and deferred loading."""
    from concurrent.futures import ThreadPoolExecutor

    rig = _changed_while_off(rugpull, tmp_path)
    lazy = rig.config()
    lazy["mcpServers"]["r"]["start"] = "lazy"
    deferred = {**rig.config(), "deferred_tools": {"always_loaded": ["r__echo"]}}
    others = [(lazy, _held_call), (rig.config(), _not_listed), (rig.config(), _not_found), (deferred, _not_loaded)]
    uses = [(rig.config(), _held_call)] * STARTS + [others[i % len(others)] for i in range(STARTS)]

    def one(use: Tuple[Dict[str, Any], Any]) -> str:
        config, check = use
        with lemonmcp.Host(config) as host:
            return str(check(host))

    with ThreadPoolExecutor(max_workers=8) as pool:
        failures = [f for f in pool.map(one, uses) if f]
    assert not failures, failures[:5]


def test_cli_held_from_the_first_call(rugpull: str, tmp_path: Path) -> None:
    """The command line, CLI_STARTS times: `call r__echo` on a tool changed
    while no host ran exits with the held status (8), never calls it, and
    says how to review and approve it in the command line's words."""
    from concurrent.futures import ThreadPoolExecutor

    from cli_run import run_cli

    rig = _changed_while_off(rugpull, tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config()))

    def one(_: int) -> str:
        r = run_cli(["--config", str(config), "call", "r__echo", "text=hi"])
        if r.returncode != 8 or "called echo" in r.stdout:
            return f"exit {r.returncode}: {r.stdout.strip()} {r.stderr.strip()}"
        if "lemonmcp --config FILE approve r echo --hash" not in r.stderr or "Host." in r.stderr:
            return f"stderr: {r.stderr.strip()}"
        return ""

    with ThreadPoolExecutor(max_workers=8) as pool:  # each run mostly waits
        failures = [f for f in pool.map(one, range(CLI_STARTS)) if f]
    assert not failures, failures[:5]


@pytest.mark.parametrize("echo, exposed", [("echo", "r__echo"), ("echo", "echo"), ("echo it", "r__echo_it")])
def test_cli_held_by_the_name_the_host_exposes(rugpull: str, tmp_path: Path, echo: str, exposed: str) -> None:
    """`call` on a held tool, by the name the host exposes (a tool name the
    host sanitises included) or by the server's own name, exits with the
    held status: whether it is held comes from the library's route, not
    from rebuilding server__name."""
    from cli_run import run_cli

    rig = _changed_while_off(rugpull, tmp_path, echo)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config()))
    r = run_cli(["--config", str(config), "call", exposed, "text=hi"])
    assert r.returncode == 8 and "called echo" not in r.stdout, (r.stdout, r.stderr)
    assert "is held" in r.stderr and " approve " in r.stderr, r.stderr


@pytest.mark.parametrize("called", ["r__echo_it", "r__echo it"])
def test_held_by_the_name_the_host_exposes(rugpull: str, tmp_path: Path, called: str) -> None:
    """A held tool whose own name the host sanitises ("echo it" is
    r__echo_it) is refused by the exposed name before any list as by its
    own name, with .held naming the server's tool; its route names it too."""
    rig = _changed_while_off(rugpull, tmp_path, "echo it")
    with lemonmcp.Host(rig.config()) as host:
        with pytest.raises(lemonmcp.PolicyDenied) as exc:
            host.call_tool(called, {"text": "hi"})
        assert exc.value.held == {"server": "r", "kind": "tool", "name": "echo it", "status": "changed"}
        assert host.tool_route("r__echo_it") == ("r", "echo it")


def test_cli_server_goes_through_the_host(rugpull: str, tmp_path: Path) -> None:
    """`--config F --server NAME` is the host running that server alone:
    a tampered tool is neither listed nor called (its own exit status),
    and a command that would talk to the server alone is refused."""
    from cli_run import run_cli

    rig = _changed_while_off(rugpull, tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config()))
    cli = ["--config", str(config), "--server", "r"]
    r = run_cli(cli + ["--json", "tools"])
    assert r.returncode == 0, r.stderr
    assert {t["name"] for t in json.loads(r.stdout)["tools"]} == {"add"}
    r = run_cli(cli + ["call", "echo", "text=hi"])
    assert r.returncode == 8 and "called echo" not in r.stdout, (r.stdout, r.stderr)
    assert "is held" in r.stderr
    r = run_cli(cli + ["call", "add"])
    assert r.returncode == 0 and "called add" in r.stdout, r.stderr
    r = run_cli(cli + ["prompts"])
    assert r.returncode == 2, r.stderr
    assert "pins its servers' definitions" in r.stderr and "go around" in r.stderr


def test_cli_approve_what_was_shown(rugpull: str, tmp_path: Path) -> None:
    """approve takes the hash `pins` printed and refuses one the server no
    longer offers; without --hash it asks on a terminal and refuses off
    one; --yes approves what is offered now."""
    from cli_run import run_cli

    rig = _changed_while_off(rugpull, tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config()))
    cli = ["--config", str(config)]
    pins = json.loads(run_cli(cli + ["pins", "--json"]).stdout)["r"]["tools"]["echo"]
    r = run_cli(cli + ["approve", "r", "echo"])
    assert r.returncode == 2 and "not on a terminal" in r.stderr, r.stderr
    r = run_cli(cli + ["approve", "r", "echo", "--hash", pins["pinned_hash"]])
    assert r.returncode == 8 and "is not offered with the hash" in r.stderr, r.stderr
    # The server changes again after `pins` showed it: that hash is refused.
    changed_again = json.loads(json.dumps(next(c for c in CASES["cases"] if c["name"] == "description")["defs"]))
    changed_again["tools"][0]["description"] += " And more."
    rig.write(changed_again)
    r = run_cli(cli + ["approve", "r", "echo", "--hash", pins["hash"]])
    assert r.returncode == 8, r.stderr
    assert run_cli(cli + ["call", "r__echo"]).returncode == 8
    now = json.loads(run_cli(cli + ["pins", "--json"]).stdout)["r"]["tools"]["echo"]["hash"]
    r = run_cli(cli + ["approve", "r", "echo", "--hash", now])
    assert r.returncode == 0, r.stderr
    assert "called echo" in run_cli(cli + ["call", "r__echo"]).stdout


def test_cli_approve_asks_on_a_terminal(rugpull: str, tmp_path: Path) -> None:
    from cli_run import PtyRun

    rig = _changed_while_off(rugpull, tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config()))
    for answer, then in (("n", "nothing approved"), ("y", "approved tool")):
        run = PtyRun(["--config", str(config), "approve", "r", "echo"])
        shown = run.expect("[y/N] ")
        assert "(offered now)" in shown and "approve the tool" in shown, shown
        run.send(answer)
        run.expect(then)
        assert run.finish() == 0


def test_cli_tools_all_held(rugpull: str, tmp_path: Path) -> None:
    """`tools` when every tool is held says so (and exits 8), instead of
    "no server has tools"."""
    from cli_run import run_cli

    rig = Rig(tmp_path, rugpull, CASES["base"])
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config(first_use="hold")))
    r = run_cli(["--config", str(config), "tools"])
    assert r.returncode == 8, (r.stdout, r.stderr)
    assert "every tool is held by the host's pins" in r.stderr and "no server has tools" not in r.stderr


def test_approval_in_another_process_is_honoured_without_a_restart(rugpull: str, tmp_path: Path) -> None:
    """A fleet of one store: while this process's host runs and holds a
    changed tool, `lemonmcp approve` in another process approves it, and
    the running host honours the approval with no restart and no signal
    from the server (it re-reads the store's pins)."""
    from cli_run import run_cli

    rig = _changed_while_off(rugpull, tmp_path)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(rig.config()))
    with lemonmcp.Host(rig.config()) as host:
        assert _held_call(host) == ""
        offered = host.pins()["r"]["tools"]["echo"]["hash"]
        r = run_cli(["--config", str(config), "approve", "r", "echo", "--hash", offered])
        assert r.returncode == 0, r.stderr

        def honoured() -> bool:
            try:
                return "called echo" in host.call_tool("r__echo", {"text": "hi"}).text
            except lemonmcp.PolicyDenied:
                return False

        assert wait_until(honoured, timeout=10.0), "the running host never honoured the other process's approval"
        assert host.pins()["r"]["tools"]["echo"]["status"] == "approved"
        assert "r__echo" in {t.name for t in host.list_tools()}
