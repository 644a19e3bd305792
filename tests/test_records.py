"""rooms_cli/core/records.py builds the records of the hot paths as `dataclasses` would, without importing inspect.

Each behaviour the records rely on is checked against the standard library's on the same class body:
__init__ with defaults and per-instance factories, repr (a field left out), equality, hashing, frozen
records, asdict, pickling, and the refusal of a field without a default after one with a default.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest

from rooms_cli.core import records


def _pair():
    """The same record declared with both decorators."""
    made = []
    for module in (dataclasses, records):
        @module.dataclass
        class Item:
            """A record."""

            name: str
            count: int = 1
            tags: list[str] = module.field(default_factory=list)
            secret: dict = module.field(default_factory=dict, repr=False)

        made.append(Item)
    return made


def test_init_repr_and_equality_are_the_standard_ones():
    std, ours = _pair()
    for args, kwargs in [(("a",), {}), (("b", 3), {"tags": ["x"]}), ((), {"name": "c", "secret": {"k": 1}})]:
        a, b = std(*args, **kwargs), ours(*args, **kwargs)
        assert repr(a).replace("_pair.<locals>.", "") == repr(b).replace("_pair.<locals>.", "")
        assert vars(a) == vars(b)
    assert ours("a") == ours("a") and ours("a") != ours("b") and ours("a") != std("a")
    assert ours("a").tags is not ours("a").tags  # a fresh list each
    assert ours.__hash__ is None and std.__hash__ is None
    with pytest.raises(TypeError):
        ours()


def test_a_frozen_record_is_hashable_and_read_only():
    @records.dataclass(frozen=True)
    class Key:
        """A frozen record."""

        name: str
        count: int = 1

    ours = Key
    item = ours("a", 2)
    assert hash(item) == hash(ours("a", 2)) and {item: 1}[ours("a", 2)] == 1
    with pytest.raises(AttributeError):
        item.count = 3
    with pytest.raises(records.FrozenInstanceError):
        del item.name
    assert copy.deepcopy(item) == item


def test_asdict_copies_nested_records_like_the_standard_one():
    std, ours = _pair()
    inner_std, inner_ours = std("in", tags=["t"]), ours("in", tags=["t"])
    a = dataclasses.asdict(std("out", secret={"inner": inner_std}))
    b = records.asdict(ours("out", secret={"inner": inner_ours}))
    assert a == b
    assert b["secret"]["inner"]["tags"] is not inner_ours.tags
    assert copy.deepcopy(ours("p", tags=["x"])) == ours("p", tags=["x"])


def test_the_records_of_the_store_and_the_board_pickle_and_compare(tmp_path):
    from rooms_cli.board.model import Task
    from rooms_cli.store.paths import Project

    project = Project(root=str(tmp_path), dir=str(tmp_path / ".rooms"))
    assert pickle.loads(pickle.dumps(project)) == project and hash(project) == hash(Project(str(tmp_path), str(tmp_path / ".rooms")))
    task = Task(id="t-1", room="default", lane="dev", title="x", detail="", definition_of_done="d", created_by="me",
                created_at="now", updated_at="now")
    assert pickle.loads(pickle.dumps(task)) == task and task.conflicts == [] and task.leases == {}
    assert "leases" not in repr(task) and repr(task).startswith("Task(id='t-1', room='default'")


def test_a_failing_example_holding_a_record_is_printed_by_hypothesis():
    """hypothesis prints a falsifying example through its own pretty printer, which lists a dataclass's
    fields by `__dataclass_fields__` and their `init`: without it, the report of a failure was an
    AttributeError that hid the failure."""
    from hypothesis.vendor.pretty import pretty

    from rooms_cli.store.paths import Project

    assert pretty(Project(root="/p", dir="/p/.rooms")) == "Project(root='/p', dir='/p/.rooms')"


def test_a_field_without_default_after_one_with_a_default_is_refused():

    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @records.dataclass
        class Bad:
            """A record in the wrong order."""

            a: int = 1
            b: int


def test_the_hot_paths_records_import_neither_dataclasses_nor_inspect():
    code = ("import sys, rooms_cli.board.claims, rooms_cli.board.render, rooms_cli.messaging.send, rooms_cli.messaging.inbox, "
            "rooms_cli.messaging.attention, rooms_cli.project.context, rooms_cli.store.sync.engine, rooms_cli.chat.rooms, rooms_cli.chat.transcript; "
            "print(sorted({'dataclasses', 'inspect'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
