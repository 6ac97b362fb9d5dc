"""`agentopt view`: a small local web app over the runs, optimize jobs and matrix runs of
`.agentopt/` (served by `view_server` on 127.0.0.1, read-only)."""

from __future__ import annotations

import webbrowser
from typing import Annotated

import typer

from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.cli.view_server import allowed_hosts, make_server
from agentopt.core.errors import ConfigError
from agentopt.core.paths import STATE_DIR

__all__ = ["allowed_hosts", "make_server", "view_command"]


@handle_errors
def view_command(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0 = any free).")] = 8765,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
) -> None:
    """Serve runs, optimize jobs and matrices on http://127.0.0.1:PORT (local only, read-only).

    Sortable runs with a score-over-time chart, a run's tasks with filters and drill-down,
    compare 2–N runs, an optimize job with its Pareto chart and diffs; pages of a run or job in
    progress update themselves."""
    from agentopt.evaluators.stats import paired_bootstrap_ci

    state = STATE.cwd / STATE_DIR
    if not state.is_dir():
        raise ConfigError(
            f"nothing to show: no {STATE_DIR}/ in {STATE.cwd}", hint="run `agentopt eval run` first"
        )
    try:
        server = make_server(state, port, paired_ci=paired_bootstrap_ci)
    except OSError as exc:
        raise ConfigError.at("", "--port", f"cannot listen on 127.0.0.1:{port}: {exc}") from None
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    STATE.say(f"Serving {state} on {url}  (Ctrl-C stops)")
    if open_browser:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
