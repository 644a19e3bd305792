"""Reducers: built-ins with ties and malformed answers, rank, custom reducers (register and .rooms.yaml)."""

from __future__ import annotations

import asyncio

import pytest

import rooms_cli
from rooms_cli.core.errors import InvalidInput
from rooms_cli.groups import reducers
from rooms_cli.groups.model import MemberResult


def members(*rows):
    """rows: (handle, text, status) in arrival order -> (by_member, order)."""
    by_member = {h: MemberResult(t, s, 0.1) for h, t, s in rows}
    order = [h for h, _, s in rows if s in ("ok", "error")]
    return by_member, order


def test_concat_joins_ok_replies_in_arrival_order_each_under_its_handle():
    by_member, order = members(("b", "second", "ok"), ("a", "first?", "error"), ("c", "third", "ok"), ("d", "", "timeout"))
    assert reducers.concat(by_member, ["c", "b", "a"]) == "## c\nthird\n\n## b\nsecond"
    assert reducers.concat(by_member, order) == "## b\nsecond\n\n## c\nthird"


def test_concat_of_a_single_reply_is_that_reply():
    assert reducers.concat(*members(("a", "only\n\nme", "ok"), ("b", "", "timeout"))) == "only\n\nme"
    assert reducers.concat(*members(("a", "", "timeout"))) == ""


def test_concat_keeps_multi_paragraph_replies_apart():
    by_member, order = members(("sec", "Two issues.\n\nFirst: tokens leak.\n", "ok"), ("style", "Fine.", "ok"))
    assert reducers.concat(by_member, order) == "## sec\nTwo issues.\n\nFirst: tokens leak.\n\n## style\nFine."


def test_join_by_handle_keys_replies_by_member_in_member_order():
    by_member, _ = members(("sec", "S", "ok"), ("style", "", "timeout"), ("logic", "L", "ok"))
    assert reducers.join_by_handle(by_member, ["logic", "sec"]) == {"sec": "S", "logic": "L"}


def test_last_wins_takes_the_last_arrival_and_none_when_nobody_replied():
    by_member, _ = members(("a", "A", "ok"), ("b", "B", "ok"), ("c", "boom", "error"))
    assert reducers.last_wins(by_member, ["b", "a", "c"]) == "A"
    assert reducers.last_wins(*members(("a", "", "timeout"))) is None


def test_rank_best_average_rank_wins_and_unranked_candidates_come_last():
    by_member, order = members(("x", "X", "ok"), ("y", "Y", "ok"), ("z", "Z", "ok"))
    labels = {"R1": "x", "R2": "y", "R3": "z"}
    ballots = {"x": ["R2", "R3"], "y": ["R3", "R1"], "z": ["R2", "R1"]}
    result = reducers.rank_from_ballots(labels, ballots, by_member, order)
    assert result.value == "Y"
    assert result.metadata["average_rank"] == {"x": 2.0, "y": 1.0, "z": 1.5}
    assert result.metadata["labels"] == labels and result.metadata["parsed"] == 3 and result.metadata["tie"] is False
    assert reducers.rank_from_ballots(labels, {"x": ["R2"]}, by_member, order).value == "Y"


def test_rank_tie_goes_to_the_earlier_arrival_and_says_so():
    by_member, _ = members(("x", "X", "ok"), ("y", "Y", "ok"))
    result = reducers.rank_from_ballots({"R1": "x", "R2": "y"}, {"x": ["R2"], "y": ["R1"]}, by_member, ["y", "x"])
    assert result.value == "Y" and result.metadata["tie"] is True


def test_rank_without_a_single_ballot_has_no_result_unless_one_reply_stands_alone():
    by_member, order = members(("x", "X", "ok"), ("y", "Y", "ok"))
    none = reducers.rank_from_ballots({"R1": "x", "R2": "y"}, {}, by_member, order)
    assert none.value is None and none.metadata["parsed"] == 0
    alone = reducers.rank_from_ballots({"R1": "x"}, {}, *members(("x", "X", "ok")))
    assert alone.value == "X" and alone.metadata["winner_handle"] == "x"


def test_register_reducer_refuses_built_in_names():
    with pytest.raises(InvalidInput, match="built-in"):
        rooms_cli.register_reducer("concat", lambda by_member, order: None)
    with pytest.raises(InvalidInput, match="built-in"):
        rooms_cli.register_reducer("rank", lambda by_member, order: None)


def test_unknown_reducer_is_refused_before_anything_runs_and_the_known_ones_are_listed(project):
    async def scenario():
        await rooms_cli.spawn_group("g", ["analyst"], project=project)
        await rooms_cli.broadcast("g", objective="x", output_format="", tool_guidance="", boundaries="", project=project)
        await rooms_cli.wait_all("g", reducer="nope", project=project)

    with pytest.raises(InvalidInput, match="known reducers: .*majority_vote.*rank"):
        asyncio.run(scenario())


def test_a_registered_reducer_gets_every_member_result_and_the_arrival_order(project):
    seen = {}

    def longest(by_member, order):
        seen["statuses"] = {h: r.status for h, r in by_member.items()}
        seen["order"] = order
        return max((by_member[h].text for h in order), key=len)

    rooms_cli.register_reducer("longest_test", longest)

    async def scenario():
        await rooms_cli.spawn_group("g", ["analyst", "wildcard", "boss"], project=project)
        await rooms_cli.broadcast("g", objective="outline caching", output_format="", tool_guidance="", boundaries="", project=project)
        return await rooms_cli.wait_all("g", reducer="longest_test", project=project)

    result = asyncio.run(scenario())
    assert seen["statuses"] == {"analyst": "ok", "wildcard": "ok", "boss": "ok"}
    assert sorted(seen["order"]) == ["analyst", "boss", "wildcard"]
    assert result.reduced == max((r.text for r in result.by_member.values()), key=len)
    assert result.metadata["reducer"] == "longest_test"


def test_a_reducer_named_in_rooms_yaml_is_imported_from_the_project(project_dir, cli):
    (project_dir / "myreducers.py").write_text("def shortest(by_member, order):\n    return min((by_member[h].text for h in order), key=len)\n")
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("\nreducers:\n  shortest: \"myreducers:shortest\"\n  broken: \"myreducers:missing\"\n")
    assert cli("group", "spawn-mixed", "g", "--profiles", "analyst,wildcard").exit_code == 0
    assert cli("group", "broadcast", "g", "--objective", "hi", "--output-format", "", "--tool-guidance", "", "--boundaries", "").exit_code == 0
    run = cli("group", "wait", "g", "--reducer", "shortest", "--json")
    assert run.exit_code == 0, run.stderr
    data = run.json()
    assert data["reduced"] == min((m["text"] for m in data["by_member"].values()), key=len)
    bad = cli("group", "wait", "g", "--reducer", "broken")
    assert bad.exit_code == 1
    assert "reducers.broken" in bad.stderr and "missing" in bad.stderr


def test_rank_labels_map_to_handles_and_no_member_ranks_its_own_reply(project):
    async def scenario():
        await rooms_cli.spawn_group("panel", ["analyst", "wildcard", "boss", "writer"], project=project)
        await rooms_cli.broadcast("panel", objective="name the release", output_format="", tool_guidance="", boundaries="", project=project)
        return await rooms_cli.wait_all("panel", reducer="rank", project=project)

    result = asyncio.run(scenario())
    meta = result.metadata
    assert sorted(meta["labels"].values()) == ["analyst", "boss", "wildcard", "writer"]
    assert sorted(meta["labels"]) == ["R1", "R2", "R3", "R4"]
    # every ballot read; one that happens to repeat its ranker's shown order says nothing and is set apart
    uninformative = meta.get("uninformative", {})
    assert meta["parsed"] + len(uninformative) == 4 and meta["unparsed"] == {}
    handle_label = {h: lab for lab, h in meta["labels"].items()}
    assert set(meta["ballots"]) | set(uninformative) == {"analyst", "wildcard", "boss", "writer"}
    for ranker, ballot in {**meta["ballots"], **uninformative}.items():
        assert handle_label[ranker] not in ballot
        assert len(ballot) == 3
    best = min(meta["average_rank"].values())
    assert meta["average_rank"][meta["winner_handle"]] == best
    assert result.reduced == result.by_member[meta["winner_handle"]].text
