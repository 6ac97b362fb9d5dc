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


def test_a_lingering_writer_gathers_items_that_trickle_in_and_flush_cuts_the_wait() -> None:
    # Answers arriving one by one (200 ms latency, 64 at once) made a write and an fsync each;
    # with a linger they share one. A flush never waits for the linger.
    batches: list[list[int]] = []
    writer: BatchWriter[int] = BatchWriter(batches.append, name="test-linger", linger=30.0)
    for i in range(5):
        writer.submit(i)
        threading.Event().wait(0.01)  # one by one, 10 ms apart
    assert batches == []  # still gathering: the linger is 30 s
    done = threading.Event()
    threading.Thread(target=lambda: (writer.flush(), done.set())).start()
    assert done.wait(5), "flush waited for the linger"
    assert batches == [[0, 1, 2, 3, 4]]
    writer.submit(5)
    writer.close()  # close writes what is queued at once, too
    assert batches == [[0, 1, 2, 3, 4], [5]]


def test_a_full_batch_is_written_without_waiting_for_the_linger() -> None:
    from agentopt.core.batch_writer import MAX_BATCH

    written = threading.Event()
    sizes: list[int] = []

    def write(batch: Sequence[int]) -> None:
        sizes.append(len(batch))
        written.set()

    writer: BatchWriter[int] = BatchWriter(write, name="test-full", linger=30.0)
    for i in range(MAX_BATCH):
        writer.submit(i)
    assert written.wait(5), "a full batch waited for the linger"
    writer.close()
    assert sum(sizes) == MAX_BATCH


def test_wait_blocks_until_written_and_leaves_an_error_to_the_writers_own_caller() -> None:
    """Another writer's thread waits here for what must reach the disk first: it must not
    take (and so hide) this writer's error."""
    gate = threading.Event()
    written: list[int] = []

    def write(batch: Sequence[int]) -> None:
        gate.wait(5)
        if 2 in batch:
            raise OSError("disk full")
        written.extend(batch)

    writer: BatchWriter[int] = BatchWriter(write, name="test-wait", linger=10.0)
    writer.submit(1)
    waiter = threading.Thread(target=writer.wait)
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # the write has not happened yet: wait() waits (no linger)
    gate.set()
    waiter.join(5)
    assert not waiter.is_alive() and written == [1]
    writer.submit(2)
    writer.wait()  # the failed batch is done: returns, raises nothing
    with pytest.raises(OSError, match="disk full"):
        writer.flush()
    writer.close()


@pytest.mark.parametrize("linger", [0.0, 0.002])
def test_items_from_many_threads_each_arrive_once_in_their_threads_order(linger: float) -> None:
    """Submits take no lock while the thread is busy: items submitted while the thread goes
    idle or drains the queue are neither lost nor written twice, and a flush after a
    thread's last submit covers it."""
    written: list[tuple[int, int]] = []
    writer: BatchWriter[tuple[int, int]] = BatchWriter(
        written.extend, name="test-writer", linger=linger
    )
    flushed: list[bool] = []

    def submitter(n: int) -> None:
        for i in range(2000):
            writer.submit((n, i))
            if i % 250 == 0:
                threading.Event().wait(0.001)  # let the thread go idle now and then
        writer.flush()
        flushed.append(sum(1 for x in written if x[0] == n) == 2000)

    threads = [threading.Thread(target=submitter, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert flushed == [True] * 4
    for n in range(4):
        assert [i for m, i in written if m == n] == list(range(2000))
    assert writer.pending == 0
    writer.close()


def test_an_idle_writer_is_woken_by_a_submit_without_a_flush() -> None:
    written: list[int] = []
    done = threading.Event()

    def write(batch: Sequence[int]) -> None:
        written.extend(batch)
        if len(written) == 50:
            done.set()

    writer: BatchWriter[int] = BatchWriter(write, name="test-writer")
    for i in range(50):
        writer.submit(i)
        threading.Event().wait(0.002)  # the thread writes it and goes idle before the next
    assert done.wait(10), f"only {len(written)} of 50 written without a flush"
    writer.close()
