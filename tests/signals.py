"""Children that a test stops with Ctrl-C get SIGINT at its default disposition, as a terminal
gives it. A test session started in the background of a non-interactive shell inherits SIGINT
ignored, and agentopt then keeps it ignored (as Python and shells do): the test would measure
how it was launched instead of agentopt."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """`preexec_fn` for Popen: only a signal call between fork and exec (no lock taken)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
