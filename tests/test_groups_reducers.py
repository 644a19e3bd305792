"""Reducers: built-ins with ties and malformed answers, rank, custom reducers (register and .rooms.yaml)."""

from __future__ import annotations

import asyncio

import pytest

import rooms_cli
from rooms_cli.errors import InvalidInput
from rooms_cli.groups import reducers
from rooms_cli.groups.model import MemberResult


def members(*rows):
    """rows: (handle, text, status) in arrival order -> (by_member, order)."""
    by_member = {h: MemberResult(t, s, 0.1) for h, t, s in rows}
    order = [h for h, _, s in rows if s in ("ok", "error")]
    return by_member, order


def test_concat_joins_ok_replies_in_arrival_order_with_a_blank_line():
    by_member, order = members(("b", "second", "ok"), ("a", "first?", "error"), ("c", "third", "ok"), ("d", "", "timeout"))
    assert reducers.concat(by_member, ["c", "b", "a"]) == "third\n\nsecond"
    assert reducers.concat(by_member, order) == "second\n\nthird"


def test_join_by_handle_keys_replies_by_member_in_member_order():
    by_member, _ = members(("sec", "S", "ok"), ("style", "", "timeout"), ("logic", "L", "ok"))
    assert reducers.join_by_handle(by_member, ["logic", "sec"]) == {"sec": "S", "logic": "L"}


def test_last_wins_takes_the_last_arrival_and_none_when_nobody_replied():
    by_member, _ = members(("a", "A", "ok"), ("b", "B", "ok"), ("c", "boom", "error"))
    assert reducers.last_wins(by_member, ["b", "a", "c"]) == "A"
    assert reducers.last_wins(*members(("a", "", "timeout"))) is None


def test_majority_vote_picks_the_most_common_answer():
    result = reducers.majority_vote(*members(("a", "ANCHORED", "ok"), ("b", "UNANCHORED", "ok"), ("c", "ANCHORED", "ok")))
    assert result.value == "ANCHORED"
    assert result.metadata["votes"] == {"ANCHORED": 2, "UNANCHORED": 1}
    assert result.metadata["winner_handle"] == "a"


def test_majority_vote_counts_answers_that_differ_only_in_case_spacing_or_final_dot_as_one():
    result = reducers.majority_vote(*members(("a", "YES", "ok"), ("b", " yes. ", "ok"), ("c", "NO", "ok")))
    assert result.value == "YES"


def test_majority_vote_ignores_unmatched_answers_so_a_malformed_one_does_not_poison_consensus():
    result = reducers.majority_vote(*members(
        ("a", "I think it is probably anchored, but…", "ok"), ("b", "ANCHORED", "ok"), ("c", "ANCHORED", "ok")))
    assert result.value == "ANCHORED"
    assert result.metadata["consensus"] is True


def test_majority_vote_without_any_shared_answer_has_no_result():
    result = reducers.majority_vote(*members(("a", "YES", "ok"), ("b", "NO", "ok"), ("c", "MAYBE", "ok")))
    assert result.value is None
    assert result.metadata["consensus"] is False


def test_majority_vote_tie_goes_to_the_first_finisher():
    by_member, _ = members(("a", "NO", "ok"), ("b", "YES", "ok"), ("c", "YES", "ok"), ("d", "NO", "ok"))
    assert reducers.majority_vote(by_member, ["b", "a", "c", "d"]).value == "YES"
    assert reducers.majority_vote(by_member, ["a", "b", "c", "d"]).value == "NO"


def test_majority_vote_does_not_count_errors_or_timeouts():
    result = reducers.majority_vote(*members(("a", "NO", "error"), ("b", "NO", "error"), ("c", "YES", "ok"), ("d", "YES", "ok")))
    assert result.value == "YES"


def test_rank_best_average_rank_wins_and_unranked_candidates_come_last():
    by_member, order = members(("x", "X", "ok"), ("y", "Y", "ok"), ("z", "Z", "ok"))
    labels = {"A": "x", "B": "y", "C": "z"}
    ballots = {"x": ["B", "C"], "y": ["C", "A"], "z": ["B", "A"]}
    result = reducers.rank_from_ballots(labels, ballots, by_member, order)
    assert result.value == "Y"
    assert result.metadata["average_rank"] == {"x": 2.0, "y": 1.0, "z": 1.5}
    assert result.metadata["labels"] == labels
    assert reducers.rank_from_ballots(labels, {"x": ["B"]}, by_member, order).value == "Y"


def test_rank_tie_goes_to_the_earlier_arrival():
    by_member, _ = members(("x", "X", "ok"), ("y", "Y", "ok"))
    result = reducers.rank_from_ballots({"A": "x", "B": "y"}, {"x": ["B"], "y": ["A"]}, by_member, ["y", "x"])
    assert result.value == "Y"


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
    assert sorted(meta["labels"]) == ["A", "B", "C", "D"]
    handle_label = {h: lab for lab, h in meta["labels"].items()}
    assert set(meta["ballots"]) == {"analyst", "wildcard", "boss", "writer"}
    for ranker, ballot in meta["ballots"].items():
        assert handle_label[ranker] not in ballot
        assert len(ballot) == 3
    best = min(meta["average_rank"].values())
    assert meta["average_rank"][meta["winner_handle"]] == best
    assert result.reduced == result.by_member[meta["winner_handle"]].text
