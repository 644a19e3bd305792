"""One order for every log (issue 25 item 2): a merge in either direction replays the same, twice-merged
equals once, and an append reads only the end of the file.

Two clones are two copies of one project, each written by its own "process" (its own clock state and
node, store/clock.py) with clocks that disagree; `union` merges them as git's union driver (and
`rooms sync`) does: the base, then one side's new lines, then the other's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooms_cli.store import clock, jsonl, order

TIMES = ["2026-11-21T09:00:00.000Z", "2026-11-21T09:00:00.000Z", "2026-11-21T09:00:05.000Z", "2026-11-21T08:59:00.000Z"]


@contextlib.contextmanager
def as_process(state: dict, now: str):
    """Run as one clone's process: its clock state, its node, its wall clock (`ROOMS_NOW`)."""
    saved = (clock._hlc_last, clock._hlc_node, os.environ.get("ROOMS_NOW"))
    clock._hlc_last, clock._hlc_node = state["last"], state["node"]
    os.environ["ROOMS_NOW"] = now
    try:
        yield
    finally:
        state["last"] = clock._hlc_last
        clock._hlc_last, clock._hlc_node = saved[0], saved[1]
        if saved[2] is None:
            os.environ.pop("ROOMS_NOW", None)
        else:
            os.environ["ROOMS_NOW"] = saved[2]


def union(base: Path, first: Path, second: Path, out: Path) -> None:
    """`out` = base + first's new lines + second's new lines, for every .jsonl file (others: either side's)."""
    shutil.copytree(first, out)
    for path in sorted(second.rglob("*")):
        rel = path.relative_to(second)
        if not path.is_file() or rel.parts[:2] == (".rooms", "run") or path.name.endswith((".lock", ".tmp")):
            continue
        target = out / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            continue
        if path.suffix != ".jsonl":
            continue
        old = (base / rel).read_bytes().splitlines(keepends=True) if (base / rel).exists() else []
        theirs = path.read_bytes().splitlines(keepends=True)[len(old):]
        target.write_bytes(target.read_bytes() + b"".join(theirs))
    shutil.rmtree(out / ".rooms" / "run", ignore_errors=True)


def state_of(root: Path) -> dict:
    """What every part reads from the project at `root`."""
    from rooms_cli.agents.memories import list_lessons
    from rooms_cli.board.tasks import board_json
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.chat.transcript import read_transcript
    from rooms_cli.messaging.inbox import read_inbox
    from rooms_cli.messaging.status import read_status
    from rooms_cli.store.paths import open_project

    project = open_project(root)
    os.environ["ROOMS_NOW"] = "2026-11-21T09:01:00.000Z"
    return {
        "board": board_json(project, "default"),
        "transcript": [m.to_json() for m in read_transcript(project, "default")],
        "inbox": [(m.to_json(), m.ref) for m in read_inbox(project, "reviewer")],
        "status": read_status(project, "alice"),
        "lessons": list_lessons(project, "alice"),
        "room": load_room(project, "default").to_json(),
    }


OPS = st.sampled_from(["claim", "release", "done", "chat", "send", "status", "learn", "forget", "invite", "kick"])


def run_op(root: Path, op: str, n: int, task_ids: list[str]) -> None:
    from rooms_cli.agents.memories import add_lessons, forget, list_lessons
    from rooms_cli.board import claims
    from rooms_cli.board.errors import AlreadyClaimed, InvalidTransition, LeaseMismatch
    from rooms_cli.chat import membership
    from rooms_cli.chat.transcript import append_message
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.messaging.inbox import deliver
    from rooms_cli.messaging.status import set_status
    from rooms_cli.store.paths import open_project

    project = open_project(root)
    task = task_ids[n % len(task_ids)]
    try:
        if op == "claim":
            claims.claim_task(project, "default", task, agent="dev")
        elif op in ("release", "done"):
            fn = claims.release_task if op == "release" else claims.finish_task
            kwargs = {"summary": "did it"} if op == "done" else {}
            fn(project, "default", task, None, holder="dev", **kwargs)
        elif op == "chat":
            append_message(project, "default", "alice", f"hello {n}")
        elif op == "send":
            deliver(project, "reviewer", "alice", f"note {n}")
        elif op == "status":
            set_status(project, "alice", f"busy {n}")
        elif op == "learn":
            add_lessons(project, "alice", [f"lesson {n}"], source="test")
        elif op == "forget":
            lessons = list_lessons(project, "alice")
            if lessons:
                forget(project, "alice", [lessons[n % len(lessons)]["id"]])
        elif op == "invite":
            membership.invite(project, "default", "reviewer", by="alice")
        elif op == "kick":
            membership.kick(project, "default", "reviewer", by="alice")
    except (AlreadyClaimed, InvalidTransition, LeaseMismatch, InvalidInput):
        pass


@settings(max_examples=int(os.environ.get("SYNC_ORDER_EXAMPLES", "12")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from("ab"), OPS, st.integers(0, 5), st.sampled_from(TIMES)), min_size=1, max_size=14))
def test_every_part_replays_a_merge_the_same_in_both_directions_and_twice_merged_equals_once(ops):
    from rooms_cli.board.tasks import add_task
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        base = tmp_path / "base"
        base.mkdir()
        procs = {side: {"last": (0, -1), "node": node} for side, node in (("base", "0base0"), ("a", "aaaaaa"), ("b", "bbbbbb"))}
        with as_process(procs["base"], TIMES[0]):
            initialize(base, example="dev")
            initialize(base, example="roundtable")
            task_ids = [add_task(open_project(base), "default", f"t{n}", lane="dev", done="d", by="alice").id for n in range(2)]
        shutil.rmtree(base / ".rooms" / "run", ignore_errors=True)
        clones = {side: tmp_path / side for side in "ab"}
        for root in clones.values():
            shutil.copytree(base, root)
        for side, op, n, now in ops:
            with as_process(procs[side], now):
                run_op(clones[side], op, n, task_ids)
        ab, ba, twice = tmp_path / "ab", tmp_path / "ba", tmp_path / "twice"
        union(base, clones["a"], clones["b"], ab)
        union(base, clones["b"], clones["a"], ba)
        union(base, ab, ba, twice)  # the same records arriving again (a sync, then a pull)
        one, other, again = state_of(ab), state_of(ba), state_of(twice)
        assert one == other
        assert again == one


def test_a_record_written_after_seeing_another_sorts_after_it_even_when_the_clock_is_behind(tmp_path):
    log = tmp_path / "log.jsonl"
    fast, slow = {"last": (0, -1), "node": "fast01"}, {"last": (0, -1), "node": "slow01"}
    with as_process(fast, "2026-11-21T10:00:00.000Z"):
        first = jsonl.append(log, {"id": "r-1", "ts": clock.now_iso()})
    with as_process(slow, "2026-11-21T09:00:00.000Z"):  # an hour behind, but it reads the log's end first
        second = jsonl.append(log, {"id": "r-0", "ts": clock.now_iso()})
    assert second["hlc"] > first["hlc"]
    assert [r["id"] for r in order.ordered(jsonl.read(log))] == ["r-1", "r-0"]


def test_records_of_one_frozen_millisecond_keep_their_written_order_past_the_counter_width(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T09:00:00.000Z")
    log = tmp_path / "log.jsonl"
    monkeypatch.setattr(clock, "_hlc_last", (0, -1))
    jsonl.append_many(log, [{"n": n} for n in range(10_050)])
    assert [r["n"] for r in order.ordered(jsonl.read(log))] == list(range(10_050))


def test_records_without_a_stamp_sort_by_time_then_id_before_new_ones_and_a_lamport_seq_counts_for_nothing(
        tmp_path, monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T09:00:00.000Z")
    log = tmp_path / "log.jsonl"
    log.write_text('{"ts": "2026-11-21T09:00:00.000Z", "eid": "e-2", "seq": 0}\n'
                   '{"ts": "2026-11-21T08:00:00.000Z", "eid": "e-9", "seq": 5}\n'
                   '{"ts": "2026-11-21T09:00:00.000Z", "eid": "e-1", "seq": 1}\n')
    jsonl.append(log, {"eid": "e-0", "ts": "2026-11-21T09:00:00.000Z"})
    assert [r["eid"] for r in order.ordered(jsonl.read(log))] == ["e-9", "e-1", "e-2", "e-0"]


def test_an_append_reads_only_the_end_of_a_long_log(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    jsonl.append_many(log, [{"n": n, "pad": "x" * 100} for n in range(20_000)])
    reads: list[int] = []
    real = os.pread

    def counting(fd, size, offset):
        reads.append(size)
        return real(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting)
    jsonl.append(log, {"n": "last"})
    assert sum(reads) <= 64 * 1024 < log.stat().st_size


def _ordered_by_identity(records):
    """The definition `order.ordered` keeps: each record once by `order.identity`, then the one order."""
    seen, unique = set(), []
    for record in records:
        key = order.identity(record)
        if key not in seen:
            seen.add(key)
            unique.append(record)
    return sorted(unique, key=order.sort_key)


_STAMPS = st.sampled_from(["2026-01-01T00:00:00.000Z-0000-aaaaaa", "2026-01-01T00:00:00.000Z-0000-bbbbbb",
                           "2026-01-01T00:00:00.001Z-0001-aaaaaa", "", None, 5])
_RECORD = st.fixed_dictionaries({"ev": st.sampled_from(["claim", "done", "note"])}, optional={
    "hlc": _STAMPS, "id": st.sampled_from(["", "m-1", "m-2"]), "eid": st.sampled_from(["e-1", 3]),
    "at": st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]), "n": st.integers(0, 2),
    "meta": st.dictionaries(st.sampled_from("xy"), st.integers(0, 1), max_size=2)})


@settings(max_examples=300, deadline=None)
@given(records=st.lists(_RECORD, max_size=12).flatmap(lambda rs: st.permutations(rs + rs[: len(rs) // 2])))
def test_ordered_keeps_each_record_once_by_its_identity(records):
    """`ordered` serialises a stamped id-less record only when another shares its stamp; what it keeps
    is still exactly what deduplicating by `identity` keeps (copies, stamp collisions, key order)."""
    copies = [dict(reversed(list(r.items()))) for r in records]  # the same record with its keys in another order
    for given_records in (records, copies + records):
        assert order.ordered(given_records) == _ordered_by_identity(given_records)
