#!/usr/bin/env python3
"""Runs the `make test` suites side by side and sums their counts.

    runsuites.py --make make --results build/test-results --jobs 3 SUITE...

1. Shared prerequisites first, once. The make database (`make -pq`) gives
   every rule's prerequisites; a target in the prerequisite closure of two
   or more suites (the library, the fixtures, the peers' installs,
   python-dev, ...) is built by one `make -k -j` before any suite that
   needs one of them starts (suites that need none run meanwhile), so no
   two suites ever build the same thing at the same time. A suite
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

If the shared prerequisites fail, the suites run one at a time, each
building its own again (without `-o`), so the failure shows in the log of
every suite that needed them.
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

    # 1. Shared prerequisites, while the suites that need none of them run.
    t0 = time.monotonic()
    deps = rules(make)
    shared = shared_prereqs(args.suites, deps)
    independent = {s.name for s in suites if not closure(s.name, deps) & set(shared)}
    done_flags: List[str] = []
    pre: Optional[Suite] = None
    if shared:
        print(f"=== shared prerequisites: {' '.join(os.path.relpath(t) if t.startswith('/') else t for t in shared)}",
              flush=True)
        pre = Suite(0, "prerequisites", results)
        pre.log = results / "prerequisites.out"  # not a .log: summary.py counts suites only
        with open(pre.log, "wb") as out:
            pre.proc = subprocess.Popen(make + ["--no-print-directory", "-k", f"-j{jobs}"] + shared,
                                        stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        pre.start = time.monotonic()
        running[pre.proc.pid] = pre

    # 2. The suites, longest first; until the shared prerequisites are
    # built, only those that need none of them.
    last = read_times(args.times)
    hints = read_times(args.hints)
    queue = sorted(suites, key=lambda s: -last.get(s.name, hints.get(s.name, float("inf"))))
    failed: List[str] = []
    walls: Dict[str, float] = {}
    while queue or running:
        while len(running) < jobs:
            ready = [s for s in queue if pre is None or s.name in independent]
            if not ready:
                break
            s = ready[0]
            queue.remove(s)
            with open(s.log, "wb") as out:
                s.proc = subprocess.Popen(make + ["--no-print-directory"] + done_flags + [s.name],
                                          stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
            s.start = time.monotonic()
            running[s.proc.pid] = s
            print(f"=== {s.name} started", flush=True)
        pid, status, usage = os.wait4(-1, 0)
        s = running.pop(pid, None)
        if s is None:
            continue
        wall = time.monotonic() - s.start
        cpu = usage.ru_utime + usage.ru_stime
        rc = os.waitstatus_to_exitcode(status)
        rc = rc if rc >= 0 else 128 - rc
        if s is pre:
            sys.stdout.write(pre.log.read_text(errors="replace"))
            if rc == 0:
                done_flags = [f for t in shared for f in ("-o", t)]
                print(f"=== shared prerequisites built in {wall:.0f}s (cpu {cpu:.0f}s)", flush=True)
            else:
                # Which of them failed is in the output above; each suite now
                # builds its own, so one at a time, never two at once.
                jobs = 1
                print(f"=== shared prerequisites FAILED (exit {rc}); the suites run one at a time, "
                      "each building its own", flush=True)
            pre = None
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
