"""The token meter behind the progress lines' tokens/s (issue 35 item 3): a phase's speed is
its own tokens over its own time, not an earlier phase's burst."""

from __future__ import annotations

from agentopt.models.call_progress import TokenMeter
from agentopt.reports.formatting import tokens_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_phase_rate_leaves_out_the_burst_before_it() -> None:
    clock = Clock()
    meter = TokenMeter(clock=clock)
    meter.add(300)  # an earlier phase's calls, answered whole
    clock.now += 0.5
    meter.add(200)
    start = meter.tokens
    for _ in range(20):  # then a slow model: 2 tokens a second
        clock.now += 0.5
        meter.add(1)
    assert meter.rate() > 20  # the layer's rate lately still holds the burst
    assert meter.rate(since=start) == 2.0
    assert tokens_text(meter, start) == "20 tokens at 2.0 tok/s"


def test_no_rate_before_a_second_of_tokens_and_no_text_before_a_token() -> None:
    clock = Clock()
    meter = TokenMeter(clock=clock)
    assert tokens_text(meter) == "" and tokens_text(None) == ""
    meter.add(3)
    clock.now += 0.4
    meter.add(3)
    assert meter.rate() == 0.0
    assert tokens_text(meter) == "6 tokens"


def test_a_stream_of_ticks_keeps_a_bounded_number_of_marks() -> None:
    """A tick a millisecond for 60 s (a fast run's calls): the meter holds about one mark per
    50 ms of its 30 s window, not one per tick, and still reads the stream's rate."""
    clock = Clock()
    meter = TokenMeter(clock=clock)
    for _ in range(60_000):
        clock.now += 0.001
        meter.add(5)
    assert len(meter._marks) < 700  # ~600 (one per 50 ms of 30 s), not 30,000
    assert 4_990 <= meter.rate() <= 5_010
