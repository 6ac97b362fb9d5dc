"""The provenance table: each merged setting, its value and where it came from.

`eval run --dry-run` and `optimize --dry-run` print it with their plan; `--debug` prints it
to stderr (and to the debug log) before any run. Values and sources go through
`core.redaction`, so a secret in an environment variable never shows.
"""

from __future__ import annotations

import logging

from rich.markup import escape

from agentopt.cli.context import STATE
from agentopt.contracts.resolved_suite import ResolvedSuite
from agentopt.workflows.resolve_suite import provenance_rows

HEADER = "Settings (value, source):"
_LOG = logging.getLogger("agentopt.settings")


def provenance_lines(suite: ResolvedSuite) -> list[str]:
    """One aligned line per setting, secrets masked; a line never wraps, so it pastes."""
    rows = provenance_rows(suite)
    if not rows:
        return []
    name_w = max(len(r[0]) for r in rows)
    value_w = max(len(r[1]) for r in rows)
    return [f"  {n:<{name_w}}  {v:<{value_w}}  {w}" for n, v, w in rows]


def render_provenance(suite: ResolvedSuite, *, dry_run: bool) -> None:
    """Print the table for a dry run (stdout) or under --debug (stderr); log it always."""
    lines = provenance_lines(suite)
    if not lines:
        return
    for line in lines:
        _LOG.debug("setting %s", line.strip())
    if not (dry_run or STATE.debug):
        return
    out = STATE.err if (STATE.json_output or STATE.quiet or not dry_run) else STATE.console
    out.print(HEADER, soft_wrap=True)
    for line in lines:
        out.print(escape(line), soft_wrap=True, highlight=False)
