"""The open-task index (board/openindex.py): rebuilt when missing, damaged or stale, never trusted over a log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from rooms_cli.board import claims, openindex, store, tasks
from rooms_cli.board.render import board_view

ROOM = "default"


def add(project, title="t", lane="researcher"):
    return tasks.add_task(project, ROOM, title, lane=lane, done="it is done", by="alice")


def finish(project, task_id, agent="researcher"):
    claim = claims.claim_task(project, ROOM, task_id, agent=agent)
    claims.finish_task(project, ROOM, task_id, claim.lease.lease_id, summary="ok")


def test_the_index_holds_open_tasks_and_the_last_finished(project):
    ids = [add(project, f"t{n}").id for n in range(15)]
    for task_id in ids[:12]:
        finish(project, task_id)
    index = openindex.load(project, ROOM)
    assert sorted(index["open"]) == sorted(ids[12:])
    assert index["counts"] == {"done": 12}
    view = board_view(project, ROOM, done=5)
    assert [len(lane["tasks"]) for lane in view["lanes"]] == [3]
    assert len(view["done"]) == 5 and view["done_total"] == 12 and view["counts"]["done"] == 12
    assert view["done"] == sorted(view["done"], key=lambda t: t["updated_at"], reverse=True)
    whole = board_view(project, ROOM, all_=True)
    assert len(whole["done"]) == 12 and whole["counts"] == view["counts"]
    assert [t["id"] for t in whole["done"][:5]] == [t["id"] for t in view["done"]]


def test_adding_updates_the_index_without_a_rebuild(project, monkeypatch):
    add(project, "first")
    openindex.load(project, ROOM)
    rebuilt = []
    real = openindex.rebuild
    monkeypatch.setattr(openindex, "rebuild", lambda *a, **k: rebuilt.append(1) or real(*a, **k))
    second = add(project, "second")
    assert second.order == 2  # the end of the lane, from lane_max
    assert second.id in openindex.load(project, ROOM)["open"] and rebuilt == []


def test_a_missing_damaged_or_stale_index_is_rebuilt_from_the_logs(project):
    ids = [add(project, f"t{n}").id for n in range(3)]
    path = Path(openindex.index_path(project, ROOM))
    openindex.load(project, ROOM)
    path.unlink()
    assert sorted(openindex.load(project, ROOM)["open"]) == sorted(ids)
    path.write_text("{not json")
    assert sorted(openindex.load(project, ROOM)["open"]) == sorted(ids)
    path.write_text(json.dumps({"version": 999, "open": {}}))
    assert sorted(openindex.load(project, ROOM)["open"]) == sorted(ids)
    Path(store.task_path(project, ROOM, ids[0])).unlink()  # a log removed behind the index's back (git rm, checkout)
    assert sorted(openindex.load(project, ROOM)["open"]) == sorted(ids[1:])


def test_a_log_edited_behind_the_index_is_never_trusted(project, cli):
    task = add(project, "held elsewhere")
    openindex.load(project, ROOM)
    # another clone's claim arrives by hand (the directory does not change: only the log grows)
    log = Path(store.task_path(project, ROOM, task.id))
    with log.open("a") as handle:
        handle.write(json.dumps({"at": "2026-11-25T00:00:00.000Z", "by": "other", "ev": "claim",
                                 "expires_at": "2999-01-01T00:00:00.000Z", "fence": 1, "holder": "other",
                                 "hlc": "2999-01-01T00:00:00.000Z-0000-000001", "lease_id": "l-01M899KK75EXKKAHRW75JYQNZ6",
                                 "plate": "other/x"}, sort_keys=True) + "\n")
    result = cli("task", "next", "--as", "researcher", "--json")
    assert result.exit_code == 0 and result.json() is None  # nothing claimable: the held task is refused
    assert openindex.load(project, ROOM)["open"][task.id]["task"]["status"] == "doing"


def test_a_stale_open_entry_still_cannot_be_claimed(project, monkeypatch):
    """Even an index that says a held task is todo (a stat that did not change) only yields a candidate:
    the claim replays the log under the task's lock and moves on."""
    task = add(project, "raced")
    claims.claim_task(project, ROOM, task.id, agent="researcher")
    index = openindex.load(project, ROOM)
    entry = index["open"][task.id]
    entry["task"] = {**entry["task"], "status": "todo", "lease": None}
    monkeypatch.setattr(openindex, "load", lambda *a, **k: index)
    assert claims.next_task(project, ROOM, agent="researcher") is None


def test_a_kill_during_the_index_write_leaves_a_readable_board(project, tmp_path):
    ids = [add(project, f"t{n}").id for n in range(3)]
    Path(openindex.index_path(project, ROOM)).unlink(missing_ok=True)
    script = textwrap.dedent(f"""
        import os, signal
        from rooms_cli.board import openindex
        from rooms_cli.store.paths import open_project
        real = os.fdopen
        def dying(fd, *a, **k):
            handle = real(fd, *a, **k)
            handle.write(b'{{"version": 1, "dir": ')
            handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        os.fdopen = dying
        openindex.load(open_project({str(project.root)!r}), {ROOM!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == -signal.SIGKILL
    assert not Path(openindex.index_path(project, ROOM)).exists()  # the temp file never replaced the index
    assert sorted(openindex.load(project, ROOM)["open"]) == sorted(ids)
    assert board_view(project, ROOM)["counts"]["todo"] == 3


def test_board_cli_done_and_all(project, cli):
    ids = [add(project, f"t{n}").id for n in range(4)]
    for task_id in ids[:3]:
        finish(project, task_id)
    assert len(cli("board", "--json").json()["done"]) == 3
    assert len(cli("board", "--done", "1", "--json").json()["done"]) == 1
    assert len(cli("board", "--all", "--json").json()["done"]) == 3
    text = cli("board", "--done", "1").stdout
    assert "last 1 of 3" in text and "t3" in text
    assert cli("board", "--done", "x").exit_code == 2


def test_reading_plainly_done_logs_as_bytes_agrees_with_replay(project, monkeypatch):
    ids = [add(project, f"t{n}", lane=("researcher", "writer")[n % 2]).id for n in range(9)]
    for task_id in ids[:6]:
        agent = tasks.load_task(project, ROOM, task_id).lane
        finish(project, task_id, agent)
    claim = claims.claim_task(project, ROOM, ids[6], agent="writer")
    claims.release_task(project, ROOM, ids[6], claim.lease.lease_id)
    tasks.archive_task(project, ROOM, ids[5], by="alice")  # finished, then archived: not counted
    fast = openindex.rebuild(project, ROOM)
    monkeypatch.setattr(openindex, "_plainly_done", lambda data: None)
    slow = openindex.rebuild(project, ROOM)
    assert fast["counts"] == slow["counts"] == {"done": 5}
    assert fast["lane_max"] == slow["lane_max"]
    assert [t["id"] for t in fast["recent"]] == [t["id"] for t in slow["recent"]]
    assert fast["open"].keys() == slow["open"].keys()


def test_archiving_or_updating_a_finished_task_updates_the_index(project):
    ids = [add(project, f"t{n}").id for n in range(3)]
    for task_id in ids:
        finish(project, task_id)
    assert board_view(project, ROOM)["counts"]["done"] == 3
    tasks.archive_task(project, ROOM, ids[0], by="alice")
    tasks.update_task(project, ROOM, ids[1], by="alice", title="renamed")
    view = board_view(project, ROOM)
    assert view["counts"]["done"] == 2 and ids[0] not in [t["id"] for t in view["done"]]
    assert [t["title"] for t in view["done"] if t["id"] == ids[1]] == ["renamed"]
    assert view["counts"] == board_view(project, ROOM, all_=True)["counts"]


def _new_process():
    """Forget what this process remembered of the index, as a one-shot command starts."""
    openindex._DECODED.clear()
    openindex._UNSAVED.clear()


def test_a_read_stores_the_index_only_once_it_replayed_enough(project):
    """A read that replays a changed log or two leaves the stored index as it was (each `task next`
    changes a log: storing it every time was a write and a rename per call); from SAVE_LOGS changed
    logs on it stores what it refreshed. Either way the read itself is right."""
    ids = [add(project, f"t{n}").id for n in range(openindex.SAVE_LOGS + 1)]
    path = Path(openindex.index_path(project, ROOM))
    openindex.load(project, ROOM)
    stored = path.read_bytes()
    claim = claims.claim_task(project, ROOM, ids[0], agent="researcher")
    _new_process()
    assert openindex.load(project, ROOM)["open"][ids[0]]["task"]["status"] == "doing"
    assert path.read_bytes() == stored  # one log replayed: nothing stored
    claims.release_task(project, ROOM, ids[0], claim.lease.lease_id)
    for task_id in ids[1:openindex.SAVE_LOGS]:
        claims.claim_task(project, ROOM, task_id, agent="researcher")
    _new_process()
    index = openindex.load(project, ROOM)
    assert path.read_bytes() != stored
    assert json.loads(path.read_bytes())["open"] == index["open"]
    assert [index["open"][t]["task"]["status"] for t in ids] == ["todo"] + ["doing"] * (openindex.SAVE_LOGS - 1) + ["todo"]


def test_a_session_replays_only_what_changed_since_its_last_read_and_stores_at_session_logs(project, monkeypatch):
    """A process that reads again (an MCP session) keeps what its read refreshed: each later read replays
    only the logs changed since, and the index is stored once SESSION_LOGS logs were replayed over it,
    not every SAVE_LOGS. The log of a task that finished meanwhile is still statted: an archive of it by
    another process, which finds it open in the stored index and stores nothing, is still seen."""
    ids = [add(project, f"t{n}").id for n in range(openindex.SESSION_LOGS + 2)]
    path = Path(openindex.index_path(project, ROOM))
    openindex.load(project, ROOM)
    stored = path.read_bytes()
    replays: list[str] = []
    real = openindex._replay_file
    monkeypatch.setattr(openindex, "_replay_file", lambda p, r, task_id, *a, **k: replays.append(task_id) or real(p, r, task_id, *a, **k))
    finish(project, ids[0])
    assert openindex.load(project, ROOM)["counts"] == {"done": 1}
    for n, task_id in enumerate(ids[1:openindex.SESSION_LOGS - 1], start=1):
        claims.claim_task(project, ROOM, task_id, agent="researcher")
        replays.clear()
        index = openindex.load(project, ROOM)
        assert replays == [task_id]  # the new claim, not the n-1 before nor the finished one
        assert index["counts"] == {"done": 1} and ids[0] not in index["open"]
        assert [t["status"] for t in (index["open"][i]["task"] for i in ids[1:n + 1])] == ["doing"] * n
        assert path.read_bytes() == stored
    tasks.archive_task(project, ROOM, ids[0], by="alice")  # as another process: the stored index still lists it open
    assert path.read_bytes() == stored
    index = openindex.load(project, ROOM)
    assert not any(index["counts"].values()) and ids[0] not in index["open"]
    assert board_view(project, ROOM)["counts"] == board_view(project, ROOM, all_=True)["counts"]
    claims.claim_task(project, ROOM, ids[openindex.SESSION_LOGS - 1], agent="researcher")
    index = openindex.load(project, ROOM)  # the SESSION_LOGS-th log replayed over the stored index: stored
    assert path.read_bytes() != stored
    _new_process()
    assert openindex.load(project, ROOM)["open"] == index["open"]


def test_a_task_finished_and_changed_between_two_reads_is_counted_once(project):
    """The stored index may still list a finished task as open (reads store lazily); changing the
    finished task then (a rename, an archive) must not count it twice."""
    ids = [add(project, f"t{n}").id for n in range(3)]
    board_view(project, ROOM)
    finish(project, ids[0])
    tasks.update_task(project, ROOM, ids[0], by="alice", title="renamed")
    finish(project, ids[1])
    tasks.archive_task(project, ROOM, ids[1], by="alice")
    for _ in range(2):
        view = board_view(project, ROOM)
        assert view["counts"] == board_view(project, ROOM, all_=True)["counts"]
        assert (view["counts"]["done"], view["counts"]["todo"]) == (1, 1)
        assert [t["title"] for t in view["done"]] == ["renamed"]


def _lanes(view):
    return sorted((t["id"], t["status"], t["title"]) for lane in view["lanes"] for t in lane["tasks"])


def test_the_lazily_stored_index_agrees_with_the_logs_whatever_the_sequence():
    """Any sequence of claims, releases, dones, renames and archives, read in between or not: the
    board from the index (stored or not) shows what replaying every log shows."""
    import tempfile

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from rooms_cli.core.errors import RoomsError
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    steps = st.lists(st.tuples(st.sampled_from(["claim", "release", "finish", "rename", "archive", "read"]),
                               st.integers(0, 5)), max_size=25)

    @settings(max_examples=15, deadline=None)
    @given(steps)
    def check(ops):
        with tempfile.TemporaryDirectory() as root:
            initialize(root)
            project = open_project(root)
            ids = [add(project, f"t{n}").id for n in range(6)]
            leases: dict[str, str] = {}
            for op, n in ops:
                task_id = ids[n]
                try:
                    if op == "claim":
                        leases[task_id] = claims.claim_task(project, ROOM, task_id, agent="researcher").lease.lease_id
                    elif op == "release" and task_id in leases:
                        claims.release_task(project, ROOM, task_id, leases.pop(task_id))
                    elif op == "finish" and task_id in leases:
                        claims.finish_task(project, ROOM, task_id, leases.pop(task_id), summary="ok")
                    elif op == "rename":
                        tasks.update_task(project, ROOM, task_id, by="alice", title=f"renamed {n}")
                    elif op == "archive":
                        tasks.archive_task(project, ROOM, task_id, by="alice")
                except RoomsError:
                    pass  # a transition the rules refuse: nothing written
                if op == "read":
                    fast, whole = board_view(project, ROOM), board_view(project, ROOM, all_=True)
                    assert fast["counts"] == whole["counts"] and _lanes(fast) == _lanes(whole)
            fast, whole = board_view(project, ROOM, done=10), board_view(project, ROOM, all_=True)
            assert fast["counts"] == whole["counts"] and _lanes(fast) == _lanes(whole)
            assert sorted(t["id"] for t in fast["done"]) == sorted(t["id"] for t in whole["done"])

    check()


def test_a_process_reading_the_index_again_decodes_it_only_when_its_bytes_changed(project, monkeypatch):
    """An MCP session reads the index on every call: the same bytes give a copy of the last decode; what
    a reader changes in its copy never reaches the next reader; another process's write is read anew."""
    from rooms_cli.store import cache

    ids = [add(project, f"t{n}").id for n in range(3)]
    first = openindex.load(project, ROOM)
    decodes = []
    real = cache.decode
    monkeypatch.setattr(cache, "decode", lambda *a, **k: decodes.append(1) or real(*a, **k))
    again = openindex.load(project, ROOM)
    assert decodes == [] and again == first and again is not first
    again["open"].clear()
    again["counts"]["done"] = 99
    again["recent"].append({"id": "x"})
    third = openindex.load(project, ROOM)
    assert sorted(third["open"]) == sorted(ids) and third["counts"] == {} and third["recent"] == []
    code = (f"from rooms_cli.board import tasks; from rooms_cli.store.paths import open_project; "
            f"tasks.add_task(open_project({str(project.root)!r}), {ROOM!r}, 'elsewhere', lane='researcher', "
            f"done='it is done', by='bob')")
    subprocess.run([sys.executable, "-c", code], check=True)
    fourth = openindex.load(project, ROOM)
    assert decodes and len(fourth["open"]) == 4


def test_a_session_replays_a_changed_log_once_until_it_changes_again(project, monkeypatch):
    """A read that does not store the index leaves the changed logs to the next read; a process replays
    each of them once at a given stat, folding on only what was appended since its last replay of it
    (board/fold.py), and again as soon as another process appends to it."""
    from rooms_cli.board import fold

    task_id = add(project, "busy").id
    add(project, "other")
    openindex.load(project, ROOM)
    claim = claims.claim_task(project, ROOM, task_id, agent="researcher")  # replays the log whole, then appends
    replays = []
    whole, more = fold.replay_log, fold.fold
    monkeypatch.setattr(fold, "replay_log", lambda *a, **k: replays.append(("whole", a[0])) or whole(*a, **k))
    monkeypatch.setattr(fold, "fold", lambda task, events, w: replays.append(("folded", len(events))) or more(task, events, w))
    first = openindex.load(project, ROOM)
    second = openindex.load(project, ROOM)
    assert replays == [("folded", 1)]  # the claim, onto the replay the claim made
    assert first["open"][task_id]["task"]["status"] == second["open"][task_id]["task"]["status"] == "doing"
    code = (f"from rooms_cli.board import claims; from rooms_cli.store.paths import open_project; "
            f"claims.release_task(open_project({str(project.root)!r}), {ROOM!r}, {task_id!r}, {claim.lease.lease_id!r})")
    subprocess.run([sys.executable, "-c", code], check=True)
    third = openindex.load(project, ROOM)
    assert replays == [("folded", 1), ("folded", 1)] and third["open"][task_id]["task"]["status"] == "todo"


def test_task_list_of_an_open_status_reads_the_index_and_lists_what_every_log_says(project, monkeypatch):
    """`task list --status todo|doing|blocked|failed` and `--holder` list the open tasks from the index:
    the same tasks, in the same order, as filtering every log (a lapsed lease reads as todo in both)."""
    from rooms_cli.board import proposals
    from rooms_cli.board.model import STATUSES
    from rooms_cli.board.render import _matches, list_tasks
    from rooms_cli.board.tasks import board_json

    ids = [add(project, f"t{n}", lane=("researcher", "writer")[n % 2]).id for n in range(14)]
    finish(project, ids[0])
    claims.claim_task(project, ROOM, ids[1], agent="researcher")
    claims.claim_task(project, ROOM, ids[2], agent="researcher", lease="1s")  # lapses below
    claims.set_status(project, ROOM, ids[4], "blocked", by="alice")
    claims.set_status(project, ROOM, ids[6], "failed", by="alice")
    claims.set_status(project, ROOM, ids[8], "cancelled", by="alice")
    tasks.archive_task(project, ROOM, ids[10], by="alice")
    proposals.assign_task(project, ROOM, ids[12], to="writer", by="alice")
    from rooms_cli.store.clock import add_seconds, iso, now

    later = iso(add_seconds(now(), 60))  # the 1 s lease has lapsed, the 10 minute one holds
    every = board_json(project, ROOM, later)
    monkeypatch.setattr("rooms_cli.board.render.board_json", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read every log")))
    for status in [s for s in STATUSES if s not in ("done", "cancelled")]:
        expected = sorted((t for t in every if _matches(t, status)), key=lambda t: (t["lane"], t["order"], t["id"]))
        assert list_tasks(project, ROOM, status=status, now=later) == expected, status
    held = [t for t in every if (t["lease"] or {}).get("holder") == "researcher"]
    assert list_tasks(project, ROOM, holder="researcher", now=later) == held and len(held) == 1
    assert [t["id"] for t in list_tasks(project, ROOM, status="todo", now=later)].count(ids[2]) == 1  # lapsed: todo


def test_a_process_does_not_decode_the_index_it_just_stored(project, monkeypatch):
    """An index this process stored is remembered as what its bytes decode to (openindex._saved): the
    next read finds the same bytes and decodes nothing, and gets what decoding them gives."""
    from rooms_cli.store import cache

    ids = [add(project, f"t{n}").id for n in range(6)]
    claims.claim_task(project, ROOM, ids[0], agent="researcher")
    finish(project, ids[1])
    openindex.rebuild(project, ROOM)
    decoded = []
    real = cache.decode
    monkeypatch.setattr(cache, "decode", lambda *a: decoded.append(1) or real(*a))
    index = openindex.load(project, ROOM)
    assert decoded == []
    assert index == real(Path(openindex.index_path(project, ROOM)).read_bytes(), openindex.VERSION)
    for task_id in ids[2:]:  # four changed logs: this read stores the index it refreshed
        claims.claim_task(project, ROOM, task_id, agent="researcher")
    openindex.load(project, ROOM)
    again = openindex.load(project, ROOM)
    assert decoded == [] and again == real(Path(openindex.index_path(project, ROOM)).read_bytes(), openindex.VERSION)
