"""Children that a test stops with Ctrl-C or a hang-up get SIGINT and SIGHUP at their default
disposition, as a terminal gives them. A test session started in the background of a
non-interactive shell inherits SIGINT ignored, and one started under `nohup` inherits SIGHUP
ignored; agentopt then keeps them ignored (as Python, shells and `nohup` mean it to): the test
would measure how it was launched instead of agentopt."""

from __future__ import annotations

import signal


def default_stop_signals() -> None:
    """`preexec_fn` for Popen: only signal calls between fork and exec (no lock taken)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
