"""`python -m bench`: run every measurement and print one table."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

BENCHES = [
    "startup",
    "call_layer",
    "run_overhead",
    "floor",
    "scaling",
    "peers.run_peers",
    "optimizer_efficiency",
    "tool_wall_what_if",
    "rule_styles",
    "scale_out",
    "report_render",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"which benches (default: all of {BENCHES})")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for name in args.names or BENCHES:
        module = importlib.import_module(f"bench.{name}")
        rows.extend(module.run())
    table = Table("bench", "case", "value", "detail", title="agentopt benchmarks")
    for row in rows:
        table.add_row(row["bench"], row["case"], row["value"], row["detail"])
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
