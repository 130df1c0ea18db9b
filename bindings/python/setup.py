"""Build glue the declarative pyproject.toml cannot express.

The package carries liblemonmcp.so inside it. At build time the library is
taken from the first of:

1. $LEMONMCP_LIBRARY, a path to a built liblemonmcp.so;
2. a library at least as new as every Go source: ../../build/liblemonmcp.so
   in a repository checkout (what `make lib` leaves there), or the one an
   earlier install of this tree built into build/golib-out/;
3. a fresh build with Go: from the repository (../../) in a checkout, or from
   the Go sources an sdist carries in golib/. Both run the repository's one
   recipe, mk/build-lib.sh. Without Go (1.26 or newer) on PATH the build
   stops with a message that says so.

So `pip install ./bindings/python` and `pip install -e ./bindings/python`
work on a fresh clone with no step before them, and `pip install` of the
sdist works anywhere Go is installed.

The version is LMCP_VERSION_STRING of the header (include/lemonmcp.h, or
golib/include/ in an sdist), the one place it is written; an installed
package carries it as lemonmcp/_version.txt.

The wheel is tagged for the platform, not for a Python ABI: the package is
pure Python loading a C library. `make python-wheel` gives it the manylinux
tag its glibc symbols allow (auditwheel).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import time

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GOLIB = os.path.join(HERE, "golib")  # the Go sources inside an sdist
LIB = "liblemonmcp.so"
# The sandbox helper the library runs stdio servers through (docs/sandbox.md),
# found by the library beside itself.
HELPER = "lemonmcp-sandbox"
# What the library is built from: the runtime Go module (tests/ is a module of
# its own, bindings/ holds no Go), and the header the cgo code includes.
GO_SKIP_DIRS = {"tests", "bindings", "build", "docs", ".git", ".cache", ".ci"}


def _go_root():
    """The Go module to build from: an sdist's golib/, or the checkout."""
    for root in (GOLIB, REPO):
        if os.path.isfile(os.path.join(root, "go.mod")) and os.path.isfile(
            os.path.join(root, "mk", "build-lib.sh")
        ):
            return root
    return None


def _go_sources(root):
    """Relative paths of every file the library's build reads under root."""
    out = ["go.mod", "go.sum", os.path.join("include", "lemonmcp.h"), os.path.join("mk", "build-lib.sh")]
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in GO_SKIP_DIRS and not d.startswith(".")]
        for name in filenames:
            if (name.endswith(".go") and not name.endswith("_test.go")) or (
                rel.split(os.sep)[0] == "capi" and name.endswith((".c", ".h"))
            ):
                out.append(os.path.normpath(os.path.join(rel, name)))
                if name.endswith(".go"):
                    out.extend(_embedded(root, rel, name))
    return sorted(set(out))


def _embedded(root, rel, name):
    """The files a Go source names in its //go:embed lines (they are part of
    the build as much as the source is)."""
    with open(os.path.join(root, rel, name), encoding="utf-8") as f:
        for line in f:
            if line.startswith("//go:embed "):
                for pattern in line.split()[1:]:
                    for match in glob.glob(os.path.join(root, rel, pattern)):
                        yield os.path.relpath(match, root)


def _version():
    """LMCP_VERSION_STRING of the header, the one version of the library and
    of this package: a checkout's include/lemonmcp.h, or the copy an sdist
    carries in golib/."""
    for root in (GOLIB, REPO):
        header = os.path.join(root, "include", "lemonmcp.h")
        if os.path.isfile(header):
            with open(header, encoding="utf-8") as f:
                m = re.search(r'^#define LMCP_VERSION_STRING "([^"]+)"$', f.read(), re.M)
            if m is None:
                raise SystemExit(f"lemonmcp: no LMCP_VERSION_STRING in {header}")
            return m.group(1)
    raise SystemExit("lemonmcp: no include/lemonmcp.h to read the version from (build from the repository or an sdist)")


def _newest_source(root):
    return max(os.path.getmtime(os.path.join(root, p)) for p in _go_sources(root))


def _say(message):
    """Tells the user what the build is doing. pip shows a build's output only
    with -v, and a Go build on cold caches takes minutes: the message also
    goes to the terminal when there is one, so an install never sits silent."""
    print(message, file=sys.stderr, flush=True)
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(message + "\n")
    except OSError:  # no controlling terminal (CI, a pipe): stderr is enough
        pass


def _build_with_go(root, out_dir):
    go = shutil.which(os.environ.get("GO", "go"))
    if go is None:
        raise SystemExit(
            "lemonmcp: building liblemonmcp.so needs Go 1.26 or newer on PATH (https://go.dev/dl/), "
            "or set LEMONMCP_LIBRARY to a built liblemonmcp.so"
        )
    if shutil.which("sh") is None or shutil.which(os.environ.get("CC", "cc")) is None:
        raise SystemExit("lemonmcp: building liblemonmcp.so needs a C compiler (cc) for cgo")
    out = os.path.join(out_dir, LIB)
    started = time.monotonic()
    _say(
        f"lemonmcp: building {LIB} from the Go sources with {go} and the C compiler "
        "(one to three minutes on cold caches; `pip install -v` shows the compiler's output; "
        "docs/install.md lists the prebuilt wheels)"
    )
    env = dict(os.environ, GO=go, CGO_ENABLED="1")
    proc = subprocess.run(["sh", os.path.join(root, "mk", "build-lib.sh"), root, out], env=env)
    if proc.returncode != 0 or not os.path.isfile(out):
        raise SystemExit(f"lemonmcp: `go build` of {LIB} failed (exit {proc.returncode}); see the output above")
    _say(f"lemonmcp: built {LIB} in {time.monotonic() - started:.0f} s; now {HELPER}, the sandbox helper")
    helper = os.path.join(out_dir, HELPER)
    proc = subprocess.run(
        [go, "build", "-trimpath", "-ldflags", "-s -w", "-o", helper, "./cmd/lemonmcp-sandbox"], cwd=root, env=env
    )
    if proc.returncode != 0 or not os.path.isfile(helper):
        raise SystemExit(f"lemonmcp: `go build` of {HELPER} failed (exit {proc.returncode}); see the output above")
    _say(f"lemonmcp: built {LIB} and {HELPER} in {time.monotonic() - started:.0f} s")
    return out


def _library(scratch_dir):
    """Path of the liblemonmcp.so to package (built into scratch_dir if need be)."""
    env_lib = os.environ.get("LEMONMCP_LIBRARY")
    if env_lib:
        if not os.path.isfile(env_lib):
            raise SystemExit(f"lemonmcp: LEMONMCP_LIBRARY names no file: {env_lib}")
        return os.path.abspath(env_lib)
    root = _go_root()
    if root is None:
        raise SystemExit(
            "lemonmcp: no liblemonmcp.so and no Go sources to build it from; "
            "build from the repository or an sdist, or set LEMONMCP_LIBRARY"
        )
    # A library at least as new as every source is reused: `make lib`'s in
    # a checkout, or the one an earlier install built (pip install, then -e).
    newest = _newest_source(root)
    candidates = [os.path.join(scratch_dir, LIB)]
    if root == REPO:
        candidates.insert(0, os.path.join(REPO, "build", LIB))
    for built in candidates:
        if os.path.isfile(built) and os.path.getmtime(built) >= newest:
            return built
    os.makedirs(scratch_dir, exist_ok=True)
    return _build_with_go(root, scratch_dir)


def _install_library(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.abspath(dst) != os.path.abspath(src):
        tmp = dst + ".tmp"
        shutil.copyfile(src, tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, dst)  # a running Python that mapped the old copy keeps it intact


class BuildPy(build_py):
    def run(self):
        super().run()
        src = _library(os.path.join(HERE, "build", "golib-out"))
        # An editable install imports lemonmcp/ from the source tree.
        pkg = os.path.join(HERE if getattr(self, "editable_mode", False) else self.build_lib, "lemonmcp")
        _install_library(src, os.path.join(pkg, LIB))
        # The helper built with the library (make lib, or _build_with_go);
        # without one the library still works, its servers unsandboxed.
        helper = os.path.join(os.path.dirname(src), HELPER)
        if os.path.isfile(helper):
            _install_library(helper, os.path.join(pkg, HELPER))
        # lemonmcp.__version__ of an installed package (an editable one
        # reads the checkout's header, so it never goes stale).
        if not getattr(self, "editable_mode", False):
            with open(os.path.join(pkg, "_version.txt"), "w", encoding="utf-8") as f:
                f.write(_version() + "\n")


class Sdist(sdist):
    """An sdist that can build the library: it carries the Go sources."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = _go_root()
        if root is None:
            raise SystemExit("lemonmcp: an sdist is made from the repository checkout or another sdist")
        for rel in _go_sources(root):
            dst = os.path.join(base_dir, "golib", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(root, rel), dst)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildPy, "sdist": Sdist}

try:
    try:
        from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
    except ImportError:
        from wheel.bdist_wheel import bdist_wheel as _bdist_wheel

    class BdistWheel(_bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:  # building an sdist without wheel installed
    pass

setup(version=_version(), cmdclass=cmdclass, distclass=BinaryDistribution)
