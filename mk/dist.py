#!/usr/bin/env python3
"""Packaging steps of `make dist` (mk/dist.mk), one subcommand each.

    wheel           the Python package from a copy of the tree, with a given
                    library and helper, retagged manylinux_2_17 (wheel tags)
    sdist           the Python sdist (it carries the Go sources)
    c-archive       lib/, libexec/, include/, lib/pkgconfig/, LICENSE for C/C++
    nif-archive     the Elixir NIF, its library and the sandbox helper
    checksums       sha256sum-format lines for the given files
    elixir-package  the Elixir package's files (Hex's file set), its header
                    (the version) and the NIF checksum file
    check           every binary's glibc floor (objdump -T), auditwheel show
                    for every wheel, one version everywhere, sizes
    sizes           each library's and artefact's size, and the largest parts
                    of the library (go tool nm -size)

Archives are reproducible: sorted members, owner root, every mtime
SOURCE_DATE_EPOCH, gzip without a timestamp.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from typing import Dict, Iterable, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH") or 0)
WHEEL_LIMIT = 10 * 1000 * 1000  # bytes, compressed
ELF_MAGIC = b"\x7fELF"


def die(msg: str) -> None:
    print(f"dist: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd: List[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if proc.returncode != 0:
        die(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{proc.stdout}")
    return proc


# --- archives ---------------------------------------------------------------

# A member: (name in the archive, bytes or None for a directory, mode, symlink target)
Member = Tuple[str, bytes, int, str]


def write_targz(out: str, members: List[Member]) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode, link in sorted(members):
            info = tarfile.TarInfo(name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = EPOCH, 0, 0, "root", "root"
            info.mode = mode
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            elif data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    tmp = out + ".tmp"
    with open(tmp, "wb") as raw:
        # Level 6: a third of level 9's CPU for archives 0.6% larger (the
        # library is most of every archive, and it is packed six times).
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
            gz.write(buf.getvalue())
    os.replace(tmp, out)


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def file_member(name: str, path: str) -> Member:
    return (name, read(path), 0o755 if os.access(path, os.X_OK) else 0o644, "")


def dirs_of(members: List[Member]) -> List[Member]:
    seen = set()
    for name, _, _, _ in members:
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            seen.add("/".join(parts[:i]))
    return [(d, None, 0o755, "") for d in sorted(seen)]  # type: ignore[misc]


def cmd_c_archive(a: argparse.Namespace) -> None:
    top = os.path.basename(a.out)[: -len(".tar.gz")]
    soname = os.path.basename(a.lib)
    with open(os.path.join(ROOT, "mk", "lemonmcp.pc.in")) as f:
        # Relocatable: the prefix is wherever the archive is unpacked, and
        # the rpath lets a host run without LD_LIBRARY_PATH.
        pc = (
            f.read()
            .replace("@PREFIX@", "${pcfiledir}/../..")
            .replace("@VERSION@", a.version)
            .replace("@RPATH@", "-Wl,-rpath,${libdir} ")
        )
    members = [
        file_member(f"{top}/lib/{soname}", a.lib),
        (f"{top}/lib/liblemonmcp.so", b"", 0o777, soname),
        (f"{top}/lib/pkgconfig/lemonmcp.pc", pc.encode(), 0o644, ""),
        file_member(f"{top}/libexec/lemonmcp-sandbox", a.helper),
        file_member(f"{top}/include/lemonmcp.h", os.path.join(ROOT, "include", "lemonmcp.h")),
        file_member(f"{top}/include/lemonmcp.hpp", os.path.join(ROOT, "include", "lemonmcp.hpp")),
        file_member(f"{top}/LICENSE", os.path.join(ROOT, "LICENSE")),
    ]
    write_targz(a.out, dirs_of(members) + members)


NIF_FILES = ("lmcp_nif.so", "lemonmcp-sandbox")


def cmd_nif_archive(a: argparse.Namespace) -> None:
    names = list(NIF_FILES) + [f"liblemonmcp.so.{a.abi}"]
    members = []
    for n in names:
        p = os.path.join(a.nif_dir, n)
        if not os.path.isfile(p):
            die(f"nif-archive: {p} is missing")
        members.append(file_member(n, p))
    write_targz(a.out, members)


def sha256(path: str) -> str:
    return hashlib.sha256(read(path)).hexdigest()


def cmd_checksums(a: argparse.Namespace) -> None:
    lines = "".join(f"{sha256(p)}  {os.path.basename(p)}\n" for p in sorted(a.files))
    with open(a.out + ".tmp", "w") as f:
        f.write(lines)
    os.replace(a.out + ".tmp", a.out)


def cmd_elixir_package(a: argparse.Namespace) -> None:
    top = os.path.basename(a.out)[: -len(".tar.gz")]
    files = subprocess.run(["git", "ls-files", "-z", "."], cwd=a.src, stdout=subprocess.PIPE, check=True).stdout
    wanted = ("lib/", "c_src/", "mix.exs", ".formatter.exs", "README.md")
    members = [
        file_member(f"{top}/{rel}", os.path.join(a.src, rel))
        for rel in files.decode().split("\0")
        if rel.startswith(wanted) and os.path.isfile(os.path.join(a.src, rel))
    ]
    members.append(file_member(f"{top}/include/lemonmcp.h", a.header))
    members.append(file_member(f"{top}/{os.path.basename(a.sums)}", a.sums))
    write_targz(a.out, dirs_of(members) + members)


# --- Python -----------------------------------------------------------------


def cmd_wheel(a: argparse.Namespace) -> None:
    pkg = os.path.join(a.tree, "bindings", "python")
    for d in ("build", "lemonmcp.egg-info"):
        shutil.rmtree(os.path.join(pkg, d), ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LEMONMCP_LIBRARY=a.lib)
        run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
             "--no-build-isolation", "-w", tmp, "."], cwd=pkg, env=env)
        built = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        if len(built) != 1:
            die(f"wheel: pip wheel left {built}")
        run([sys.executable, "-m", "wheel", "tags", "--remove", "--platform-tag", a.tag, os.path.join(tmp, built[0])])
        # wheel tags sorts the platform tags; the name lists them as
        # auditwheel does (the set is what counts, and the same).
        tagged = [f for f in os.listdir(tmp) if f.endswith(".whl")]
        want = os.path.basename(a.out)
        if len(tagged) != 1 or tag_set(tagged[0]) != tag_set(want):
            die(f"wheel: made {tagged}, wanted {want}")
        names = zipfile.ZipFile(os.path.join(tmp, tagged[0])).namelist()
        for need in ("lemonmcp/liblemonmcp.so", "lemonmcp/lemonmcp-sandbox"):
            if need not in names:
                die(f"wheel: {tagged[0]} has no {need}")
        shutil.move(os.path.join(tmp, tagged[0]), a.out)
    shutil.rmtree(os.path.join(pkg, "build"), ignore_errors=True)


def tag_set(wheel_name: str) -> Tuple[str, ...]:
    *head, plat = wheel_name[: -len(".whl")].split("-")
    return tuple(head) + tuple(sorted(plat.split(".")))


def cmd_sdist(a: argparse.Namespace) -> None:
    pkg = os.path.join(a.tree, "bindings", "python")
    with tempfile.TemporaryDirectory() as tmp:
        run([sys.executable, "setup.py", "-q", "sdist", "-d", tmp], cwd=pkg)
        made = os.listdir(tmp)
        if made != [os.path.basename(a.out)]:
            die(f"sdist: made {made}, wanted {os.path.basename(a.out)}")
        shutil.move(os.path.join(tmp, made[0]), a.out)


# --- checks -----------------------------------------------------------------


def binaries(path: str) -> Iterable[Tuple[str, bytes]]:
    """Every ELF file inside an artefact: (its name there, its bytes)."""
    if path.endswith(".whl"):
        z = zipfile.ZipFile(path)
        for n in z.namelist():
            data = z.read(n)
            if data.startswith(ELF_MAGIC):
                yield n, data
    elif path.endswith(".tar.gz"):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.isfile():
                    data = t.extractfile(m).read()  # type: ignore[union-attr]
                    if data.startswith(ELF_MAGIC):
                        yield m.name, data


def objdump_for(data: bytes) -> str:
    machine = int.from_bytes(data[18:20], "little")
    if machine == 62:  # EM_X86_64
        return "objdump"
    if machine == 183:  # EM_AARCH64
        return "aarch64-linux-gnu-objdump"
    die(f"an ELF file for machine {machine}")
    return ""


def glibc_floor(data: bytes) -> Tuple[str, str]:
    """(highest GLIBC_ version the file needs, its objdump) from objdump -T."""
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        tool = objdump_for(data)
        if shutil.which(tool) is None:
            die(f"{tool} is missing (make qemu-setup installs binutils-aarch64-linux-gnu)")
        out = subprocess.run([tool, "-T", f.name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if out.returncode != 0:
        # A static executable has no dynamic symbol table: no glibc at all.
        if "not a dynamic object" in out.stdout:
            return "", "static"
        die(f"{tool} -T failed: {out.stdout}")
    versions = set(re.findall(r"GLIBC_(\d+(?:\.\d+)+)", out.stdout))
    if not versions:
        return "", tool
    return max(versions, key=lambda v: tuple(int(x) for x in v.split("."))), tool


def vtuple(v: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def human(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def cmd_check(a: argparse.Namespace) -> None:
    problems: List[str] = []
    arts = sorted(os.path.join(a.dist, f) for f in os.listdir(a.dist) if f.endswith((".whl", ".tar.gz")))
    print(f"dist: glibc floor {a.floor} (objdump -T), every binary of {len(arts)} artefacts:")
    for art in arts:
        for name, data in binaries(art):
            v, tool = glibc_floor(data)
            ok = not v or vtuple(v) <= vtuple(a.floor)
            print(f"  {'ok  ' if ok else 'OVER'} GLIBC_{v or '-':<6} {os.path.basename(art)}: {name}")
            if not ok:
                problems.append(f"{os.path.basename(art)}: {name} needs GLIBC_{v}, over {a.floor}")
    for art in arts:
        base = os.path.basename(art)
        if not base.startswith(f"lemonmcp-{a.version}") and not base.startswith(f"lemon_mcp-{a.version}") \
                and not base.startswith(f"lemon_mcp-nif-{a.version}"):
            problems.append(f"{base} is not named for version {a.version}")
        if not art.endswith(".whl"):
            continue
        m = re.search(r"-(manylinux_(\d+)_(\d+)_(\w+?))\.manylinux2014_\w+\.whl$", base)
        if not m:
            problems.append(f"{base}: no manylinux_2_17 tag")
            continue
        show = subprocess.run([sys.executable, "-m", "auditwheel", "show", art], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONPATH=a.pytools)).stdout
        flat = " ".join(show.split())
        if f'consistent with the following platform tag: "{m.group(1)}"' not in flat:
            problems.append(f"auditwheel show does not confirm {m.group(1)} for {base}:\n{show}")
        size = os.path.getsize(art)
        print(f"dist: {base}: {human(size)} compressed; auditwheel show: {m.group(1)}")
        if size >= WHEEL_LIMIT:
            problems.append(f"{base} is {human(size)}, over the {human(WHEEL_LIMIT)} limit")
    if problems:
        die("\n  ".join(["check failed:"] + problems))


def package_of(symbol: str) -> str:
    """The Go package a symbol belongs to (what precedes the first '.' after the last '/')."""
    if symbol.startswith(("go:", "type:", "runtime.")):
        return symbol.split(".")[0] if not symbol.startswith(("go:", "type:")) else symbol.split(":")[0] + ":"
    head, _, rest = symbol.rpartition("/")
    return (head + "/" if head else "") + rest.split(".")[0]


def cmd_sizes(a: argparse.Namespace) -> None:
    for lib in a.lib:
        arch = os.path.basename(os.path.dirname(lib))  # $(DIST_CACHE)/<arch>/liblemonmcp.so.N
        print(f"dist: {os.path.basename(lib)} ({arch}, stripped): {human(os.path.getsize(lib))}")
    for f in sorted(os.listdir(a.dist)):
        print(f"dist: {f}: {human(os.path.getsize(os.path.join(a.dist, f)))}")
    out = run([a.go, "tool", "nm", "-size", "-sort", "size", a.symbols]).stdout
    nobits = []  # the (start, end) of each section that takes no room in the file
    for line in run(["readelf", "-SW", a.symbols]).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\S+\s+NOBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            nobits.append((int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16)))
    by_pkg: Dict[str, int] = collections.Counter()
    top: List[str] = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[1].isdigit():
            continue
        addr, size, name = int(parts[0], 16), int(parts[1]), parts[3]
        if any(lo <= addr < hi for lo, hi in nobits):  # BSS: memory, not room in the file
            continue
        by_pkg[package_of(name)] += size
        if len(top) < 8:
            top.append(f"    {size:>9}  {name}")
    counted = sum(by_pkg.values())
    marks = {p[3]: int(p[0], 16) for p in (line.split() for line in out.splitlines())
             if len(p) == 4 and p[3] in ("runtime.pclntab", "runtime.epclntab")}
    pcln = marks.get("runtime.epclntab", 0) - marks.get("runtime.pclntab", 0)
    print(f"dist: largest parts of the library file (go tool nm -size -sort size, code and data without BSS,"
          f" summed by package; symbols hold {human(counted)}, Go's pc-line table {human(pcln)}):")
    for pkg, size in collections.Counter(by_pkg).most_common(12):
        print(f"    {size:>9}  {pkg}")
    print("dist: largest symbols:")
    print("\n".join(top))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("wheel")
    s.add_argument("--tree", required=True)
    s.add_argument("--lib", required=True)
    s.add_argument("--tag", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("sdist")
    s.add_argument("--tree", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("c-archive")
    for o in ("--lib", "--helper", "--version", "--out"):
        s.add_argument(o, required=True)
    s = sub.add_parser("nif-archive")
    for o in ("--nif-dir", "--abi", "--out"):
        s.add_argument(o, required=True)
    s = sub.add_parser("checksums")
    s.add_argument("--out", required=True)
    s.add_argument("files", nargs="+")
    s = sub.add_parser("elixir-package")
    for o in ("--src", "--header", "--sums", "--version", "--out"):
        s.add_argument(o, required=True)
    s = sub.add_parser("check")
    for o in ("--dist", "--version", "--floor", "--pytools"):
        s.add_argument(o, required=True)
    s = sub.add_parser("sizes")
    for o in ("--dist", "--version", "--symbols", "--go"):
        s.add_argument(o, required=True)
    s.add_argument("--lib", required=True, action="append", help="a stripped library (repeat for each architecture)")
    a = p.parse_args()
    globals()["cmd_" + a.cmd.replace("-", "_")](a)


if __name__ == "__main__":
    main()
