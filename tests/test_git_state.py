"""Memories, the roundtable queue, the schedule and doctor across real git clones (docs/git.md).

Scenarios work offline in two clones, merge in both directions, and check that git reported no
conflict, nothing was lost or resurrected, both clones read the same, and `rooms doctor` names
what a merge left for a person (an unresolved merge, a missing .gitattributes line, a scheduled
roundtable that ran twice, one spawn alias chosen in two clones).
"""

from __future__ import annotations

import json

import pytest
import yaml
from gitclones import HAVE_GIT, GitClones, MergeConflict, merge_both_ways

pytestmark = pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")

RUN = ("roundtable", "run", "standup", "--turns", "2", "--force")


def lessons(clone) -> list[dict]:
    return clone.rooms("memory", "list")


def test_lessons_learned_and_forgotten_in_two_clones_merge_without_loss_or_resurrection(tmp_path):
    world = GitClones(tmp_path, example="roundtable", setup=lambda seed: seed.rooms(*RUN, "--topic", "base"))
    a, b = world.clone("a"), world.clone("b")
    base = lessons(a)
    doomed = base[0]
    a.rooms("memory", "forget", doomed["agent"], doomed["id"])
    a.rooms(*RUN, "--topic", "learned in a", now="2026-11-21T10:01:00Z")
    b.rooms(*RUN, "--topic", "learned in b", now="2026-11-21T10:02:00Z")
    merge_both_ways(a, b)
    got_a, got_b = lessons(a), lessons(b)
    assert got_a == got_b  # the same lessons in the same order, whichever way the merge went
    ids = {x["id"] for x in got_a}
    assert doomed["id"] not in ids
    assert {x["id"] for x in base[1:]} <= ids
    topics = {x["lesson"].split(",")[0] for x in got_a}
    assert {"On learned in a", "On learned in b"} <= topics


def test_queues_filled_and_run_in_two_clones_merge_into_one_queue(tmp_path):
    world = GitClones(tmp_path, example="roundtable")
    a, b = world.clone("a"), world.clone("b")
    qa = a.rooms("roundtable", "queue", "debate", "--topic", "from a", now="2026-11-21T10:01:00Z")["id"]
    qb = b.rooms("roundtable", "queue", "debate", "--topic", "from b", now="2026-11-21T10:02:00Z")["id"]
    pending_b = b.rooms("roundtable", "queue", "debate", "--topic", "later b", now="2026-11-21T10:03:00Z")["id"]
    a.rooms("tick", now="2026-11-21T10:04:00Z")
    b.rooms("tick", now="2026-11-21T10:05:00Z")
    b.rooms("roundtable", "queue", "debate", "--topic", "after the tick", now="2026-11-21T10:06:00Z")
    merge_both_ways(a, b)
    queue_a, queue_b = a.rooms("roundtable", "queue"), b.rooms("roundtable", "queue")
    assert queue_a == queue_b
    status = {item["id"]: item["status"] for item in queue_a}
    assert status[qa] == status[qb] == status[pending_b] == "done"
    assert sorted(status.values()) == ["done", "done", "done", "pending"]


def schedule_setup(seed):
    config = seed.path / ".rooms.yaml"
    data = yaml.safe_load(config.read_text()) or {}
    data["schedule"] = [{"name": "standup", "hour_utc": 6, "format": "watercooler", "participants": ["random:2"], "pace": 0}]
    config.write_text(yaml.safe_dump(data))


def test_a_schedule_ticked_in_two_clones_merges_and_doctor_reports_the_double_run(tmp_path):
    world = GitClones(tmp_path, example="roundtable", setup=schedule_setup)
    a, b = world.clone("a"), world.clone("b")
    a.rooms("tick", now="2026-11-21T06:05:00Z")
    b.rooms("tick", now="2026-11-21T06:06:00Z")
    merge_both_ways(a, b)
    for clone in (a, b):
        again = clone.rooms("tick", now="2026-11-21T06:30:00Z")
        assert again["steps"]["schedule"] == [] and again["steps"]["roundtables"] == []
        findings = _findings(clone, "schedule")
        assert len(findings) == 1 and "ran 2 times" in findings[0]["message"]
        assert "one clone" in findings[0]["fix"]


def _findings(clone, check: str) -> list[dict]:
    result = clone.run("doctor", "--offline", "--json")
    assert result.exit_code in (0, 1), result.stderr
    return [f for f in result.json()["findings"] if f["check"] == check]


def test_a_pending_duplicate_of_a_scheduled_occurrence_is_not_run_again(tmp_path):
    from rooms_cli.roundtable.queue import replay

    request = {"format": "watercooler", "topic": "x", "participants": ["analyst", "boss"], "pace": 0}
    records = [
        # each clone appended its item as line 4 of the queue
        {"op": "enqueue", "id": "q-2", "ts": "2026-11-21T06:06:00.000Z", "request": request, "by": "schedule", "key": "s@d", "seq": 3},
        {"op": "enqueue", "id": "q-1", "ts": "2026-11-21T06:05:00.000Z", "request": request, "by": "schedule", "key": "s@d", "seq": 3},
    ]
    items = replay(records)
    assert [i.id for i in items.values()] == ["q-1", "q-2"]  # time order, not file order
    assert items["q-1"].status == "pending"
    assert items["q-2"].status == "failed" and "duplicate of q-1" in items["q-2"].error


def test_a_schedule_state_of_a_format_no_release_wrote_is_ignored_and_doctor_names_it(tmp_path):
    world = GitClones(tmp_path, example="roundtable", setup=schedule_setup)
    a = world.clone("a")
    (a.path / ".rooms/schedule").mkdir(exist_ok=True)  # git keeps no empty directory
    (a.path / ".rooms/schedule/state.json").write_text(json.dumps(
        {"fired": {"standup": {"2026-11-21": {"at": "2026-11-21T06:00:00.000Z", "roll": 0.1, "won": True}}}}))
    assert len(a.rooms("tick", now="2026-11-21T06:05:00Z")["steps"]["schedule"]) == 1  # fired.jsonl is what counts
    assert [f["file"] for f in _findings(a, "dropped-format")] == [".rooms/schedule/state.json"]


# --- unresolved merges and doctor ----------------------------------------------------------------

def test_without_the_gitattributes_a_log_conflicts_and_every_command_names_the_file(tmp_path):
    world = GitClones(tmp_path, setup=lambda seed: (seed.path / ".rooms/.gitattributes").unlink())
    a, b = world.clone("a"), world.clone("b")
    a.rooms("send", "from carol", "--to", "reviewer", as_="carol")
    b.rooms("send", "from dave", "--to", "reviewer", as_="dave")
    b.rooms("status", "set", "fine", as_="bob")
    with pytest.raises(MergeConflict, match="inbox/reviewer.jsonl"):
        b.pull(a)
    err = b.rooms("inbox", as_="reviewer", code=1)
    assert err["error"]["code"] == "merge_conflict" and "reviewer.jsonl" in err["error"]["message"]
    assert b.rooms("send", "x", "--to", "reviewer", as_="erin", code=1)["error"]["code"] == "merge_conflict"
    # unrelated commands go on
    assert {e["name"] for e in b.rooms("agents")} >= {"bob", "carol", "dave"}  # a bare list (docs/json.md)
    assert b.rooms("inbox", as_="bob")["messages"] == []
    conflicts = _findings(b, "merge-conflict")
    assert [f["file"] for f in conflicts] == [".rooms/inbox/reviewer.jsonl"]
    assert "git add" in conflicts[0]["fix"]
    missing = _findings(b, "git")
    assert missing and "*.jsonl merge=union" in missing[0]["message"] and ">> .rooms/.gitattributes" in missing[0]["fix"]


def test_doctor_is_quiet_about_git_on_a_fresh_project(tmp_path):
    world = GitClones(tmp_path)
    a = world.clone("a")
    assert _findings(a, "git") == [] and _findings(a, "merge-conflict") == []


def test_doctor_names_a_yaml_or_markdown_file_left_with_conflict_markers(tmp_path):
    world = GitClones(tmp_path)
    a = world.clone("a")
    agent = a.path / ".rooms/agents/reviewer.md"
    agent.write_text("<<<<<<< HEAD\n" + agent.read_text() + "=======\nx\n>>>>>>> theirs\n")
    assert [f["file"] for f in _findings(a, "merge-conflict")] == [".rooms/agents/reviewer.md"]
    err = a.rooms("agent", "show", "reviewer", code=1)
    assert err["error"]["code"] == "merge_conflict"


def test_a_markdown_heading_underlined_with_equals_signs_is_not_a_conflict():
    from rooms_cli.store.conflicts import conflict_line

    assert conflict_line(b"Title\n=======\n\ntext\n") is None
    assert conflict_line(b"a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n") == 2


def test_doctor_reports_one_spawn_alias_chosen_in_two_clones(tmp_path):
    world = GitClones(tmp_path)
    a, b = world.clone("a"), world.clone("b")
    for clone, sid, parent in ((a, "s-01aaaaaaaaaaaaaaaaaaaaaaaa", "alice"), (b, "s-01bbbbbbbbbbbbbbbbbbbbbbbb", "bob")):
        (clone.path / ".rooms/spawns").mkdir(exist_ok=True)
        (clone.path / f".rooms/spawns/{sid}.json").write_text(json.dumps(
            {"id": sid, "parent": parent, "alias": "api-work", "prompt": "p", "status": "done", "delivered": 1,
             "created": "2026-11-21T10:00:00.000Z"}))
    merge_both_ways(a, b)
    found = _findings(a, "spawn")
    assert len(found) == 1 and "api-work" in found[0]["message"] and "2 spawns" in found[0]["message"]


def test_a_task_claimed_in_three_clones_merges_and_doctor_names_the_double_claim(tmp_path):
    world = GitClones(tmp_path)
    first = world.clone("first")
    task = first.rooms("task", "add", "Shared", "--lane", "reviewer", "--done", "x")["id"]
    first.sync()
    clones = [world.clone(n) for n in ("a", "b", "c")]
    for i, clone in enumerate(clones):
        clone.rooms("task", "claim", task, as_=f"worker{i}", now=f"2026-11-21T10:0{i}:00Z")
        clone.rooms("task", "add", f"Own task {clone.name}", "--lane", "reviewer", "--done", "x")
    for clone in clones:
        clone.sync()
    for clone in clones:
        clone.pull()
        titles = sorted(t["title"] for lane in clone.rooms("board")["lanes"] for t in lane["tasks"])
        assert titles == ["Own task a", "Own task b", "Own task c", "Shared"]
        board = [f for f in _findings(clone, "board") if task in f["message"]]
        assert board, "the double claim is not reported"
    world.assert_no_conflicts()
