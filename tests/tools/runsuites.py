#!/usr/bin/env python3
"""Runs the `make test` suites side by side and sums their counts.

    runsuites.py --make make --results build/test-results --jobs 3 SUITE...

1. Shared prerequisites first, once. The make database (`make -pq`) gives
   every rule's prerequisites; a target in the prerequisite closure of two
   or more suites (the library, the fixtures, the peers' installs,
   python-dev, ...) is built before any suite that needs it starts, so no
   two suites ever build the same thing at the same time. They are built in
   groups that share no target, one `make -k -j` each, side by side; a
   suite starts as soon as the groups it needs are built. A suite
   added to TEST_SUITES in mk/*.mk needs nothing more: its prerequisites are
   read from its rule.
2. The suites, up to --jobs at a time, each in its own `make` with the
   shared targets marked done (`-o`), its output in its own log
   (NN-suite.log, NN from the TEST_SUITES order), its exit status beside it
   (.status) and its wall and CPU seconds (.time). The longest suites
   start first: by the previous run's times (--times, build/test-times.txt),
   else by a reference run's (--hints, tests/tools/suite-times.txt, for a
   fresh clone); a suite timed by neither starts before all others. A suite's log is printed whole when
   it ends, so the output of two suites never interleaves.
3. tests/tools/summary.py sums the count lines: "N passed, N failed" is the
   last line, and the exit status is non-zero if any suite failed.

If a group fails, the suites that need it run one at a time, each building
it again (without `-o`), so the failure shows in the log of every suite
that needed it.
Interrupted (SIGINT, SIGTERM), it ends every running suite's process group.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional, Set

HERE = pathlib.Path(__file__).resolve().parent
RULE = re.compile(r"^([^\s#:=][^:=]*?)::?(?:\s+(.*))?$")


def rules(make: List[str]) -> Dict[str, List[str]]:
    """Every explicit rule's prerequisites, from make's printed database."""
    out = subprocess.run(make + ["-pq", "--no-print-directory"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    deps: Dict[str, List[str]] = {}
    files = out.split("\n# Files\n", 1)[-1].split("\n# files hash-table stats", 1)[0]
    for entry in files.split("\n\n"):
        lines = entry.strip("\n").split("\n")
        if "# Not a target:" in lines:
            continue
        # The rule's line, after any "# makefile (from ...)" comment and
        # target-specific variables ("t: VAR = value").
        for line in lines:
            m = RULE.match(line)
            if m and "=" not in line:
                deps[m.group(1)] = (m.group(2) or "").replace("|", " ").split()
                break
    return deps


def closure(target: str, deps: Dict[str, List[str]]) -> Set[str]:
    seen: Set[str] = set()
    todo = list(deps.get(target, []))
    while todo:
        t = todo.pop()
        if t not in seen:
            seen.add(t)
            todo += deps.get(t, [])
    return seen


def shared_prereqs(suites: List[str], deps: Dict[str, List[str]]) -> List[str]:
    """Targets two or more suites need, in the order make first names them.

    A target a suite needs that is itself a suite (test-c's check-symbols is
    not one, but a suite could name another) is left to that suite."""
    uses: Dict[str, int] = {}
    order: List[str] = []
    for s in suites:
        for t in sorted(closure(s, deps)):
            if t not in uses:
                order.append(t)
            uses[t] = uses.get(t, 0) + 1
    return [t for t in order if uses[t] > 1 and t not in suites and t in deps]


def read_times(path: Optional[str]) -> Dict[str, float]:
    """Lines "suite seconds" ('#' starts a comment); no file, no times."""
    times: Dict[str, float] = {}
    if path and os.path.exists(path):
        for line in open(path):
            parts = line.split("#", 1)[0].split()
            if len(parts) == 2:
                try:
                    times[parts[0]] = float(parts[1])
                except ValueError:
                    pass
    return times


def prereq_groups(shared: List[str], deps: Dict[str, List[str]]) -> List[Set[str]]:
    """The shared targets in groups closed under their prerequisites: no
    two groups have a target in common, so their builds never race."""
    parent = {t: t for t in shared}

    def root(t: str) -> str:
        while parent[t] != t:
            t = parent[t]
        return t

    for t in shared:
        for d in closure(t, deps):
            if d in parent:
                parent[root(d)] = root(t)
    groups: Dict[str, Set[str]] = {}
    for t in shared:
        groups.setdefault(root(t), set()).add(t)
    return list(groups.values())


class Suite:
    def __init__(self, index: int, name: str, results: pathlib.Path):
        self.name = name
        self.log = results / f"{index:02d}-{name}.log"
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.start = 0.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--make", default="make")
    ap.add_argument("--results", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--times", help="file keeping each suite's wall seconds from the last run")
    ap.add_argument("--hints", help="file of each suite's wall seconds in a reference run")
    ap.add_argument("suites", nargs="+")
    args = ap.parse_args()
    make = args.make.split()
    results = pathlib.Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    suites = [Suite(i + 1, s, results) for i, s in enumerate(args.suites)]
    jobs = max(1, args.jobs)

    running: Dict[int, Suite] = {}

    def stop(signum: int, _frame: object) -> None:
        # Runs in the main thread between two bytecodes: running is whole.
        for s in list(running.values()):
            try:
                os.killpg(s.proc.pid, signal.SIGTERM)  # type: ignore[union-attr]
            except ProcessLookupError:
                pass
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    # 1. Shared prerequisites, in groups that share nothing (the library and
    # what links it; the fixtures; the peers' installs; ...), each group one
    # make, all side by side.
    t0 = time.monotonic()
    deps = rules(make)
    shared = shared_prereqs(args.suites, deps)
    groups = prereq_groups(shared, deps)
    needs = {s.name: {i for i, g in enumerate(groups) if closure(s.name, deps) & g} for s in suites}
    if shared:
        print(f"=== shared prerequisites: {' '.join(os.path.relpath(t) if t.startswith('/') else t for t in shared)}",
              flush=True)
    pending: Dict[int, Suite] = {}  # group index -> its make, while it runs
    built: Set[int] = set()
    broken: Set[int] = set()
    for i, g in enumerate(groups):
        pre = Suite(0, f"prerequisites {i + 1}", results)
        pre.log = results / f"prerequisites-{i + 1}.out"  # not a .log: summary.py counts suites only
        with open(pre.log, "wb") as out:
            pre.proc = subprocess.Popen(make + ["--no-print-directory", "-k", f"-j{jobs}"] + [t for t in shared if t in g],
                                        stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        pre.start = time.monotonic()
        running[pre.proc.pid] = pre
        pending[i] = pre

    # 2. The suites, longest first, each once the groups it needs are built
    # (the shared builds take no slot: they mostly wait on npm and pip). A suite that
    # needs a group that failed waits until nothing else runs and builds
    # that group itself: the failure shows in its own log, and no two
    # suites build the same target at once.
    last = read_times(args.times)
    hints = read_times(args.hints)
    queue = sorted(suites, key=lambda s: -last.get(s.name, hints.get(s.name, float("inf"))))
    failed: List[str] = []
    walls: Dict[str, float] = {}

    def ready(s: Suite) -> bool:
        if needs[s.name] & set(pending):
            return False
        if needs[s.name] & broken:
            return not running
        return True

    while queue or running:
        while len(running) - len(pending) < jobs:
            now = [s for s in queue if ready(s)]
            if not now:
                break
            s = now[0]
            queue.remove(s)
            done = [f for i in needs[s.name] & built for t in groups[i] for f in ("-o", t)]
            with open(s.log, "wb") as out:
                s.proc = subprocess.Popen(make + ["--no-print-directory"] + done + [s.name],
                                          stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
            s.start = time.monotonic()
            running[s.proc.pid] = s
            print(f"=== {s.name} started", flush=True)
            if needs[s.name] & broken:
                break  # it runs alone
        pid, status, usage = os.wait4(-1, 0)
        s = running.pop(pid, None)
        if s is None:
            continue
        wall = time.monotonic() - s.start
        cpu = usage.ru_utime + usage.ru_stime
        rc = os.waitstatus_to_exitcode(status)
        rc = rc if rc >= 0 else 128 - rc
        group = next((i for i, p in pending.items() if p is s), None)
        if group is not None:
            del pending[group]
            sys.stdout.write(s.log.read_text(errors="replace"))
            names = " ".join(os.path.relpath(t) if t.startswith("/") else t for t in shared if t in groups[group])
            if rc == 0:
                built.add(group)
                print(f"=== shared prerequisites built in {wall:.0f}s (cpu {cpu:.0f}s): {names}", flush=True)
            else:
                broken.add(group)
                print(f"=== shared prerequisites FAILED (exit {rc}): {names}; the suites that need them "
                      "run one at a time, each building them itself", flush=True)
            continue
        walls[s.name] = wall
        s.log.with_suffix(".status").write_text(f"{rc}\n")
        s.log.with_suffix(".time").write_text(f"{wall:.1f} {usage.ru_utime:.1f} {usage.ru_stime:.1f}\n")
        print(f"=== {s.name}", flush=True)
        sys.stdout.write(s.log.read_text(errors="replace"))
        verdict = "passed" if rc == 0 else f"FAILED (exit {rc})"
        print(f"=== {s.name} {verdict} in {wall:.0f}s (cpu {cpu:.0f}s)", flush=True)
        if rc != 0:
            failed.append(s.name)

    if args.times:
        merged = dict(last, **walls)
        with open(args.times, "w") as f:
            for name, wall in sorted(merged.items()):
                f.write(f"{name} {wall:.1f}\n")
    print(f"=== all suites in {time.monotonic() - t0:.0f}s ({args.jobs} at a time)", flush=True)

    # 3. The sums.
    print("=== summary", flush=True)
    rc = subprocess.call([sys.executable, str(HERE / "summary.py"), str(results)])
    return 1 if failed or rc else 0


if __name__ == "__main__":
    sys.exit(main())
