"""A server that cannot start: it says why on stderr and exits 1, the way a
server missing its credentials does."""

import sys

sys.stderr.write("starting example server v1\n")
sys.stderr.write("error: missing API key (set EXAMPLE_API_KEY)\n")
sys.stderr.flush()
sys.exit(1)
