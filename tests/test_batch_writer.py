"""The writer thread behind the journal and the cache: order, batching, errors, close."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from agentopt.core.batch_writer import BatchWriter


def test_items_arrive_in_order_and_queue_up_into_batches_while_a_write_runs() -> None:
    batches: list[list[int]] = []
    gate = threading.Event()

    def write(batch: Sequence[int]) -> None:
        gate.wait(5)
        batches.append(list(batch))

    writer: BatchWriter[int] = BatchWriter(write, name="test-writer")
    writer.submit(0)
    for i in range(1, 100):
        writer.submit(i)
    assert writer.pending == 100
    gate.set()
    writer.flush()
    assert writer.pending == 0
    assert [i for b in batches for i in b] == list(range(100))
    assert len(batches) <= 3  # the items queued during the first write went out together
    writer.close()
    writer.close()  # idempotent


def test_a_failed_write_is_raised_to_the_next_caller_not_swallowed() -> None:
    def write(batch: Sequence[str]) -> None:
        if "bad" in batch:
            raise OSError("disk full")

    writer: BatchWriter[str] = BatchWriter(write, name="test-writer")
    writer.submit("bad")
    with pytest.raises(OSError, match="disk full"):
        writer.flush()
    writer.submit("good")
    writer.flush()
    writer.close()
    with pytest.raises(RuntimeError, match="closed"):
        writer.submit("late")


def test_close_writes_what_is_queued_and_ends_the_thread() -> None:
    seen: list[int] = []
    writer: BatchWriter[int] = BatchWriter(seen.extend, name="agentopt-test-close")
    for i in range(10):
        writer.submit(i)
    writer.close()
    assert seen == list(range(10))
    assert not any(t.name == "agentopt-test-close" for t in threading.enumerate())
