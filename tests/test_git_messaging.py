"""Inbox, read state and status across real git clones (docs/git.md).

Each scenario works offline in two or three clones, commits, merges (in both directions where the
order of the merged lines could matter) and checks: git reported no conflict, no message is lost,
no two messages show the same number, nothing unread looks read, and a reply reaches the sender
of the message it answers.
"""

from __future__ import annotations

import json

import pytest
from gitclones import HAVE_GIT, GitClones, merge_both_ways

pytestmark = pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")

T0 = "2026-11-21T10:00:00Z"


def at(minute: int) -> str:
    return f"2026-11-21T10:{minute:02d}:00Z"


def inbox(clone, agent: str, *flags: str) -> dict:
    return clone.rooms("inbox", "--peek", *flags, as_=agent)


def refs(clone, agent: str) -> list[str]:
    return [m["ref"] for m in inbox(clone, agent)["messages"]]


@pytest.fixture
def world(tmp_path):
    return GitClones(tmp_path)


def issue_scenario(world):
    """The issue's report: carol writes in A; dave writes in B where the reviewer reads it; merge."""
    a, b = world.clone("a"), world.clone("b")
    a.rooms("send", "from carol", "--to", "reviewer", as_="carol", now=at(1))
    b.rooms("send", "from dave", "--to", "reviewer", as_="dave", now=at(2))
    b.rooms("inbox", as_="reviewer", now=at(3))
    return a, b


def test_a_message_read_in_one_clone_does_not_hide_the_other_clones_message(world):
    a, b = issue_scenario(world)
    merge_both_ways(a, b)
    for clone in (a, b):
        unread = inbox(clone, "reviewer", "--unread")
        assert [m["text"] for m in unread["messages"]] == ["from carol"], clone
        assert unread["unread"] == 1


def test_no_two_messages_show_the_same_reference_after_a_merge(world):
    a, b = issue_scenario(world)
    merge_both_ways(a, b)
    for clone in (a, b):
        shown = refs(clone, "reviewer")
        assert len(shown) == 2 and len(set(shown)) == 2, shown
        text = clone.run("inbox", "--peek", as_="reviewer").stdout
        labels = [line.split()[2] for line in text.splitlines()]
        assert len(set(labels)) == 2, text
    # both clones show the same thing, whichever way the merge went
    assert inbox(a, "reviewer")["messages"] == inbox(b, "reviewer")["messages"]


def test_a_number_two_messages_share_after_a_merge_is_refused_not_misrouted(world):
    a, b = issue_scenario(world)
    merge_both_ways(a, b)
    err = b.rooms("send", "re", "--reply-to", "1", as_="reviewer", code=1)
    assert err["error"]["code"] == "invalid_input"
    assert "shared by 2 messages" in err["error"]["message"]
    assert not b.path.joinpath(".rooms/inbox/carol.jsonl").exists()
    assert not b.path.joinpath(".rooms/inbox/dave.jsonl").exists()


def test_a_reply_by_id_prefix_reaches_the_sender_of_that_message(world):
    a, b = issue_scenario(world)
    merge_both_ways(a, b)
    messages = inbox(b, "reviewer")["messages"]
    for message in messages:
        sent = b.rooms("send", f"re {message['text']}", "--reply-to", message["ref"], as_="reviewer")
        assert sent["to"] == [message["from"]]
        assert sent["reply_to_id"] == message["id"]
    assert [m["text"] for m in inbox(b, "carol")["messages"]] == ["re from carol"]
    assert [m["text"] for m in inbox(b, "dave")["messages"]] == ["re from dave"]


def test_new_messages_after_a_merge_get_a_fresh_number(world):
    a, b = issue_scenario(world)
    merge_both_ways(a, b)
    sent = b.rooms("send", "later", "--to", "reviewer", as_="erin", now=at(9))
    assert sent["delivered"][0]["n"] == 2
    shown = refs(b, "reviewer")
    assert shown[-1] == "2" and len(set(shown)) == 3
    reply = b.rooms("send", "ok erin", "--reply-to", "2", as_="reviewer")
    assert reply["to"] == ["erin"]


def test_the_stop_hook_blocks_on_a_message_that_arrived_by_merge(world):
    a, b = issue_scenario(world)
    merge_both_ways(a, b)
    out = b.run("hook", "claude-code", "stop", "--timeout", "0", as_="reviewer", input="{}")
    assert out.exit_code == 0
    answer = json.loads(out.stdout)
    assert answer["decision"] == "block" and "from carol" in answer["reason"]
    again = b.run("hook", "claude-code", "stop", "--timeout", "0", as_="reviewer", input="{}")
    assert again.stdout.strip() == ""


def test_reads_in_two_clones_merge_into_the_union(world):
    a, b = world.clone("a"), world.clone("b")
    a.rooms("send", "one", "--to", "bob", as_="alice", now=at(1))
    a.sync()
    b.pull()
    b.rooms("send", "two", "--to", "bob", as_="carol", now=at(2))
    a.rooms("inbox", as_="bob", now=at(3))  # bob reads "one" in A
    b.rooms("inbox", "--peek", as_="bob", now=at(3))  # and only peeks in B
    merge_both_ways(a, b)
    for clone in (a, b):
        assert [m["text"] for m in inbox(clone, "bob", "--unread")["messages"]] == ["two"]
    b.rooms("inbox", as_="bob", now=at(4))
    a.pull(b)
    assert inbox(a, "bob", "--unread")["messages"] == []


def test_three_clones_each_send_and_read_then_merge_in_a_chain(world):
    clones = [world.clone(n) for n in ("a", "b", "c")]
    for i, clone in enumerate(clones):
        clone.rooms("send", f"hello from {clone.name}", "--to", "hub", as_=f"s{i}", now=at(i + 1))
        clone.rooms("send", f"to s{i}", "--to", f"s{i}", as_="hub", now=at(i + 5))
    clones[0].rooms("inbox", as_="hub", now=at(10))  # hub read what it had in a
    for clone in clones:
        clone.sync()
    for clone in clones:
        clone.pull()
    for clone in clones:
        got = inbox(clone, "hub")["messages"]
        assert sorted(m["text"] for m in got) == ["hello from a", "hello from b", "hello from c"]
        assert len({m["ref"] for m in got}) == 3
        assert sorted(m["text"] for m in inbox(clone, "hub", "--unread")["messages"]) == ["hello from b", "hello from c"]
        for m in got:
            sent = clone.rooms("send", "ack", "--reply-to", m["ref"], as_="hub")
            assert sent["to"] == [m["from"]]
    world.assert_no_conflicts()


def test_an_upto_read_mark_of_a_format_no_release_wrote_marks_nothing_and_numbers_stay(world):
    a = world.clone("a")
    (a.path / ".rooms/inbox/read").mkdir(parents=True)
    lines = [{"n": i, "id": f"i-0000000000{i}", "ts": at(i).replace("Z", ".000Z"), "from": "alice", "to": "bob",
              "kind": "direct", "text": f"m{i}"} for i in (1, 2, 3)]
    (a.path / ".rooms/inbox/bob.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (a.path / ".rooms/inbox/read/bob.jsonl").write_text(json.dumps({"ts": at(5), "upto": 2}) + "\n")
    got = inbox(a, "bob")
    assert [m["ref"] for m in got["messages"]] == ["1", "2", "3"]
    assert [m["read"] for m in got["messages"]] == [False, False, False]  # only {"read": [ids]} marks count
    assert a.rooms("send", "re", "--reply-to", "2", as_="bob")["to"] == ["alice"]
    assert a.rooms("send", "x", "--to", "bob", as_="carol")["delivered"][0]["n"] == 4


# --- status ------------------------------------------------------------------------------------

def test_status_set_in_two_clones_merges_and_the_latest_wins_both_ways(world):
    a, b = world.clone("a"), world.clone("b")
    a.rooms("status", "set", "on the frontend", as_="alice", now=at(1))
    b.rooms("status", "set", "on the API", as_="alice", now=at(2))
    b.rooms("status", "set", "bob here", as_="bob", now=at(2))
    merge_both_ways(a, b)
    for clone in (a, b):
        agents = {e["name"]: e for e in clone.rooms("agents")}
        assert agents["alice"]["status"] == "on the API"
        assert agents["bob"]["status"] == "bob here"


def test_a_status_file_of_a_format_no_release_wrote_is_ignored_and_doctor_names_it(world):
    a = world.clone("a")
    (a.path / ".rooms/status").mkdir(exist_ok=True)
    (a.path / ".rooms/status/old.json").write_text(json.dumps(
        {"agent": "old", "status": "legacy line", "updated": "2026-01-01T00:00:00.000Z", "announced": "2026-01-01T00:00:00.000Z"}))
    assert "old" not in {e["name"] for e in a.rooms("agents")}
    found = [f["file"] for f in a.rooms("doctor", "--offline")["findings"] if f["check"] == "dropped-format"]
    assert found == [".rooms/status/old.json"]
    a.rooms("status", "set", "new line", as_="old")
    assert {e["name"]: e for e in a.rooms("agents")}["old"]["status"] == "new line"


CONFLICTED = b'<<<<<<< HEAD\n{"status": "a"}\n=======\n{"status": "b"}\n>>>>>>> theirs\n'


def test_a_conflicted_status_file_is_named_and_the_other_agents_are_still_listed(world):
    a = world.clone("a")
    a.rooms("status", "set", "fine", as_="bob")
    a.rooms("status", "set", "fine too", as_="alice")
    (a.path / ".rooms/status/alice.jsonl").write_bytes(CONFLICTED)
    listed = {e["name"]: e for e in a.rooms("agents")}
    assert listed["bob"]["status"] == "fine"
    assert listed["alice"]["problem"]["code"] == "merge_conflict"
    assert "alice.jsonl" in listed["alice"]["problem"]["message"]
    plain = a.run("agents")
    assert plain.exit_code == 0 and "bob" in plain.stdout and "alice.json" in plain.stderr
    err = a.rooms("status", "set", "x", as_="alice", code=1)
    assert err["error"]["code"] == "merge_conflict" and "alice.json" in err["error"]["message"]


@pytest.mark.parametrize("path", [".rooms/inbox/bob.jsonl", ".rooms/inbox/read/bob.jsonl"])
def test_an_unresolved_merge_in_an_inbox_file_is_one_clear_error(world, path):
    a = world.clone("a")
    a.rooms("send", "hi", "--to", "bob", as_="alice")
    a.rooms("inbox", as_="bob")
    target = a.path / path
    target.write_bytes(target.read_bytes() + CONFLICTED)
    err = a.rooms("inbox", as_="bob", code=1)
    assert err["error"]["code"] == "merge_conflict"
    assert path.split("/", 1)[1] in err["error"]["message"]
    assert a.rooms("inbox", as_="alice")["messages"] == []  # other inboxes are untouched


def test_a_hand_written_message_without_an_id_can_still_be_read_so_the_hook_lets_go(world):
    a = world.clone("a")
    (a.path / ".rooms/inbox").mkdir(exist_ok=True)
    (a.path / ".rooms/inbox/bob.jsonl").write_text(json.dumps({"n": 1, "ts": at(1), "from": "alice", "text": "no id"}) + "\n")
    first = a.run("hook", "claude-code", "stop", "--timeout", "0", as_="bob", input="{}")
    assert json.loads(first.stdout)["decision"] == "block"
    again = a.run("hook", "claude-code", "stop", "--timeout", "0", as_="bob", input="{}")
    assert again.stdout.strip() == ""


def test_the_latest_messages_after_a_merge_follow_the_one_order_not_the_file(world):
    """`rooms inbox` shows the unread and the last N through a local cursor (messaging/unread.py);
    after a merge a message may sit anywhere in the file: each clone shows what a full read shows."""
    a, b = world.clone("a"), world.clone("b")
    b.rooms("send", "old from b", "--to", "reviewer", as_="dave", now=at(1))
    for minute in range(2, 8):
        a.rooms("send", f"a{minute}", "--to", "reviewer", as_="carol", now=at(minute))
    b.rooms("send", "new from b", "--to", "reviewer", as_="dave", now=at(9))
    for clone in (a, b):  # read everything and leave a warm cursor behind
        clone.rooms("inbox", as_="reviewer", now=at(8))
        assert inbox(clone, "reviewer", "--last", "1")["unread"] == 0
    merge_both_ways(a, b)
    for clone in (a, b):
        latest = inbox(clone, "reviewer", "--last", "2")
        every = inbox(clone, "reviewer", "--all")
        assert [m["text"] for m in every["messages"]][-2:] == ["a7", "new from b"], clone
        shown = [m["text"] for m in latest["messages"]]
        unread = {m["text"] for m in every["messages"] if not m["read"]}
        assert shown == [m["text"] for m in every["messages"] if m["text"] in unread or m["text"] in ("a7", "new from b")], clone
        assert latest["remaining"] == len(every["messages"]) - len(shown) and latest["next_cursor"] is None
    assert inbox(a, "reviewer", "--last", "2")["messages"] == inbox(b, "reviewer", "--last", "2")["messages"]
