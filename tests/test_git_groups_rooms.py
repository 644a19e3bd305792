"""Groups and chat rooms in git: real clones work offline, then merge — in both directions.

Every scenario asserts: git merges with 0 conflicts, nothing either clone wrote is lost or hidden,
and the merged state reads the same whichever way the merge went.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gitclones import HAVE_GIT, Clone, GitClones, merge_both_ways

pytestmark = pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")

FOUR = ("--output-format", "", "--tool-guidance", "", "--boundaries", "")


def world(tmp_path, setup=None, count: int = 2) -> list[Clone]:
    w = GitClones(tmp_path, example="dev", setup=setup)
    return [w.clone(name) for name in "abcdefg"[:count]]


def one_group(seed: Clone) -> None:
    seed.rooms("group", "spawn", "rev", "--profile", "reviewer")


def merged(a: Clone, b: Clone) -> tuple[Clone, Clone]:
    merge_both_ways(a, b)
    return a, b


def group_view(where: Clone, name: str) -> dict:
    status = where.rooms("group", "status", name)
    return {"members": status["members"], "in_flight": status["in_flight"], "recent": status["recent"]}


def broadcast_and_wait(where: Clone, name: str, objective: str) -> str:
    bid = where.rooms("group", "broadcast", name, "--objective", objective, *FOUR)["broadcast_id"]
    where.rooms("group", "wait", name)
    return bid


# -- groups ------------------------------------------------------------------------------------


def test_a_group_created_in_two_clones_keeps_both_clones_members_and_results(tmp_path):
    a, b = world(tmp_path)
    a.rooms("group", "spawn", "panel", "--profile", "reviewer")
    from_a = broadcast_and_wait(a, "panel", "from A")
    b.rooms("group", "spawn", "panel", "--profile", "architect")
    from_b = broadcast_and_wait(b, "panel", "from B")
    one, other = merged(a, b)
    view = group_view(one, "panel")
    assert view == group_view(other, "panel")
    assert [m["handle"] for m in view["members"]] == ["reviewer", "architect"] or \
        [m["handle"] for m in view["members"]] == ["architect", "reviewer"]
    assert {r["broadcast_id"] for r in view["recent"]} == {from_a, from_b}
    assert all(r["status"] == "gathered" for r in view["recent"])
    findings = [f for f in one.rooms("doctor", "--offline")["findings"] if f["check"] == "group-merge"]
    assert [f["message"] for f in findings] == ["group 'panel' was created in two clones; their members and broadcasts are merged into one group"]


def test_a_group_renamed_in_one_clone_keeps_what_the_other_clone_added_under_the_old_name(tmp_path):
    a, b = world(tmp_path, one_group)
    a.rooms("group", "rename", "rev", "reviewers")
    late = broadcast_and_wait(b, "rev", "sent on B before it heard of the rename")
    one, other = merged(a, b)
    for where in (one, other):
        assert [g["name"] for g in where.rooms("group", "list")] == ["reviewers"]
        assert [r["broadcast_id"] for r in where.rooms("group", "status", "reviewers")["recent"]] == [late]
        assert "renamed to 'reviewers'" in where.rooms("group", "status", "rev", code=1)["error"]["message"]


def test_a_group_renamed_differently_in_two_clones_keeps_both_names_and_doctor_says_so(tmp_path):
    a, b = world(tmp_path, one_group)
    a.rooms("group", "rename", "rev", "left")
    b.rooms("group", "rename", "rev", "right")
    one, other = merged(a, b)
    for where in (one, other):
        assert [g["name"] for g in where.rooms("group", "list")] == ["left", "right"]
        findings = [f for f in where.rooms("doctor", "--offline")["findings"] if f["check"] == "group-merge"]
        assert any("'left'" in f["message"] and "'right'" in f["message"] for f in findings), findings


def externals_gathered(seed: Clone) -> None:
    """Group `g` of the external members `coder` and `tester` (they answer with `rooms group reply`),
    with a broadcast gathered without them (a group is renamed only with nothing in flight)."""
    from rooms_cli.agents.definitions import Agent, create_agent
    from rooms_cli.store.paths import find_project

    for agent_id in ("coder", "tester"):
        create_agent(find_project(seed.path), Agent(id=agent_id, directive="An outside agent.", model="external"))
        seed.rooms("group", "spawn", "g", "--profile", agent_id)
    seed.rooms("group", "broadcast", "g", "--objective", "shared", *FOUR)
    assert seed.run("group", "wait", "g", "--timeout", "0.1").exit_code == 4  # 4: both timed out


def replies_by_group(where: Clone) -> dict[str, dict[str, list[str]]]:
    """Every live group -> its broadcasts -> the texts they hold (replies and dropped replies)."""
    from rooms_cli.groups import log
    from rooms_cli.store.paths import find_project

    project = find_project(where.path)
    return {name: {b.id: sorted([r.text for r in b.replies.values()] + [d["text"] for d in b.dropped])
                   for b in log.load(project, name).broadcasts}
            for name in log.names(project)}


@pytest.mark.parametrize("onward", [False, True])  # A renames `left` on to `far` before its reply
def test_a_group_renamed_differently_in_two_clones_gets_each_clone_s_reply_to_their_broadcast_in_both(tmp_path, onward):
    """Found by the hypothesis test: a reply sent under one of the two names was missing from the
    other name's copy of the same broadcast."""
    a, b = world(tmp_path, externals_gathered)
    bid = a.rooms("group", "status", "g")["recent"][0]["broadcast_id"]
    a.rooms("group", "rename", "g", "left")
    b.rooms("group", "rename", "g", "right")
    if onward:
        a.rooms("group", "rename", "left", "far")
    # late replies: each is kept as dropped by the broadcast, in every group that holds it
    a.rooms("group", "reply", "far" if onward else "left", "from A", "--as", "coder", "--broadcast", bid)
    b.rooms("group", "reply", "right", "from B", "--as", "tester", "--broadcast", bid)
    one, other = merged(a, b)
    names = ["far" if onward else "left", "right"]
    for where in (one, other):
        held = replies_by_group(where)
        assert sorted(held) == names
        for name in names:
            assert held[name] == {bid: ["from A", "from B"]}, (where.name, name, held)
        assert group_view(where, names[0]) == group_view(where, names[1])
    assert replies_by_group(one) == replies_by_group(other)


def test_a_group_renamed_in_one_clone_and_dissolved_in_the_other_that_did_not_see_its_use_is_only_the_new_name(tmp_path):
    """Found by the hypothesis test: the dissolve, overruled by what it did not see, brought the old
    name back beside the new one, without the reply sent under the new one."""
    a, b = world(tmp_path, externals_gathered)
    bid = b.rooms("group", "status", "g")["recent"][0]["broadcast_id"]
    b.rooms("group", "reply", "g", "before the rename", "--as", "coder", "--broadcast", bid)  # A's dissolve misses it
    b.rooms("group", "rename", "g", "right")
    b.rooms("group", "reply", "right", "after the rename", "--as", "tester", "--broadcast", bid)
    a.rooms("group", "dissolve", "g")
    one, other = merged(a, b)
    for where in (one, other):
        assert replies_by_group(where) == {"right": {bid: ["after the rename", "before the rename"]}}
        findings = [f for f in where.rooms("doctor", "--offline")["findings"] if f["check"] == "group-merge"]
        assert any("'right' is kept" in f["message"] for f in findings), findings
        assert not any("dissolve g" in f["fix"] for f in findings), findings


def test_a_group_dissolved_in_one_clone_while_the_other_used_it_is_kept_and_reported(tmp_path):
    a, b = world(tmp_path, one_group)
    a.rooms("group", "dissolve", "rev")
    late = broadcast_and_wait(b, "rev", "still in use on B")
    one, other = merged(a, b)
    for where in (one, other):
        assert [r["broadcast_id"] for r in where.rooms("group", "status", "rev")["recent"]] == [late]
        findings = [f for f in where.rooms("doctor", "--offline")["findings"] if f["check"] == "group-merge"]
        assert any("dissolved" in f["message"] and "rooms group dissolve rev" in f["fix"] for f in findings), findings


@pytest.mark.parametrize("uses_on_b", [1, 4])  # B's events sort before A's new `created`, or after it
def test_a_group_dissolved_and_made_anew_in_one_clone_keeps_what_the_other_clone_did_with_the_old_one(tmp_path, uses_on_b):
    a, b = world(tmp_path, one_group)
    a.rooms("group", "dissolve", "rev")
    a.rooms("group", "spawn", "rev", "--profile", "architect")  # the name again: a new group in the same log
    late = [broadcast_and_wait(b, "rev", f"still in use on B {n}") for n in range(uses_on_b)]
    one, other = merged(a, b)
    for where in (one, other):
        status = where.rooms("group", "status", "rev")
        assert [r["broadcast_id"] for r in status["recent"]] == late[::-1]
        assert {m["profile"] for m in status["members"]} == {"reviewer", "architect"}
        findings = [f for f in where.rooms("doctor", "--offline")["findings"] if f["check"] == "group-merge"]
        assert any("dissolved" in f["message"] and "rooms group dissolve rev" in f["fix"] for f in findings), findings
    assert group_view(one, "rev") == group_view(other, "rev")


def test_a_group_dissolved_in_both_clones_stays_dissolved(tmp_path):
    a, b = world(tmp_path, one_group)
    a.rooms("group", "dissolve", "rev")
    b.rooms("group", "dissolve", "rev")
    one, other = merged(a, b)
    for where in (one, other):
        assert where.rooms("group", "list") == []


def test_broadcasts_in_flight_in_two_clones_both_stay_visible_and_can_be_gathered(tmp_path):
    a, b = world(tmp_path, one_group)
    on_a = a.rooms("group", "broadcast", "rev", "--objective", "A", *FOUR)["broadcast_id"]
    on_b = b.rooms("group", "broadcast", "rev", "--objective", "B", *FOUR)["broadcast_id"]
    one, other = merged(a, b)
    view = group_view(one, "rev")
    assert view == group_view(other, "rev")
    assert {view["in_flight"]["broadcast_id"], *(r["broadcast_id"] for r in view["recent"])} == {on_a, on_b}
    one.rooms("group", "wait", "rev")
    one.rooms("group", "wait", "rev")
    assert {r["status"] for r in one.rooms("group", "status", "rev")["recent"]} == {"gathered"}


def test_three_clones_adding_members_and_broadcasting_merge_in_any_order(tmp_path):
    a, b, d = world(tmp_path, one_group, count=3)
    sent = set()
    for where, profile in ((a, "architect"), (b, "ops"), (d, "scribe")):
        where.rooms("group", "spawn", "rev", "--profile", profile)
        sent.add(broadcast_and_wait(where, "rev", f"from {where.name}"))
        where.commit()
    a.pull(b)
    a.pull(d)
    d.pull(b)
    d.pull(a)
    view = group_view(a, "rev")
    assert view == group_view(d, "rev")
    assert sorted(m["handle"] for m in view["members"]) == ["architect", "ops", "reviewer", "scribe"]
    assert {r["broadcast_id"] for r in view["recent"]} == sent


def test_a_group_log_written_before_event_ids_still_replays_in_file_order(project, cli):
    import json

    lines = [
        {"ev": "created", "ts": "2026-11-20T10:00:00.000Z", "name": "old", "gid": "g-1", "ephemeral": False},
        {"ev": "member_added", "ts": "2026-11-20T10:00:00.000Z", "handle": "reviewer", "profile": "reviewer"},
        {"ev": "broadcast", "ts": "2026-11-20T10:00:01.000Z", "id": "b-1", "fields": {}, "members": [{"handle": "reviewer", "profile": "reviewer"}], "sender": "x"},
        {"ev": "reply", "ts": "2026-11-20T10:00:01.000Z", "id": "b-1", "handle": "reviewer", "text": "hi", "status": "ok", "elapsed_s": 0.1, "source": "external"},
        {"ev": "cancelled", "ts": "2026-11-20T10:00:01.000Z", "id": "b-1", "by": "x", "reason": "r"},
    ]
    (Path(project.dir) / "groups" / "old.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    cli("group", "spawn", "old", "--profile", "architect")
    status = json.loads(cli("group", "status", "old", "--json").stdout)
    assert [m["handle"] for m in status["members"]] == ["reviewer", "architect"]
    assert status["recent"][0]["replied"] == ["reviewer"] and status["recent"][0]["status"] == "cancelled"


def test_group_replay_reads_the_same_whichever_clone_s_events_come_first_in_the_file(project):
    from rooms_cli.groups import log

    base = [log.event("created", name="g", gid="g-1", ephemeral=False)]
    ours = [log.event("member_added", handle="a", profile="reviewer"),
            log.event("broadcast", id="b-a", fields={}, members=[], sender="a")]
    theirs = [log.event("member_added", handle="b", profile="ops"),
              log.event("broadcast", id="b-b", fields={}, members=[], sender="b"),
              log.event("created", name="g", gid="g-2", ephemeral=False)]
    one = log.replay("g", base + ours + theirs)
    other = log.replay("g", base + theirs + ours)
    assert one == other
    assert [m.handle for m in one.members] == [m.handle for m in other.members] and len(one.members) == 2
    assert [b.id for b in one.broadcasts] == [b.id for b in other.broadcasts] and len(one.broadcasts) == 2


# -- room state --------------------------------------------------------------------------------


def room_view(where: Clone, room: str = "default") -> dict:
    view = where.rooms("room", "show", room)
    return {**view, "roster": [m["id"] for m in view["roster"]], "sessions": {m["id"]: m["session"] for m in view["roster"]}}


def test_a_mute_in_one_clone_and_a_kick_in_the_other_merge_with_both_effects_kept(tmp_path):
    a, b = world(tmp_path)
    a.rooms("room", "mute", "reviewer", "--room", "default")
    b.rooms("room", "kick", "ops", "--room", "default")
    one, other = merged(a, b)
    view = room_view(one)
    assert view == room_view(other)
    assert "ops" not in view["roster"] and "reviewer" in view["roster"]
    assert view["muted"] == ["reviewer"]


def test_a_mute_and_a_kick_of_the_same_agent_leave_it_out_and_unmuted(tmp_path):
    a, b = world(tmp_path)
    a.rooms("room", "mute", "ops", "--room", "default")
    b.rooms("room", "kick", "ops", "--room", "default")
    one, other = merged(a, b)
    for where in (one, other):
        view = room_view(where)
        assert "ops" not in view["roster"] and view["muted"] == []


def test_invites_and_budget_spent_in_two_clones_add_up(tmp_path):
    def setup(seed):
        seed.rooms("room", "create", "sync", "--agent", "reviewer", "--agent", "architect")

    a, b = world(tmp_path, setup)
    total = room_view(a, "sync")["budget"]["total"]
    a.rooms("room", "invite", "ops", "--room", "sync")
    b.rooms("room", "invite", "scribe", "--room", "sync")
    a.rooms("chat", "@reviewer hello from A", "--room", "sync", as_="alice")
    b.rooms("chat", "@architect hello from B", "--room", "sync", as_="bob")
    spent_a = total - room_view(a, "sync")["budget"]["remaining"]
    one, other = merged(a, b)
    view = room_view(one, "sync")
    assert view == room_view(other, "sync")
    assert sorted(view["roster"]) == ["architect", "ops", "reviewer", "scribe"]
    assert view["budget"]["remaining"] < view["budget"]["total"] - spent_a  # B's turn counts too


def test_a_room_created_in_two_clones_is_one_room_with_both_rosters(tmp_path):
    a, b = world(tmp_path)
    a.rooms("room", "create", "war", "--agent", "reviewer")
    b.rooms("room", "create", "war", "--agent", "ops")
    one, other = merged(a, b)
    assert room_view(one, "war") == room_view(other, "war")
    assert sorted(room_view(one, "war")["roster"]) == ["ops", "reviewer"]


def dropped(where: Clone) -> list[str]:
    """The files doctor names as a format rooms no longer reads."""
    return [f["file"] for f in where.rooms("doctor", "--offline")["findings"] if f["check"] == "dropped-format"]


def test_a_room_yaml_of_a_format_no_release_wrote_is_ignored_and_doctor_names_it(tmp_path):
    def setup(seed):
        folder = seed.path / ".rooms" / "rooms" / "old"
        folder.mkdir(parents=True)
        (folder / "room.yaml").write_text("id: old\nstatus: live\nroster: [reviewer, ops]\n")

    (a,) = world(tmp_path, setup, count=1)
    assert a.rooms("room", "show", "old", code=1)["error"]["code"] == "not_found"
    assert dropped(a) == [".rooms/rooms/old/room.yaml"]


# -- transcripts, sessions, saved transcripts ------------------------------------------------------

T = "2026-11-23T10:00:0{}.000Z"


def transcript(where: Clone, *extra: str) -> list[dict]:
    return where.rooms("transcript", "--room", "default", *extra)


def watch_last(where: Clone, count: int) -> list[str]:
    run = where.rooms("watch", "--room", "default", "--last", str(count), "--timeout", "0.3", "--json", json_output=False)
    import json

    return [json.loads(line)["id"] for line in run.stdout.splitlines() if line.strip()]


def test_a_merged_transcript_reads_in_time_order_the_same_whichever_way_the_merge_went(tmp_path):
    a, b = world(tmp_path)
    a.rooms("chat", "@reviewer one from A", now=T.format(1), as_="alice")
    b.rooms("chat", "@reviewer two from B", now=T.format(2), as_="bob")
    a.rooms("chat", "@reviewer three from A", now=T.format(3), as_="alice")
    b.rooms("chat", "@reviewer four from B", now=T.format(4), as_="bob")
    one, other = merged(a, b)
    merged_one = transcript(one)
    assert merged_one == transcript(other)
    people = [m["text"] for m in merged_one if m["speaker"] in ("alice", "bob")]
    assert people == ["@reviewer one from A", "@reviewer two from B", "@reviewer three from A", "@reviewer four from B"]
    assert [m["ts"] for m in merged_one] == sorted(m["ts"] for m in merged_one)
    newest = [m["id"] for m in merged_one[-3:]]
    assert watch_last(one, 3) == newest == watch_last(other, 3)
    sessions = room_view(one)["sessions"]["reviewer"]
    assert sessions == room_view(other)["sessions"]["reviewer"] and sessions["turns"] == 4  # both clones' turns count


def test_saves_in_two_clones_merge_and_rejoining_gives_back_both_clones_messages(tmp_path):
    a, b = world(tmp_path)
    a.rooms("chat", "@reviewer said on A", now=T.format(1), as_="alice")
    a.rooms("room", "drop", "--room", "default")  # drop saves first
    b.rooms("chat", "@reviewer said on B", now=T.format(2), as_="bob")
    b.rooms("room", "save", "--room", "default")
    b.rooms("room", "drop", "--room", "default")
    one, other = merged(a, b)
    for where in (one, other):
        joined = where.rooms("room", "join", "chat/default")
        assert joined["outcome"] == "rehydrated" and joined["saved_transcript"].startswith(".rooms/chat/default/s-")
        texts = [m["text"] for m in transcript(where)]
        assert "@reviewer said on A" in texts and "@reviewer said on B" in texts
    assert transcript(one) == transcript(other)


def test_a_single_file_saved_transcript_of_a_format_no_release_wrote_is_ignored_and_doctor_names_it(tmp_path):
    def setup(seed):
        seed.rooms("chat", "@reviewer before the upgrade", now=T.format(1), as_="alice")
        path = seed.rooms("room", "drop", "--room", "default")["saved"]["path"]
        (seed.path / path).rename(seed.path / ".rooms" / "chat" / "default.md")

    (a,) = world(tmp_path, setup, count=1)
    assert a.rooms("room", "join", "chat/default")["saved_transcript"] is None  # no save: the room comes back as it was
    assert dropped(a) == [".rooms/chat/default.md"]


def test_an_agent_kicked_in_one_clone_that_spoke_in_the_other_is_reported_by_doctor(tmp_path):
    a, b = world(tmp_path)
    a.rooms("room", "kick", "ops", "--room", "default", now=T.format(1))
    b.rooms("chat", "@ops still here?", now=T.format(2), as_="bob")
    one, other = merged(a, b)
    for where in (one, other):
        assert "ops" not in room_view(where)["roster"]
        assert "@ops still here?" in [m["text"] for m in transcript(where)]
        findings = [f for f in where.rooms("doctor", "--offline")["findings"] if f["check"] == "room-merge"]
        assert len(findings) == 1 and "ops was kicked" in findings[0]["message"], findings
        assert "rooms room invite ops --room default" in findings[0]["fix"]


def test_transcript_last_n_after_a_merge_sees_the_other_clone_s_newer_message_behind_the_seam(tmp_path):
    a, b = world(tmp_path)
    for second in range(1, 5):  # A's older turns: many lines (each chat has the agents' replies)
        a.rooms("chat", f"@reviewer older from A {second}", now=T.format(second), as_="alice")
    b.rooms("chat", "newest from B", now=T.format(9), as_="bob")
    assert transcript(b, "--last", "2")[-1]["text"] != "" and transcript(a, "--last", "2")  # both clones cache
    one, other = merged(a, b)  # in b the union puts B's newer lines before A's many older ones
    for where in (one, other):
        full = transcript(where)
        assert "newest from B" in [m["text"] for m in full[-5:]]
        for count in (1, 2, 3, 7):
            assert transcript(where, "--last", str(count)) == full[-count:]
        where.rooms("chat", "after the merge", now="2026-11-23T10:00:10.000Z", as_="carol")
        full = transcript(where)
        assert transcript(where, "--last", "2") == full[-2:] and full[-1]["text"] != "newest from B"


def test_transcript_last_n_reads_only_the_new_lines_once_the_order_is_known(project, cli, monkeypatch):
    from rooms_cli.chat import transcript as tr
    from rooms_cli.store import jsonl

    for i in range(3):
        cli("chat", f"hello {i}", "--as", "alice")
    assert [m.text for m in tr.tail(project, "default", 1)]  # learns the order (one full read)
    cli("chat", "one more", "--as", "alice")
    reads: list[int] = []
    original = jsonl.read
    monkeypatch.setattr(jsonl, "read", lambda path: reads.append(1) or original(path))
    assert tr.tail(project, "default", 1)[0].ts == tr.read_transcript(project, "default")[-1].ts
    assert reads == [1]  # read_transcript's full read only, not tail's


def test_a_clone_saving_after_it_merged_the_other_clone_s_save_leaves_that_save_alone(tmp_path):
    # found by test_git_props_rooms: removing the other clone's save while adding a similar file is,
    # to git's rename detection, a rename/delete conflict with the other clone's next save
    a, b = world(tmp_path)
    b.rooms("chat", "@reviewer said on B", now=T.format(1), as_="bob")
    b.rooms("room", "save", "--room", "default")
    b.commit()
    a.pull(b)
    a.rooms("room", "save", "--room", "default")  # a near copy of B's save: git sees a rename
    a.rooms("chat", "@reviewer said on A", now=T.format(2), as_="alice")
    b.rooms("chat", "@reviewer more on B", now=T.format(3), as_="bob")
    b.rooms("room", "save", "--room", "default")
    one, other = merged(a, b)
    for where in (one, other):
        where.assert_no_conflicts()
        assert len(list((where.path / ".rooms/chat/default").glob("s-*.md"))) == 2  # one per clone
        texts = [m["text"] for m in where.rooms("room", "join", "chat/default") and transcript(where)]
        assert {"@reviewer said on B", "@reviewer said on A", "@reviewer more on B"} <= set(texts)
