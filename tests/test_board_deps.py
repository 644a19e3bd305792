"""Task dependencies through the Python API: what a task waits on, ready work, refused cycles, import.

The rules of issue 43: a dependency is met only when done; `task next` hands out only ready tasks; a
claim of a blocked task is refused with `blocked`; a cycle or an unknown id is refused and nothing is
written; readiness comes from the open-task index, never from a replay of the board's history.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooms_cli.board import claims, deps, fold, importing, openindex, store, tasks
from rooms_cli.board.errors import Blocked, DependencyCycle
from rooms_cli.board.render import board_markdown, board_view, list_tasks
from rooms_cli.core.errors import ExitCode, InvalidInput, NotFound

ROOM = "default"


def add(project, title, lane="dev", depends_on=None):
    return tasks.add_task(project, ROOM, title, lane=lane, done="it is done", by="alice", depends_on=depends_on)


def finish(project, task_id, agent="dev"):
    claim = claims.claim_task(project, ROOM, task_id, agent=agent)
    claims.finish_task(project, ROOM, task_id, claim.lease.lease_id, summary="ok")


def log_lines(project, task_id):
    return Path(store.task_path(project, ROOM, task_id)).read_text().count("\n")


def ready_titles(project, lane=None):
    return [t["title"] for t in tasks.ready_tasks(project, ROOM, lane=lane)]


# --- declaring dependencies ------------------------------------------------------------------------

def test_a_task_depends_on_tasks_named_by_any_unique_prefix_across_lanes(project):
    schema = add(project, "Write the schema", lane="db")
    api = add(project, "Wire the API", lane="api", depends_on=[schema.id[:12]])
    assert api.depends_on == [schema.id] and api.blocked_by == [schema.id]
    shown = tasks.load_task(project, ROOM, api.id).to_json()
    assert shown["depends_on"] == [schema.id] and shown["blocked_by"] == [schema.id]


def test_every_task_record_carries_depends_on_and_blocked_by(project):
    schema = add(project, "Write the schema", lane="db")
    api = add(project, "Wire the API", lane="api", depends_on=[schema.id])
    records = (list_tasks(project, ROOM) + list_tasks(project, ROOM, status="todo")
               + [t for lane in board_view(project, ROOM)["lanes"] for t in lane["tasks"]]
               + [t for lane in board_view(project, ROOM, all_=True)["lanes"] for t in lane["tasks"]])
    assert records and all({"depends_on", "blocked_by"} <= set(r) for r in records)
    assert {r["id"]: r["blocked_by"] for r in records} == {schema.id: [], api.id: [schema.id]}
    finish(project, schema.id, "db")
    assert tasks.load_task(project, ROOM, api.id).blocked_by == []
    assert {t["id"]: t["blocked_by"] for t in list_tasks(project, ROOM)} == {schema.id: [], api.id: []}


def test_an_unknown_dependency_is_refused_and_nothing_is_written(project):
    with pytest.raises(NotFound, match="no task 't-NOPE'"):
        add(project, "Wire the API", depends_on=["t-NOPE"])
    assert store.list_task_ids(project, ROOM) == []


def test_update_replaces_the_list_and_an_empty_list_clears_it(project):
    a, b, c = add(project, "a"), add(project, "b"), add(project, "c")
    assert tasks.update_task(project, ROOM, c.id, by="alice", depends_on=[a.id]).depends_on == [a.id]
    assert tasks.update_task(project, ROOM, c.id, by="alice", depends_on=[b.id]).depends_on == [b.id]
    assert tasks.update_task(project, ROOM, c.id, by="alice", depends_on=[]).depends_on == []
    lines = log_lines(project, c.id)
    assert tasks.update_task(project, ROOM, c.id, by="alice", depends_on=[]).depends_on == []
    assert log_lines(project, c.id) == lines  # nothing changed, nothing written


@pytest.mark.parametrize("shape", ["self", "two", "three"])
def test_a_cycle_is_refused_naming_it_and_nothing_is_written(project, shape):
    a = add(project, "a")
    b = add(project, "b", depends_on=[a.id])
    c = add(project, "c", depends_on=[b.id])
    target, wanted, named = {"self": (a, [a.id], [a.id, a.id]), "two": (a, [b.id], [a.id, b.id, a.id]),
                             "three": (a, [c.id], [a.id, c.id, b.id, a.id])}[shape]
    before = {t: log_lines(project, t) for t in (a.id, b.id, c.id)}
    with pytest.raises(DependencyCycle) as caught:
        tasks.update_task(project, ROOM, target.id, by="alice", depends_on=wanted, title="renamed")
    assert caught.value.exit_code == ExitCode.ERROR and caught.value.data["cycle"] == named
    assert all(task_id in caught.value.message for task_id in named) and "\n" not in caught.value.message
    assert {t: log_lines(project, t) for t in before} == before
    assert tasks.load_task(project, ROOM, a.id).title == "a"


def test_a_finished_task_waits_on_nothing(project):
    a, b = add(project, "a"), add(project, "b")
    finish(project, a.id)
    with pytest.raises(InvalidInput, match="finished task waits on nothing"):
        tasks.update_task(project, ROOM, a.id, by="alice", depends_on=[b.id])


# --- what is met, what blocks ---------------------------------------------------------------------

@pytest.mark.parametrize("status", ["cancelled", "failed", "blocked"])
def test_only_done_meets_a_dependency(project, status):
    dep = add(project, "dep", lane="db")
    task = add(project, "task", depends_on=[dep.id])
    claims.set_status(project, ROOM, dep.id, status, by="alice")
    assert tasks.load_task(project, ROOM, task.id).blocked_by == [dep.id]
    assert ready_titles(project, "dev") == []
    text = board_markdown(project, ROOM)
    assert f"({status}" in text
    assert ("a person must decide" in text) is (status != "blocked")


def test_an_archived_dependency_blocks_unless_it_was_done(project):
    dropped, done = add(project, "dropped", lane="db"), add(project, "done", lane="db")
    finish(project, done.id, "db")
    task = add(project, "task", depends_on=[dropped.id, done.id])
    tasks.archive_task(project, ROOM, dropped.id, by="alice")
    tasks.archive_task(project, ROOM, done.id, by="alice")
    assert tasks.load_task(project, ROOM, task.id).blocked_by == [dropped.id]
    view = board_view(project, ROOM)
    assert view["blockers"] == {dropped.id: {"status": "archived", "title": "dropped", "lane": "db"}}
    assert "a person must decide" in board_markdown(project, ROOM)


def test_the_board_counts_ready_and_waiting_and_names_the_blockers(project):
    schema = add(project, "Write the schema", lane="db")
    add(project, "Wire the API", lane="api", depends_on=[schema.id])
    view = board_view(project, ROOM)
    assert view["counts"]["ready"] == 1 and view["counts"]["waiting"] == 1
    assert view["blockers"] == {schema.id: {"status": "todo", "title": "Write the schema", "lane": "db"}}
    assert "waits on `" in board_markdown(project, ROOM) and "“Write the schema” (todo)" in board_markdown(project, ROOM)


# --- handing out work -------------------------------------------------------------------------------

def test_next_hands_out_only_ready_tasks_in_lane_order(project):
    schema = add(project, "schema", lane="db")
    first = add(project, "first", depends_on=[schema.id])
    second = add(project, "second")
    third = add(project, "third")
    claim = claims.next_task(project, ROOM, agent="dev")
    assert claim.task.id == second.id
    assert claims.next_task(project, ROOM, agent="dev").task.id == third.id
    assert claims.next_task(project, ROOM, agent="dev") is None  # only `first` is left, and it waits
    finish(project, schema.id, "db")
    assert claims.next_task(project, ROOM, agent="dev").task.id == first.id


def test_claiming_a_blocked_task_is_refused_naming_what_it_waits_on(project):
    schema = add(project, "Write the schema", lane="db")
    api = add(project, "Wire the API", lane="api", depends_on=[schema.id])
    lines = log_lines(project, api.id)
    with pytest.raises(Blocked) as caught:
        claims.claim_task(project, ROOM, api.id, agent="api")
    assert caught.value.code == "blocked" and caught.value.exit_code == ExitCode.CONFLICT
    assert schema.id in caught.value.message and "Write the schema" in caught.value.message
    assert caught.value.data["blocked_by"] == [schema.id]
    assert log_lines(project, api.id) == lines


def test_ready_work_spans_lanes_and_a_lapsed_lease_is_ready_again(project, monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T09:00:00.000Z")
    schema = add(project, "schema", lane="db")
    add(project, "api", lane="api", depends_on=[schema.id])
    docs = add(project, "docs", lane="writer")
    assert ready_titles(project) == ["schema", "docs"]  # lane order: db, then writer
    assert ready_titles(project, "writer") == ["docs"]
    claims.claim_task(project, ROOM, docs.id, agent="writer", lease="1m")
    assert ready_titles(project) == ["schema"]
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T09:05:00.000Z")
    assert ready_titles(project) == ["schema", "docs"]


def test_readiness_comes_from_the_index_not_from_the_history(project, monkeypatch):
    """A board whose history holds finished tasks with dependencies: once the index is built, ready work
    and `task next` replay no finished task's log."""
    history = [add(project, f"old {n}") for n in range(30)]
    for n, old in enumerate(history):
        if n:
            tasks.update_task(project, ROOM, old.id, by="alice", depends_on=[history[n - 1].id])
        finish(project, old.id)
    waiting = add(project, "waiting", depends_on=[history[-1].id, history[0].id])
    tasks.ready_tasks(project, ROOM)
    read: list[str] = []
    real = fold.replay_file
    monkeypatch.setattr(fold, "replay_file", lambda task_id, *a, **kw: read.append(task_id) or real(task_id, *a, **kw))
    fold._FOLDED.clear()
    assert ready_titles(project) == ["waiting"]
    assert claims.next_task(project, ROOM, agent="dev").task.id == waiting.id
    assert set(read) <= {waiting.id, history[-1].id, history[0].id}  # the claim reads the task's own dependencies
    read.clear()
    tasks.ready_tasks(project, ROOM)
    board_view(project, ROOM)
    assert not set(read) & {h.id for h in history}
    late = add(project, "late", lane="db")
    after = add(project, "after", depends_on=[late.id])
    finish(project, late.id, "db")  # it leaves the open set after its dependent was made
    assert ready_titles(project) == ["after"]
    read.clear()
    assert ready_titles(project) == ["after"] and board_view(project, ROOM)["counts"]["ready"] == 1
    assert late.id not in read and after.id not in read


def test_a_dependency_added_through_a_log_append_is_seen(project):
    """A merge (or `rooms sync`) can append an update to an open task's log: the index notes the new
    dependency's state when it replays that log."""
    dep = add(project, "dep", lane="db")
    finish(project, dep.id, "db")
    other = add(project, "other", lane="db")
    task = add(project, "task")
    tasks.ready_tasks(project, ROOM)
    line = {"at": "2026-01-01T00:00:00.000Z", "by": "bob", "ev": "update", "hlc": "2099-01-01T00:00:00.000Z-0000-000001",
            "changes": {"depends_on": {"add": [dep.id, other.id], "remove": []}}}
    with open(store.task_path(project, ROOM, task.id), "a") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")
    assert ready_titles(project) == ["other"]
    assert openindex.load(project, ROOM)["settled"][dep.id]["status"] == "done"


# --- the index agrees with a whole replay, whatever happens -----------------------------------------

OPS = st.lists(st.tuples(st.sampled_from(["add", "link", "finish", "cancel", "fail", "retry", "archive", "drop"]),
                         st.integers(0, 7), st.lists(st.integers(0, 7), max_size=3)), min_size=1, max_size=25)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_ready_work_from_the_index_is_what_a_whole_replay_says(project, ops):
    for task_id in store.list_task_ids(project, ROOM):
        os.remove(store.task_path(project, ROOM, task_id))
    made: list[str] = []
    for op, which, others in ops:
        target = made[which % len(made)] if made else None
        wanted = [made[o % len(made)] for o in others] if made else []
        try:
            if op == "add" or target is None:
                made.append(add(project, f"t{len(made)}", lane=("a", "b")[len(made) % 2], depends_on=wanted).id)
            elif op == "link":
                tasks.update_task(project, ROOM, target, by="alice", depends_on=wanted)
            elif op == "drop":
                tasks.update_task(project, ROOM, target, by="alice", depends_on=[])
            elif op == "finish":
                finish(project, target, "a")
            elif op in ("cancel", "fail", "retry"):
                claims.set_status(project, ROOM, target, {"cancel": "cancelled", "fail": "failed", "retry": "todo"}[op], by="x")
            else:
                tasks.archive_task(project, ROOM, target, by="alice")
        except (DependencyCycle, InvalidInput, Blocked, claims.InvalidTransition):
            pass
        assert ready_ids(project) == reference_ready(project)
    os.remove(openindex.index_path(project, ROOM))
    assert ready_ids(project) == reference_ready(project)


def ready_ids(project):
    return [t["id"] for t in tasks.ready_tasks(project, ROOM)]


def reference_ready(project):
    everything = {}
    for task_id in store.list_task_ids(project, ROOM):
        everything[task_id] = tasks.load_task(project, ROOM, task_id)
    ready = [t for t in everything.values() if t.claimable and all(
        d in everything and everything[d].status == "done" for d in t.depends_on)]
    return [t.id for t in sorted(ready, key=lambda t: (t.lane, t.order, t.id))]


# --- cycles only a merge can make -----------------------------------------------------------------

def write_update(project, task_id, add_ids):
    line = {"at": "2026-01-01T00:00:00.000Z", "by": "merge", "ev": "update", "hlc": "2099-01-01T00:00:00.000Z-0000-000001",
            "changes": {"depends_on": {"add": add_ids, "remove": []}}}
    with open(store.task_path(project, ROOM, task_id), "a") as handle:
        handle.write(json.dumps(line, sort_keys=True) + "\n")


def test_a_cycle_in_the_files_blocks_both_tasks_and_is_named(project):
    a, b = add(project, "a"), add(project, "b", depends_on=[])
    tasks.update_task(project, ROOM, a.id, by="alice", depends_on=[b.id])
    write_update(project, b.id, [a.id])  # what a merge of two clones can leave
    view = board_view(project, ROOM)
    first, second = sorted([a.id, b.id])
    assert view["cycles"] == [[first, second, first]]
    assert {t["id"]: t["blocked_by"] for lane in view["lanes"] for t in lane["tasks"]} == {a.id: [b.id], b.id: [a.id]}
    assert claims.next_task(project, ROOM, agent="dev") is None
    text = board_markdown(project, ROOM)
    assert "dependency cycle" in text and "a person must decide" in text
    from rooms_cli.board.doctor import check

    found = [f for f in check(project, None) if "dependency cycle" in f.message]
    assert len(found) == 1 and found[0].severity == "error" and a.id in found[0].message and b.id in found[0].message


def test_find_cycles_names_each_cycle_once_from_its_smallest_id():
    edges = {"t-3": ["t-1"], "t-1": ["t-2"], "t-2": ["t-3", "t-4"], "t-4": [], "t-5": ["t-5"], "t-6": ["t-1"]}
    assert deps.find_cycles(edges) == [["t-1", "t-2", "t-3", "t-1"], ["t-5", "t-5"]]
    chain = {f"t-{n}": [f"t-{n + 1}"] for n in range(50_000)}
    assert deps.find_cycles(chain) == []  # no recursion limit


# --- import -----------------------------------------------------------------------------------------

def import_text(project, text, fmt="jsonl"):
    return importing.import_rows(project, ROOM, importing.parse(text, fmt, lane="dev", name="plan.jsonl"), by="alice")


def test_import_links_refs_of_the_file_and_tasks_of_the_board(project):
    old = add(project, "old", lane="db")
    ids = import_text(project, "".join(json.dumps(r) + "\n" for r in [
        {"ref": "api", "title": "Wire the API", "depends_on": ["schema", old.id[:12]]},
        {"ref": "schema", "title": "Write the schema"},
        {"title": "Ship", "depends_on": "api,schema"},
    ]))
    loaded = [tasks.load_task(project, ROOM, i) for i in ids]
    assert loaded[0].depends_on == sorted([ids[1], old.id])
    assert loaded[2].depends_on == sorted([ids[0], ids[1]])
    assert ready_titles(project) == ["old", "Write the schema"]


def test_csv_import_reads_comma_separated_dependencies(project):
    ids = importing.import_rows(project, ROOM, importing.parse(
        'ref,title,depends_on\na,first,\nb,second,"a"\n', "csv", lane="dev", name="plan.csv"), by="alice")
    assert tasks.load_task(project, ROOM, ids[1]).depends_on == [ids[0]]


@pytest.mark.parametrize("rows, named", [
    ([{"ref": "a", "title": "a", "depends_on": ["b"]}, {"ref": "b", "title": "b", "depends_on": ["a"]}],
     "a dependency cycle: plan.jsonl line 2 (a) → plan.jsonl line 3 (b) → plan.jsonl line 2 (a); nothing was imported"),
    ([{"ref": "a", "title": "a", "depends_on": ["a"]}], "a dependency cycle: plan.jsonl line 2 (a) → plan.jsonl line 2 (a)"),
    ([{"ref": "a", "title": "a", "depends_on": ["zz"]}], "plan.jsonl line 2: depends on 'zz', which is neither"),
    ([{"ref": "a", "title": "a"}, {"ref": "a", "title": "b"}], "plan.jsonl line 3: ref 'a' is also the ref of plan.jsonl line 2"),
    ([{"title": "a", "depends_on": 3.5}], "plan.jsonl line 2: depends_on must be a list"),
])
def test_a_bad_dependency_anywhere_refuses_the_whole_import(project, rows, named):
    add(project, "already here")
    with pytest.raises(InvalidInput) as caught:
        import_text(project, "".join(json.dumps(r) + "\n" for r in [{"title": "fine"}, *rows]))
    assert named in caught.value.message
    assert [t["title"] for t in list_tasks(project, ROOM)] == ["already here"]


def test_an_export_round_trips_with_its_dependencies(project, tmp_path):
    schema = add(project, "schema", lane="db")
    add(project, "api", lane="api", depends_on=[schema.id])
    exported = json.dumps(list_tasks(project, ROOM))
    ids = importing.import_rows(project, ROOM, importing.parse(exported, "json", name="export.json"), by="alice")
    copies = {t.title: t for t in (tasks.load_task(project, ROOM, i) for i in ids)}
    assert copies["api"].depends_on == [copies["schema"].id]  # the copy waits on the copy, not on the original


def test_backlog_dependencies_match_ids_the_backlog_way(project, tmp_path):
    folder = tmp_path / "proj" / "backlog"
    (folder / "tasks").mkdir(parents=True)
    (folder / "completed").mkdir()

    def task(where, ident, title, deps=()):
        (folder / where / f"{ident} - {title}.md").write_text(
            f"---\nid: {ident}\ntitle: {title}\nstatus: To Do\ndependencies: [{', '.join(deps)}]\n---\n")

    task("tasks", "TASK-1", "schema")
    task("tasks", "TASK-2", "api", ["task-01", "task-9"])
    task("completed", "task-9", "old")
    ids = importing.import_rows(project, ROOM, importing.backlog_rows(tmp_path / "proj", lane="dev"), by="alice")
    assert tasks.load_task(project, ROOM, ids[1]).depends_on == [ids[0]]  # task-9 is completed: met, dropped
    task("tasks", "TASK-3", "ship", ["task-44"])
    rows = importing.backlog_rows(tmp_path / "proj", lane="dev")
    with pytest.raises(InvalidInput, match="depends on 'task-44'"):
        importing.import_rows(project, ROOM, rows, by="alice")


# --- rooms watch ------------------------------------------------------------------------------------

def test_watch_reports_a_task_becoming_ready(project):
    from rooms_cli.watch import Follower, Selection
    from rooms_cli.watch.render import line

    schema = add(project, "Write the schema", lane="db")
    api = add(project, "Wire the API", lane="api", depends_on=[schema.id])
    docs = add(project, "Write the docs", lane="writer", depends_on=[schema.id, api.id])
    other = add(project, "Other", lane="db")
    follower = Follower(project, Selection(boards=(ROOM,)))
    follower.start()
    finish(project, schema.id, "db")
    ready = [e for e in follower.poll() if e["type"] == "task.ready"]
    assert [(e["task"], e["title"], e["lane"], e["after"], e["room"]) for e in ready] == [
        (api.id, "Wire the API", "api", [schema.id], ROOM)]  # docs still waits on the API
    shown = "".join(text for text, _style in line(ready[0]))
    assert " ready “Wire the API”" in shown and "lane api" in shown
    tasks.update_task(project, ROOM, docs.id, by="alice", depends_on=[schema.id, other.id])
    tasks.update_task(project, ROOM, docs.id, by="alice", depends_on=[schema.id])  # other was not done: freed
    ready = [e for e in follower.poll() if e["type"] == "task.ready"]
    assert [(e["task"], e["after"]) for e in ready] == [(docs.id, [other.id])]
    finish(project, other.id, "db")  # nothing depends on it any more
    assert [e for e in follower.poll() if e["type"] == "task.ready"] == []


def test_rooms_top_marks_a_waiting_task_on_its_board(project):
    from rooms_cli.tui import views

    schema = add(project, "Write the schema", lane="db")
    api = add(project, "Wire the API", lane="api", depends_on=[schema.id])
    board = views.board(project, ROOM)
    rows = {row.id: row for _lane, lane_rows in board["lanes"] for row in lane_rows}
    assert [f for f in rows[api.id].flags if f.startswith("waits on ")] == [f"waits on {board_view(project, ROOM)['short_ids'][schema.id]}"]
    assert not rows[schema.id].flags
    assert board["counts"] == {"todo": 2, "ready": 1, "waiting": 1}
