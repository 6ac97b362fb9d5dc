"""Train / validation / test splits (optimizer.md §1)."""

from __future__ import annotations

from agentopt.contracts.task import Dataset, Task, Turn
from agentopt.workflows.optimize import make_splits


def dataset(n: int, prefix: str = "t") -> Dataset:
    return Dataset(
        tasks=[Task(name=f"{prefix}{i:02d}", turns=[Turn(query=f"q{i}")]) for i in range(n)]
    )


def test_split_is_40_40_20_deterministic_by_seed_and_disjoint() -> None:
    ds = dataset(20)
    a = make_splits(ds, seed=7)
    b = make_splits(ds, seed=7)
    c = make_splits(ds, seed=8)
    assert (a.info.train, a.info.validation, a.info.test) == (
        b.info.train,
        b.info.validation,
        b.info.test,
    )
    assert (len(a.info.train), len(a.info.validation), len(a.info.test)) == (8, 8, 4)
    assert a.info.train != c.info.train  # another seed, another split
    names = a.info.train + a.info.validation + a.info.test
    assert sorted(names) == sorted(t.name for t in ds.tasks)  # a partition
    assert a.info.warning is None and not a.info.validation_is_train


def test_split_order_of_the_dataset_does_not_change_the_split() -> None:
    ds = dataset(12)
    shuffled = Dataset(tasks=list(reversed(ds.tasks)))
    assert make_splits(ds, 3).info.test == sorted(make_splits(shuffled, 3).info.test)


def test_nine_tasks_give_three_each_and_eight_are_too_few() -> None:
    nine = make_splits(dataset(9), seed=0).info
    assert (len(nine.train), len(nine.validation), len(nine.test)) == (3, 3, 3)
    small = make_splits(dataset(8), seed=0)
    assert small.test is None
    assert small.info.validation_is_train
    assert small.info.train == small.info.validation
    assert small.info.warning is not None and "too few to hold out a test set" in small.info.warning


def test_configured_validation_and_test_datasets_are_used_as_they_are() -> None:
    train, val, test = dataset(4), dataset(5, "v"), dataset(3, "x")
    s = make_splits(train, seed=1, validation=val, test=test)
    assert s.info.source == "eval.yaml"
    assert s.info.train == [t.name for t in train.tasks]
    assert s.info.validation == [t.name for t in val.tasks]
    assert s.info.test == [t.name for t in test.tasks]


def test_a_clashing_name_in_a_separate_validation_dataset_is_prefixed() -> None:
    s = make_splits(dataset(3), seed=0, validation=dataset(3))
    assert s.info.validation == ["validation/t00", "validation/t01", "validation/t02"]
    task, ds = s.task("validation/t01")
    assert task.query == "q1" and ds is s.validation.dataset


def test_only_validation_configured_holds_out_a_third_of_the_dataset_as_test() -> None:
    s = make_splits(dataset(9), seed=0, validation=dataset(4, "v"))
    assert len(s.info.test) == 3 and len(s.info.train) == 6
    assert not set(s.info.test) & set(s.info.train)
