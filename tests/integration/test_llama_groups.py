"""Groups on llama.cpp's real server: a gather (wait-all), a race (wait-any), reducers over real replies."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

AGENTS = ["ada", "bo", "cy", "di"]
FIELDS = ["--objective", "review the plan", "--output-format", "one line", "--tool-guidance", "", "--boundaries", "none"]


def ok(run):
    assert run.exit_code == 0, run.stderr
    return run.json()


@pytest.fixture
def group(llama_project, rooms):
    ok(rooms("group", "spawn-mixed", "rev", "--profiles", ",".join(AGENTS), "--json"))
    return "rev"


def test_gather_calls_every_member_at_once_and_reduces_their_replies(group, llama_server, rooms):
    ok(rooms("group", "broadcast", group, *FIELDS, "--json"))
    mark = llama_server.log_mark()
    result = ok(rooms("group", "wait", group, "--reducer", "join_by_handle", "--json"))
    assert sorted(result["by_member"]) == AGENTS
    assert {m["status"] for m in result["by_member"].values()} == {"ok"}
    assert sorted(result["order"]) == AGENTS
    assert result["reduced"] == {h: m["text"] for h, m in result["by_member"].items()}
    assert (result["metadata"]["replied"], result["metadata"]["members"], result["metadata"]["mode"]) == (4, 4, "all")
    events = [what for what, _, _ in llama_server.engine_events(mark)]
    assert events.count("start") == 4 and "end" not in events[:4], events  # four slots busy together


def test_wait_any_takes_the_first_reply_and_stops_the_others(group, llama_server, rooms):
    ok(rooms("group", "broadcast", group, *FIELDS, "--json"))
    result = ok(rooms("group", "wait", group, "--any", "--json"))
    winner = result["metadata"]["winner_handle"]
    assert winner in AGENTS and result["order"] == [winner]
    assert result["by_member"][winner]["status"] == "ok"
    assert result["reduced"] == result["by_member"][winner]["text"]
    losers = {h: m["status"] for h, m in result["by_member"].items() if h != winner}
    assert set(losers.values()) <= {"cancelled", "dropped"}, losers
    # the group is free again: the next broadcast is accepted
    ok(rooms("group", "broadcast", group, *FIELDS, "--json"))


def test_rank_over_gibberish_ballots_still_names_a_member(group, rooms):
    # each member ranks the others' replies; a random model's ballots are mostly unreadable
    ok(rooms("group", "broadcast", group, *FIELDS, "--json"))
    result = ok(rooms("group", "wait", group, "--reducer", "rank", "--json"))
    meta = result["metadata"]
    assert sorted(meta["labels"].values()) == AGENTS
    assert meta["winner_handle"] in AGENTS
    assert result["reduced"] == result["by_member"][meta["winner_handle"]]["text"]


def test_ask_gathers_an_ephemeral_group_and_leaves_no_trace(llama_project, rooms):
    groups = llama_project / ".rooms" / "groups"
    before = sorted(p.name for p in groups.iterdir())
    result = ok(rooms("group", "ask", "--profiles", "ada,bo,cy", "--objective", "ship it?", "--reducer", "majority_vote", "--json"))
    assert sorted(result["by_member"]) == ["ada", "bo", "cy"]
    assert {m["status"] for m in result["by_member"].values()} == {"ok"}
    assert result["metadata"]["reducer"] == "majority_vote"
    assert sum(result["metadata"]["votes"].values()) == 3
    assert sorted(p.name for p in groups.iterdir()) == before
