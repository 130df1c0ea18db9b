"""Build glue the declarative pyproject.toml cannot express.

The wheel carries liblemonmcp.so inside the package. At build time the
library is copied from $LEMONMCP_LIBRARY, else from ../../build/ (what
`make lib` produces), else the copy already in lemonmcp/ (what
`make python-dev` puts there) is used. The wheel is tagged for the platform,
not for a Python ABI: the package is pure Python loading a C library.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = "liblemonmcp.so"


def _find_library():
    for cand in (
        os.environ.get("LEMONMCP_LIBRARY"),
        os.path.join(HERE, "..", "..", "build", LIB),
        os.path.join(HERE, "lemonmcp", LIB),
    ):
        if cand and os.path.isfile(cand):
            return os.path.abspath(cand)
    raise SystemExit(
        f"lemonmcp: {LIB} not found; run `make lib` first or set LEMONMCP_LIBRARY"
    )


class BuildPy(build_py):
    def run(self):
        super().run()
        src = _find_library()
        dst = os.path.join(self.build_lib, "lemonmcp", LIB)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.abspath(dst) != src:
            shutil.copyfile(src, dst)
            os.chmod(dst, 0o755)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildPy}

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

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
