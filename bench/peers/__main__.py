"""`python -m bench.peers`: only the peer comparison, printed as the bench table."""

from __future__ import annotations

import sys

from bench.__main__ import main

if __name__ == "__main__":
    sys.exit(main(["peers.run_peers", *sys.argv[1:]]))
