"""`rooms search` at the Python level: what is found, how it is ranked and filtered, and the index kept
up to date from what each log appended, rebuilt when missing, damaged, foreign or planted, never
trusted over the logs (rooms_cli/search, rooms_cli/store/ftsindex.py)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from rooms_cli.agents.memories import add_lessons, forget
from rooms_cli.chat.rooms import create_room
from rooms_cli.chat.transcript import append_message
from rooms_cli.core.errors import InvalidInput, LockBusy, UsageError
from rooms_cli.groups.broadcasts import record_reply
from rooms_cli.messaging.inbox import deliver
from rooms_cli.search import engine
from rooms_cli.search.engine import search
from rooms_cli.store import ftsindex, layout, locks


def kinds_and_ids(project, query, **filters):
    return [(hit.kind, hit.id) for hit in search(project, query, **filters).hits]


def ids(project, query, **filters):
    return [hit.id for hit in search(project, query, **filters).hits]


def settle(project_dir, seconds=30):
    """Date every file and folder of .rooms/ `seconds` back: what a project looks like a while after its writes."""
    then = time.time() - seconds
    for folder, dirs, files in os.walk(Path(project_dir) / ".rooms"):
        for name in files + dirs:
            os.utime(os.path.join(folder, name), (then, then), follow_symlinks=False)
        os.utime(folder, (then, then))


def settled_index(project, query):
    """The index built, then everything dated back past its racy window and looked at once more: the next
    search sees only what changes after this."""
    search(project, query)
    settle(project.root)
    search(project, query)


@pytest.fixture
def room(project):
    create_room(project, "api", ["architect", "reviewer"])
    return "api"


# -- what is found -------------------------------------------------------------------------------------

def test_each_kind_is_found_with_where_it_lives_who_wrote_it_when_and_its_reference(project, room, cli):
    said = append_message(project, room, "alice", "We cap the rate limit at 100 requests a minute.")
    sent = deliver(project, "reviewer", "bob", "Is the rate limit per token or per user?")
    task = cli("task", "add", "Document the rate limit", "--lane", "architect", "--done", "docs/limits.md exists",
               "--room", room, "--as", "carol", "--json").json()
    cli("group", "spawn", "rev", "--profile", "reviewer")
    broadcast = cli("group", "broadcast", "rev", "--objective", "Check the rate limit math", "--output-format", "",
                    "--tool-guidance", "", "--boundaries", "", "--as", "dana", "--json").json()
    record_reply(project, "rev", broadcast["broadcast_id"], "reviewer", "The rate limit math holds.")
    lesson = add_lessons(project, "analyst", ["Quote the rate limit before the price."], "rt-1")[0]

    hits = {hit.id: hit for hit in search(project, "rate limit").hits}
    hits = {kind: hits[rid] for kind, rid in (("chat", said.id), ("message", sent.id), ("task", task["id"]), ("memory", lesson["id"]))}
    assert hits["chat"].to_json() == {"kind": "chat", "id": said.id, "ref": f"msg:{said.id}", "who": "alice", "ts": said.ts,
                                      "snippet": "We cap the **rate** **limit** at 100 requests a minute.", "room": "api"}
    assert hits["message"].to_json() == {"kind": "message", "id": sent.id, "ref": f"inbox:{sent.id}", "who": "bob", "ts": sent.ts,
                                         "snippet": "Is the **rate** **limit** per token or per user?", "inbox": "reviewer"}
    assert hits["task"].to_json() == {"kind": "task", "id": task["id"], "ref": f"task:{task['id']}", "who": "carol", "ts": task["created_at"],
                                      "snippet": "Document the **rate** **limit**", "room": "api", "lane": "architect",
                                      "status": "todo", "title": "Document the rate limit"}
    groups = [hit.to_json() for hit in search(project, "rate limit", within=["groups"]).hits]
    reply = next(g for g in groups if g["event"] == "reply")
    assert {(g["event"], g["who"], g["ref"], g["group"]) for g in groups} == {
        ("broadcast", "dana", f"group:{broadcast['broadcast_id']}", "rev"), ("reply", "reviewer", f"group:{reply['id']}", "rev")}
    assert hits["memory"].to_json() == {"kind": "memory", "id": lesson["id"], "ref": f"lesson:{lesson['id']}", "who": "analyst",
                                        "ts": lesson["ts"], "snippet": "Quote the **rate** **limit** before the price.",
                                        "agent": "analyst"}
    assert {hit.where for hit in hits.values()} == {"#api", "reviewer's inbox", "#api board · architect", "analyst's memories"}
    assert {hit.where for hit in search(project, "rate limit", within=["groups"]).hits} == {"group rev", "group rev · reply"}
    # the broadcast's copy in the member's inbox is the group log's broadcast again: found once, as the broadcast
    assert [hit.kind for hit in search(project, "math").hits].count("group") == 2 and len(search(project, "math").hits) == 2


def test_a_chat_hit_s_reference_is_what_task_done_takes_as_an_artifact(project, room, cli):
    append_message(project, room, "alice", "Benchmarks: the cache halves p99 latency.")
    task = cli("task", "add", "Measure the cache", "--lane", "architect", "--done", "numbers posted", "--room", room, "--json").json()
    cli("task", "claim", task["id"], "--room", room, "--as", "architect")
    [hit] = search(project, "cache latency", within=["chat"]).hits
    done = cli("task", "done", task["id"], "--summary", "measured", "--artifact", hit.ref, "--room", room, "--as", "architect", "--json")
    assert done.exit_code == 0, done.stderr
    shown = cli("task", "show", task["id"], "--room", room, "--json").json()
    assert shown["record"]["artifacts"] == [hit.ref]


def test_a_task_is_found_by_its_detail_definition_of_done_and_result_and_shows_its_state_now(project, room, cli):
    task = cli("task", "add", "Rotate keys", "--lane", "architect", "--done", "the vault holds new keys",
               "--detail", "quarterly rotation", "--room", room, "--json").json()["id"]
    assert ids(project, "vault") == ids(project, "quarterly") == [task]
    cli("task", "update", task, "--title", "Rotate signing keys", "--room", room)
    cli("task", "claim", task, "--room", room, "--as", "architect")
    cli("task", "done", task, "--summary", "rotated with the HSM", "--next", "audit in March", "--room", room, "--as", "architect")
    [hit] = search(project, "HSM").hits
    assert (hit.id, hit.title, hit.status, hit.lane) == (task, "Rotate signing keys", "done", "architect")
    assert ids(project, "march audit") == [task]
    assert ids(project, "Rotate keys", within=["tasks"]) == [task]


def test_a_pass_a_join_and_a_budget_note_are_not_documents_only_what_was_said(project, room):
    append_message(project, room, "reviewer", "nods along, keeps the rate card", kind="pass")
    append_message(project, room, "rooms", "Turn budget used up for the rate card.", kind="budget_exhausted")
    said = append_message(project, room, "alice", "The rate card is final.")
    assert ids(project, "rate card") == [said.id]


def test_a_forgotten_lesson_is_no_longer_found(project):
    keep, drop = add_lessons(project, "analyst", ["Lead with the churn number.", "Churn is seasonal."], "rt-1")
    assert sorted(ids(project, "churn")) == sorted([keep["id"], drop["id"]])
    forget(project, "analyst", [drop["id"]])
    assert ids(project, "churn") == [keep["id"]]


def test_a_title_match_ranks_above_the_same_word_in_passing(project, room, cli):
    for n in range(3):
        append_message(project, room, "alice", f"Note {n}: we should look at the migration later, among other things.")
    task = cli("task", "add", "Migration", "--lane", "architect", "--done", "done", "--room", room, "--json").json()["id"]
    assert ids(project, "migration")[0] == task


def test_hits_come_best_first_and_the_total_counts_every_match(project, room):
    for n in range(30):
        append_message(project, room, "alice", f"status update {n} about the outage")
    best = append_message(project, room, "bob", "outage outage outage")
    results = search(project, "outage", limit=5)
    assert results.hits[0].id == best.id
    assert (len(results.hits), results.total, results.remaining) == (5, 31, 26)


# -- filters -------------------------------------------------------------------------------------------

def test_filters_narrow_by_kind_room_author_and_time(project, room, monkeypatch):
    create_room(project, "ops", ["architect"])
    monkeypatch.setenv("ROOMS_NOW", "2026-03-01T10:00:00Z")
    old = append_message(project, room, "alice", "deploy friday")
    monkeypatch.setenv("ROOMS_NOW", "2026-03-05T10:00:00Z")
    new = append_message(project, "ops", "bob", "deploy monday")
    sent = deliver(project, "reviewer", "alice", "deploy when ready")
    assert set(ids(project, "deploy")) == {old.id, new.id, sent.id}
    assert set(ids(project, "deploy", within=["chat"])) == {old.id, new.id}
    assert set(ids(project, "deploy", within=["messages,chat"])) == {old.id, new.id, sent.id}
    assert ids(project, "deploy", room="ops") == [new.id]
    assert set(ids(project, "deploy", who="alice")) == {old.id, sent.id}
    assert set(ids(project, "deploy", since="2026-03-02T00:00:00.000Z")) == {new.id, sent.id}
    assert set(ids(project, "deploy", since="2026-03-02")) == {new.id, sent.id}
    assert set(ids(project, "deploy", since="2d")) == {new.id, sent.id}  # two days back from ROOMS_NOW
    assert set(ids(project, "deploy", since="5d")) == {old.id, new.id, sent.id}
    assert ids(project, "deploy", within=["chat"], who="alice", room="api") == [old.id]


@pytest.mark.parametrize(("filters", "error", "said"), [
    ({"within": ["chats"]}, UsageError, "--in 'chats' is not something searched; use chat, messages, tasks, groups, memories"),
    ({"limit": 0}, UsageError, "--limit must be between 1 and 1000 (it is 0)"),
    ({"limit": 1001}, UsageError, "--limit must be between 1 and 1000 (it is 1001)"),
    ({"room": "../x"}, InvalidInput, "room id"),
    ({"who": " "}, InvalidInput, "--from name"),
    ({"who": "a/b"}, InvalidInput, "--from name"),
    ({"since": "last week"}, UsageError, "--since 'last week' is neither a time"),
])
def test_a_bad_filter_is_one_sentence_before_the_index_is_touched(project, filters, error, said):
    with pytest.raises(error) as caught:
        search(project, "anything", **filters)
    assert said in str(caught.value)
    assert not Path(layout.search_index_file(project)).exists()


# -- the index follows the logs -------------------------------------------------------------------------

def reads(monkeypatch):
    """Record (log, start) of every read the index makes of a log."""
    seen = []
    real = ftsindex.read_log

    def recording(path, after=None):
        result = real(path, after)
        seen.append((os.path.basename(path), result.start if result else None))
        return result

    monkeypatch.setattr(ftsindex, "read_log", recording)
    return seen


def test_a_search_reads_only_what_each_log_appended_since_the_last(project, room, monkeypatch):
    for n in range(50):
        append_message(project, room, "alice", f"line {n}")
    search(project, "line")
    size = Path(layout.transcript_file(project, room)).stat().st_size
    new = append_message(project, room, "bob", "a fresh idea")
    seen = reads(monkeypatch)
    assert ids(project, "fresh idea") == [new.id]
    assert ("transcript.jsonl", size) in seen and ("transcript.jsonl", 0) not in seen


def test_a_settled_board_learns_of_an_append_from_the_journal_alone(project, room, cli, monkeypatch):
    task = cli("task", "add", "Fix the flaky test", "--lane", "architect", "--done", "green", "--room", room, "--json").json()["id"]
    settled_index(project, "flaky")
    stats = []
    real = ftsindex.read_log
    monkeypatch.setattr(ftsindex, "read_log", lambda path, after=None: stats.append(os.path.basename(path)) or real(path, after))
    cli("task", "update", task, "--detail", "quarantined in CI", "--room", room)
    assert ids(project, "quarantined") == [task]
    assert set(stats) == {task.lower() + ".jsonl"}  # the journal named it (and the hit is read back): no other log


def test_a_log_cut_short_or_rewritten_is_read_again_whole(project, room):
    path = Path(layout.transcript_file(project, room))
    first = append_message(project, room, "alice", "original words")
    kept = path.read_bytes()
    append_message(project, room, "alice", "more words that will be lost")
    assert len(ids(project, "words")) == 2
    path.write_bytes(kept)  # truncated: a `git reset` of the last commit
    assert ids(project, "words") == [first.id]
    line = json.loads(kept)
    line["text"] = "rewritten history"  # the same file rewritten: a rebase that edited a line
    path.write_text(json.dumps(line) + "\n")
    assert ids(project, "original") == []
    assert ids(project, "rewritten") == [first.id]


def test_a_log_rewritten_in_place_at_the_same_size_is_seen(project, room):
    path = Path(layout.transcript_file(project, room))
    said = append_message(project, room, "alice", "the cat sat")
    search(project, "cat")
    path.write_bytes(path.read_bytes().replace(b"the cat sat", b"the dog sat"))
    assert ids(project, "cat") == []
    assert ids(project, "dog") == [said.id]


def test_a_log_git_wrote_anew_with_more_lines_is_read_on_from_where_it_was(project, room, monkeypatch):
    path = Path(layout.transcript_file(project, room))
    append_message(project, room, "alice", "before the pull")
    search(project, "pull")
    size = path.stat().st_size
    copy = path.with_name("copy.tmp")
    copy.write_bytes(path.read_bytes() + (json.dumps({"id": "m-01REMOTE", "ts": "2026-01-01T00:00:00.000Z", "room": room,
                                                      "speaker": "zed", "kind": "message", "text": "after the pull"}) + "\n").encode())
    os.replace(copy, path)  # a new inode, the old bytes first: what git does to a union-merged log
    seen = reads(monkeypatch)
    assert ids(project, "after") == ["m-01REMOTE"]
    assert ("transcript.jsonl", size) in seen


def test_a_removed_log_or_room_takes_its_documents_out(project, room):
    create_room(project, "scratch", ["architect"])
    deliver(project, "reviewer", "bob", "ephemeral note")
    append_message(project, "scratch", "alice", "ephemeral scratch")
    assert len(ids(project, "ephemeral")) == 2
    Path(layout.inbox_file(project, "reviewer")).unlink()
    shutil.rmtree(layout.room_dir(project, "scratch"))
    assert ids(project, "ephemeral") == []


def test_a_line_still_being_written_is_read_once_it_is_whole(project, room):
    path = Path(layout.transcript_file(project, room))
    append_message(project, room, "alice", "complete")
    line = json.dumps({"id": "m-01HALF", "ts": "2026-01-01T00:00:00.000Z", "room": room, "speaker": "bob",
                       "kind": "message", "text": "half written"})
    with open(path, "a") as out:
        out.write(line[:30])
    assert ids(project, "half") == []
    with open(path, "a") as out:
        out.write(line[30:] + "\n")
    assert ids(project, "half") == ["m-01HALF"]


def test_bad_lines_are_skipped_and_the_rest_is_found(project, room):
    path = Path(layout.transcript_file(project, room))
    good = append_message(project, room, "alice", "good words")
    with open(path, "a") as out:
        out.write("{not json\n")
        out.write(json.dumps({"id": "m-01BAD", "ts": "x", "room": room, "speaker": "b", "kind": "message", "text": 5}) + "\n")
    after = append_message(project, room, "alice", "more good words")
    assert sorted(ids(project, "good")) == sorted([good.id, after.id])


# -- derived, local, never trusted ----------------------------------------------------------------------

def test_deleting_the_index_loses_nothing(project, room):
    for n in range(5):
        append_message(project, room, "alice", f"keep {n}")
    before = [hit.to_json() for hit in search(project, "keep").hits]
    Path(layout.search_index_file(project)).unlink()
    assert [hit.to_json() for hit in search(project, "keep").hits] == before


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "directory", "symlink out", "symlink in"])
def test_a_damaged_or_planted_index_file_is_built_anew(project, room, damage, tmp_path):
    said = append_message(project, room, "alice", "survives damage")
    search(project, "damage")
    index = Path(layout.search_index_file(project))
    target = Path(tmp_path / "elsewhere.sqlite" if damage == "symlink out" else layout.transcript_file(project, room))
    kept = target.read_bytes() if damage == "symlink in" else index.read_bytes()
    if damage == "garbage":
        index.write_bytes(os.urandom(8192))
    elif damage == "truncated":
        index.write_bytes(kept[: 4096 + 100])
    elif damage == "empty":
        index.write_bytes(b"")
    elif damage == "directory":
        index.unlink()
        (index / "inside").mkdir(parents=True)
    else:
        if damage == "symlink out":
            target.write_bytes(kept)
        index.unlink()
        index.symlink_to(target)
    assert ids(project, "damage") == [said.id]
    assert index.is_file() and not index.is_symlink()
    if damage.startswith("symlink"):
        assert target.read_bytes() == kept  # never written through


def test_an_index_with_a_trigger_view_or_other_schema_is_never_opened_as_ours(project, room):
    said = append_message(project, room, "alice", "trusted words")
    search(project, "trusted")
    index = Path(layout.search_index_file(project))
    db = sqlite3.connect(index)
    db.execute("CREATE TABLE evil(x)")
    db.execute("CREATE TRIGGER planted AFTER INSERT ON docs BEGIN INSERT INTO evil VALUES (1); END")
    db.commit()
    db.close()
    append_message(project, room, "alice", "more trusted words")
    assert len(ids(project, "trusted")) == 2 and said.id in ids(project, "trusted")
    db = sqlite3.connect(index)
    assert db.execute("SELECT name FROM sqlite_master WHERE name IN ('evil', 'planted')").fetchall() == []


def test_an_index_from_another_project_or_version_never_shows_what_this_project_s_logs_do_not_hold(project, room, tmp_path):
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    initialize(tmp_path / "other")
    other = open_project(tmp_path / "other")
    create_room(other, "api", [])
    append_message(other, "api", "mallory", "wire the funds today")
    search(other, "funds")
    append_message(project, room, "alice", "local words")
    search(project, "local")
    index = Path(layout.search_index_file(project))
    index.unlink()
    shutil.copy(layout.search_index_file(other), index)  # planted: another project's index, valid in itself
    assert ids(project, "funds") == []
    assert len(ids(project, "local")) == 1
    db = sqlite3.connect(index)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    inode = index.stat().st_ino
    assert len(ids(project, "local")) == 1
    assert index.stat().st_ino != inode  # another version's index: built anew


def test_a_planted_document_is_never_shown_only_what_the_logs_hold(project, room):
    said = append_message(project, room, "alice", "the launch is on track")
    search(project, "launch")
    db = sqlite3.connect(layout.search_index_file(project))
    row = db.execute("SELECT id, title, body FROM docs WHERE rid = ?", (said.id,)).fetchone()
    db.execute("INSERT INTO text_index (text_index, rowid, title, body) VALUES ('delete', ?, ?, ?)", row)
    db.execute("UPDATE docs SET body = 'the launch is cancelled, sell everything' WHERE id = ?", (row[0],))
    db.execute("INSERT INTO text_index (rowid, title, body) SELECT id, title, body FROM docs WHERE id = ?", (row[0],))
    db.commit()
    db.close()
    assert ids(project, "cancelled") == []
    [hit] = search(project, "launch").hits
    assert hit.snippet == "the **launch** is on track"


def test_a_hit_from_a_log_changed_behind_the_index_s_back_is_checked_against_the_log(project, room, cli):
    task = cli("task", "add", "Old title", "--lane", "architect", "--done", "done", "--room", room, "--json").json()["id"]
    settled_index(project, "old")
    log = Path(layout.task_file(project, room, task))
    with open(log, "a") as out:  # another tool appends in place: no journal note, the folder unchanged
        out.write(json.dumps({"ev": "update", "at": "2026-01-01T00:00:00.000Z", "by": "x", "changes": {"title": "New name"},
                              "hlc": "2099-01-01T00:00:00.000Z-0000-abcdef"}) + "\n")
    assert ids(project, "old") == []  # the hit no longer matches its log: read again, not shown
    assert ids(project, "new name") == [task]


def test_a_busy_index_is_exit_3_after_the_lock_timeout(project, room, monkeypatch):
    append_message(project, room, "alice", "words")
    monkeypatch.setenv("ROOMS_LOCK_TIMEOUT", "0.2")
    held = locks.acquire(layout.search_index_file(project), 1)
    try:
        with pytest.raises(LockBusy) as caught:
            search(project, "words")
    finally:
        held.release()
    assert caught.value.exit_code == 3 and "search index" in str(caught.value)


def test_a_read_only_tree_searches_an_index_built_in_memory(project, room, monkeypatch):
    said = append_message(project, room, "alice", "read only words")

    def refused(path, timeout):
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(locks, "acquire", refused)
    assert ids(project, "read only") == [said.id]
    assert not Path(layout.search_index_file(project)).exists()


def test_without_fts5_search_says_so_in_one_sentence(project, monkeypatch):
    monkeypatch.setattr(ftsindex, "_EXPECTED", [])
    monkeypatch.setattr(ftsindex, "_SCHEMA", (*ftsindex._SCHEMA[:-1], "CREATE VIRTUAL TABLE text_index USING fts5nope(x)"))
    with pytest.raises(ftsindex.Unavailable) as caught:
        search(project, "words")
    assert "needs SQLite's FTS5" in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.exit_code == 1


def test_a_journal_emptied_since_the_last_search_means_a_full_look(project, room, cli):
    task = cli("task", "add", "Alpha", "--lane", "architect", "--done", "x", "--room", room, "--json").json()["id"]
    settled_index(project, "alpha")
    journal = Path(project.dir) / "run" / "changes"
    journal.write_bytes(b"")  # a writer past its size limit empties it
    log = Path(layout.task_file(project, room, task))
    with open(log, "a") as out:
        out.write(json.dumps({"ev": "update", "at": "2026-01-01T00:00:00.000Z", "by": "x", "changes": {"detail": "beta"},
                              "hlc": "2099-01-01T00:00:00.000Z-0000-abcdef"}) + "\n")
    with open(journal, "a") as out:
        out.write("rooms/other/transcript.jsonl\n" * 3)  # refilled past where the index was: not the same journal
    assert ids(project, "beta") == [task]


def test_the_search_limit_and_kinds_reach_the_engine_as_given(project):
    assert engine.kinds_of(None) == ("chat", "message", "task", "group", "memory")
    assert engine.kinds_of(["tasks", "chat,tasks"]) == ("task", "chat")


def test_an_index_file_that_keeps_failing_leaves_the_search_to_an_index_in_memory(project, room, monkeypatch):
    said = append_message(project, room, "alice", "full disk words")

    def full(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ftsindex.os, "replace", full)
    assert ids(project, "disk") == [said.id]
    assert not Path(layout.search_index_file(project)).exists()


def every_task_look(monkeypatch):
    """Record each time a search stats every task log of a board."""
    from rooms_cli.search import refresh

    looks = []
    real = refresh.Refresh._every_task

    def recording(self, room, names):
        looks.append(room)
        return real(self, room, names)

    monkeypatch.setattr(refresh.Refresh, "_every_task", recording)
    return looks


def test_a_task_rooms_adds_to_a_settled_board_is_read_without_stating_the_others(project, room, cli, monkeypatch):
    for n in range(5):
        cli("task", "add", f"Existing {n}", "--lane", "architect", "--done", "x", "--room", room)
    settled_index(project, "existing")
    looks = every_task_look(monkeypatch)
    added = cli("task", "add", "Brand new plan", "--lane", "architect", "--done", "x", "--room", room, "--json").json()["id"]
    assert ids(project, "brand new") == [added]
    assert looks == []  # the journal names the one new log; the folder's other entries are as they were


def test_a_task_log_git_wrote_anew_beside_a_task_rooms_added_is_still_seen(project, room, cli):
    old = cli("task", "add", "Alpha plan", "--lane", "architect", "--done", "x", "--room", room, "--json").json()["id"]
    settled_index(project, "plan")
    log = Path(layout.task_file(project, room, old))
    pulled = log.with_name("pulled.tmp")
    pulled.write_bytes(log.read_bytes() + (json.dumps({"ev": "update", "at": "2026-01-01T00:00:00.000Z", "by": "x",
                                                       "changes": {"detail": "gamma rays"},
                                                       "hlc": "2099-01-01T00:00:00.000Z-0000-abcdef"}) + "\n").encode())
    os.replace(pulled, log)  # a pull merged it: a new file under the old name, no journal note
    added = cli("task", "add", "Beta plan", "--lane", "architect", "--done", "x", "--room", room, "--json").json()["id"]
    assert ids(project, "gamma") == [old]
    assert ids(project, "beta") == [added]


def test_a_board_folder_that_changed_without_rooms_is_looked_at_whole(project, room, cli, monkeypatch):
    task = cli("task", "add", "Delta plan", "--lane", "architect", "--done", "x", "--room", room, "--json").json()["id"]
    settled_index(project, "plan")
    log = Path(layout.task_file(project, room, task))
    copy = log.with_name("copy.tmp")
    copy.write_bytes(log.read_bytes().replace(b"Delta plan", b"Omega plan"))
    os.replace(copy, log)  # a checkout: the same names, one file anew
    looks = every_task_look(monkeypatch)
    assert ids(project, "omega") == [task]
    assert looks == [room]


def test_a_search_that_finds_nothing_changed_writes_nothing(project, room, cli):
    create_room(project, "quiet", ["architect"])  # a room without a board: its missing folder is looked at each time
    append_message(project, room, "alice", "steady state")
    cli("task", "add", "Steady task", "--lane", "architect", "--done", "x", "--room", room)
    settled_index(project, "steady")
    index = Path(layout.search_index_file(project))
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    assert len(ids(project, "steady")) == 2
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
