"""Train / validation / test splits (optimizer.md §1).

Train feeds screening and reflection, validation ranks candidates, test is held out and
touched once at the end. A seeded shuffle of the task names makes the split reproducible:
the same dataset and `--seed` give the same split on every machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from agentopt.contracts.optimize_job import SplitInfo
from agentopt.contracts.task import Dataset, Task

MIN_PER_SPLIT = 3
MIN_FOR_THREE_WAY = 3 * MIN_PER_SPLIT
TOO_SMALL = (
    "the dataset has {n} tasks, too few to hold out a test set (a 40/40/20 split needs at "
    "least 9): validation = train and there is no test split, so the gains reported are "
    "measured on the tasks the optimizer tuned on and are optimistic"
)


@dataclass
class SplitTasks:
    """One split: its tasks (uniquely named across the job) and the dataset they come from
    (the evaluator defaults of an M365 document depend on it)."""

    tasks: list[Task]
    dataset: Dataset

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tasks]


@dataclass
class Splits:
    """The three splits of one job."""

    train: SplitTasks
    validation: SplitTasks
    test: SplitTasks | None
    info: SplitInfo = field(default_factory=SplitInfo)

    def task(self, name: str) -> tuple[Task, Dataset]:
        """A task by its job-wide name, with its dataset."""
        for split in (self.train, self.validation, self.test):
            if split is None:
                continue
            for task in split.tasks:
                if task.name == name:
                    return task, split.dataset
        raise KeyError(name)


def _sizes(n: int) -> tuple[int, int, int]:
    """(train, validation, test) for 40/40/20 with at least 3 each (n ≥ 9)."""
    test = max(MIN_PER_SPLIT, round(0.2 * n))
    validation = max(MIN_PER_SPLIT, round(0.4 * n))
    train = n - validation - test
    while train < MIN_PER_SPLIT and validation > MIN_PER_SPLIT:
        validation, train = validation - 1, train + 1
    while train < MIN_PER_SPLIT and test > MIN_PER_SPLIT:
        test, train = test - 1, train + 1
    return train, validation, test


def _shuffled(tasks: list[Task], seed: int) -> list[Task]:
    ordered = sorted(tasks, key=lambda t: t.name)
    random.Random(f"split:{seed}").shuffle(ordered)
    return ordered


def _in_order(chosen: list[Task], source: list[Task]) -> list[Task]:
    """Keep the dataset's own order inside a split (reports read better)."""
    names = {t.name for t in chosen}
    return [t for t in source if t.name in names]


def _prefixed(dataset: Dataset, prefix: str, taken: set[str]) -> Dataset:
    """A separate validation/test dataset whose task names clash with the main one gets its
    names prefixed, so every task has one name across the job."""
    if not any(t.name in taken for t in dataset.tasks):
        return dataset
    tasks = [t.model_copy(update={"name": f"{prefix}/{t.name}"}) for t in dataset.tasks]
    return dataset.model_copy(update={"tasks": tasks})


def make_splits(
    dataset: Dataset,
    seed: int,
    *,
    validation: Dataset | None = None,
    test: Dataset | None = None,
) -> Splits:
    """Split `dataset` (or use the configured validation/test datasets).

    - validation and test given: train = the whole dataset.
    - only validation given: the dataset is split into train and test (2:1) when it has at
      least 6 tasks; else no test.
    - only test given: the dataset is split into train and validation (1:1) when it has at
      least 6 tasks; else validation = train.
    - neither: 40/40/20 with at least 3 tasks each; fewer than 9 tasks → validation = train,
      no test, and a warning.
    """
    tasks = list(dataset.tasks)
    n = len(tasks)
    taken = {t.name for t in tasks}
    if validation is not None:
        validation = _prefixed(validation, "validation", taken)
        taken |= {t.name for t in validation.tasks}
    if test is not None:
        test = _prefixed(test, "test", taken)
    info = SplitInfo(seed=seed, source="eval.yaml" if validation or test else "seeded")
    shuffled = _shuffled(tasks, seed)
    train_tasks: list[Task]
    val_split: SplitTasks
    test_split: SplitTasks | None = SplitTasks(list(test.tasks), test) if test else None
    if validation is not None:
        val_split = SplitTasks(list(validation.tasks), validation)
        if test is None and n >= 2 * MIN_PER_SPLIT:
            n_test = max(MIN_PER_SPLIT, round(n / 3))
            test_split = SplitTasks(_in_order(shuffled[:n_test], tasks), dataset)
            train_tasks = _in_order(shuffled[n_test:], tasks)
        else:
            train_tasks = tasks
    elif test is not None:
        if n >= 2 * MIN_PER_SPLIT:
            half = n // 2
            train_tasks = _in_order(shuffled[:half], tasks)
            val_split = SplitTasks(_in_order(shuffled[half:], tasks), dataset)
        else:
            train_tasks = tasks
            val_split = SplitTasks(tasks, dataset)
            info.validation_is_train = True
    elif n < MIN_FOR_THREE_WAY:
        train_tasks = tasks
        val_split = SplitTasks(tasks, dataset)
        info.validation_is_train = True
        info.warning = TOO_SMALL.format(n=n)
    else:
        n_train, n_val, _ = _sizes(n)
        train_tasks = _in_order(shuffled[:n_train], tasks)
        val_split = SplitTasks(_in_order(shuffled[n_train : n_train + n_val], tasks), dataset)
        test_split = SplitTasks(_in_order(shuffled[n_train + n_val :], tasks), dataset)
    train_split = SplitTasks(train_tasks, dataset)
    info.train = train_split.names
    info.validation = val_split.names
    info.test = test_split.names if test_split else []
    return Splits(train=train_split, validation=val_split, test=test_split, info=info)


def splits_from_info(
    info: SplitInfo,
    dataset: Dataset,
    *,
    validation: Dataset | None = None,
    test: Dataset | None = None,
) -> Splits:
    """Rebuild the splits a job recorded (--resume), checking every task still exists."""
    fresh = make_splits(dataset, info.seed, validation=validation, test=test)
    by_name: dict[str, tuple[Task, Dataset]] = {}
    for split in (fresh.train, fresh.validation, fresh.test):
        if split is not None:
            for t in split.tasks:
                by_name.setdefault(t.name, (t, split.dataset))

    def rebuild(names: list[str], what: str) -> SplitTasks:
        missing = [n for n in names if n not in by_name]
        if missing:
            from agentopt.core.errors import ConfigError

            raise ConfigError(
                f"the dataset changed since the job started: {what} task(s) "
                f"{', '.join(missing[:5])} no longer exist",
                hint="start a new job (`agentopt optimize`) instead of resuming this one",
            )
        tasks = [by_name[n][0] for n in names]
        ds = by_name[names[0]][1] if names else dataset
        return SplitTasks(tasks, ds)

    return Splits(
        train=rebuild(info.train, "train"),
        validation=rebuild(info.validation, "validation"),
        test=rebuild(info.test, "test") if info.test else None,
        info=info,
    )
