"""``python -m lemonmcp`` and the ``lemonmcp`` script: the command-line client."""

import sys


def run() -> int:
    """The command line's entry point. Without a loadable library it says why
    in one line and returns 3 (the package was imported without one: see
    ``lemonmcp.LOAD_ERROR``)."""
    from . import LOAD_ERROR

    if LOAD_ERROR is not None:
        print(f"lemonmcp: {LOAD_ERROR}", file=sys.stderr)
        return 3
    from .cli import main

    return main()


if __name__ == "__main__":
    sys.exit(run())
