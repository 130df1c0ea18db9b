"""``python -m lemonmcp``: the command-line client."""

import sys

from .cli import main

sys.exit(main())
