"""Groups on llama.cpp's real server: a gather (wait-all), a race (wait-any), reducers over real replies."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rooms_cli
from rooms_cli.agents.definitions import Agent, create_agent
from rooms_cli.store.paths import open_project

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration

AGENTS = ["archer", "builder", "courier", "drafter"]
FIELDS = ["--objective", "review the plan", "--output-format", "one line", "--tool-guidance", "", "--boundaries", "none"]


def ok(run):
    assert run.exit_code == 0, run.stderr
    return run.json()


@pytest.fixture
def group(llama_project, cli):
    ok(cli("group", "spawn-mixed", "rev", "--profiles", ",".join(AGENTS), "--json"))
    return "rev"


def test_gather_calls_every_member_at_once_and_reduces_their_replies(group, llama_server, cli):
    ok(cli("group", "broadcast", group, *FIELDS, "--json"))
    mark = llama_server.log_mark()
    result = ok(cli("group", "wait", group, "--reducer", "join_by_handle", "--json"))
    assert sorted(result["by_member"]) == AGENTS
    assert {m["status"] for m in result["by_member"].values()} == {"ok"}
    assert sorted(result["order"]) == AGENTS
    assert result["reduced"] == {h: m["text"] for h, m in result["by_member"].items()}
    assert (result["metadata"]["replied"], result["metadata"]["members"], result["metadata"]["mode"]) == (4, 4, "all")
    events = llama_server.engine_events(mark)
    assert [what for what, _, _ in events].count("start") == 4
    assert llama_server.busiest(mark) >= 3, events  # in flight together, not one after another


def test_wait_any_takes_the_first_reply_and_stops_the_others(group, llama_server, cli):
    ok(cli("group", "broadcast", group, *FIELDS, "--json"))
    result = ok(cli("group", "wait", group, "--any", "--json"))
    winner = result["metadata"]["winner_handle"]
    assert winner in AGENTS and result["order"] == [winner]
    assert result["by_member"][winner]["status"] == "ok"
    assert result["reduced"] == result["by_member"][winner]["text"]
    losers = {h: m["status"] for h, m in result["by_member"].items() if h != winner}
    assert set(losers.values()) <= {"cancelled", "dropped"}, losers
    # the group is free again: the next broadcast is accepted
    ok(cli("group", "broadcast", group, *FIELDS, "--json"))


def test_rank_over_gibberish_ballots_says_how_many_it_could_read(group, cli):
    # each member ranks the others' replies; a random model's ballots are mostly unreadable, and a
    # capital in its prose never counts: either some ballots parsed and name a winner, or none did
    # and there is no result (exit 1), never a winner drawn from a tie of unread ballots
    ok(cli("group", "broadcast", group, *FIELDS, "--json"))
    run = cli("group", "wait", group, "--reducer", "rank", "--json")
    result = run.json()
    meta = result["metadata"]
    assert sorted(meta["labels"].values()) == AGENTS and sorted(meta["labels"]) == ["R1", "R2", "R3", "R4"]
    assert meta["parsed"] + len(meta["unparsed"]) + len(meta.get("ballot_errors", {})) == len(AGENTS)
    if meta["parsed"]:
        assert run.exit_code == 0 and meta["winner_handle"] in AGENTS
        assert result["reduced"] == result["by_member"][meta["winner_handle"]]["text"]
    else:
        assert run.exit_code == 1 and result["reduced"] is None and run.err_json()["error"]["code"] == "no_result"


def test_ask_gathers_an_ephemeral_group_and_leaves_no_trace(llama_project, cli):
    groups = llama_project / ".rooms" / "groups"
    before = sorted(p.name for p in groups.iterdir())
    run = cli("group", "ask", "--profiles", "archer,builder,courier", "--objective", "ship it? YES or NO or ABSTAIN",
              "--reducer", "majority_vote", "--json")
    result = run.json()
    assert sorted(result["by_member"]) == ["archer", "builder", "courier"]
    assert {m["status"] for m in result["by_member"].values()} == {"ok"}, result["by_member"]
    meta = result["metadata"]
    assert meta["reducer"] == "majority_vote" and meta["options"] == ["YES", "NO", "ABSTAIN"]
    assert meta["parsed"] + len(meta["unparsed"]) == 3 and sum(meta["votes"].values()) == meta["parsed"]
    assert set(meta["voted"].values()) <= {"YES", "NO", "ABSTAIN"}
    assert run.exit_code == (0 if result["reduced"] is not None else 1), run.stderr
    assert sorted(p.name for p in groups.iterdir()) == before


def test_python_api_races_a_llama_panel_against_an_offline_member(llama_project):
    create_agent(open_project(llama_project), Agent(id="zed", model="offline", tags=["ops"], directive="You are Zed."))

    async def race():
        async with rooms_cli.ephemeral_group(profiles=["archer", "builder", "zed"], project=llama_project) as g:
            await g.broadcast(objective="ship it?", output_format="one word", tool_guidance="", boundaries="")
            panel = await g.wait_all(reducer="join_by_handle")
            await g.broadcast(objective="first answer wins", output_format="one word", tool_guidance="", boundaries="")
            return panel, await g.wait_any()

    panel, fastest = asyncio.run(race())
    assert sorted(panel.reduced) == ["archer", "builder", "zed"]
    assert {m.status for m in panel.by_member.values()} == {"ok"}
    winner = fastest.metadata["winner_handle"]
    assert fastest.by_member[winner].status == "ok" and fastest.order == [winner]
    assert {m.status for h, m in fastest.by_member.items() if h != winner} <= {"cancelled", "dropped"}
    assert sorted(p.name for p in (llama_project / ".rooms" / "groups").iterdir()) == []


def test_cross_provider_consensus_example_runs_on_llama_and_offline(llama_project):
    script = REPO / "examples" / "groups" / "cross_provider_consensus.py"
    run = subprocess.run([sys.executable, str(script), "llamacpp:tiny", "llamacpp:tiny", "offline"], cwd=llama_project,
                         capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr
    assert [line.split(":")[0].strip() for line in run.stdout.splitlines()[:3]] == ["oracle-1", "oracle-2", "oracle-3"]


# -- SmolLM2-135M-Instruct, a real instruct model (the realmodel fixtures): votes and ballots as a user
#    would ask them; structured output (llama.cpp's json_schema) makes every reply readable

SMOL_MEMBERS = ["archer", "builder", "courier", "drafter"]


def smol_ask(rooms, reducer: str, objective: str):
    run = rooms("group", "ask", "--profiles", ",".join(SMOL_MEMBERS), "--objective", objective, "--reducer", reducer,
                "--json", timeout=300)
    assert run.stdout.strip(), run.stderr
    result = run.json()
    assert {m["status"] for m in result["by_member"].values()} == {"ok"}, result["by_member"]
    assert run.exit_code == (0 if result["reduced"] is not None else 1), run.stderr
    return result


@pytest.mark.realmodel
def test_smollm_votes_are_structured_bounded_and_all_read(smol_server, smol_project, rooms):
    smol_project(smol_server)
    mark = smol_server.log_mark()
    result = smol_ask(rooms, "majority_vote", "Should we ship the release on Friday? YES or NO")
    meta = result["metadata"]
    assert meta["options"] == ["YES", "NO"]
    assert meta["parsed"] == len(SMOL_MEMBERS) and meta["unparsed"] == {}, result["by_member"]
    assert set(meta["voted"].values()) <= {"YES", "NO"} and sum(meta["votes"].values()) == len(SMOL_MEMBERS)
    assert result["reduced"] in ("YES", "NO")  # four votes of two options: one has at least two
    assert max(smol_server.generated(mark)) <= 120  # the "vote" limit


@pytest.mark.realmodel
def test_smollm_ballots_read_only_labels_and_name_a_winner(smol_server, smol_project, rooms):
    smol_project(smol_server)
    result = smol_ask(rooms, "rank", "Name one risk of shipping on Friday, in one sentence.")
    meta = result["metadata"]
    assert sorted(meta["labels"]) == ["R1", "R2", "R3", "R4"]
    uninformative = meta.get("uninformative", {})  # ballots that only repeat their shown order: never counted
    assert meta["parsed"] + len(uninformative) >= 3, meta  # structured ballots: an enum of labels
    assert meta["parsed"] + len(uninformative) + len(meta["unparsed"]) + len(meta.get("ballot_errors", {})) == len(SMOL_MEMBERS)
    own = {h: lab for lab, h in meta["labels"].items()}
    for ranker, ballot in {**meta["ballots"], **uninformative}.items():
        assert ballot and set(ballot) <= set(meta["labels"]) - {own[ranker]} and len(ballot) == len(set(ballot))
    assert meta.get("winner_handle") in SMOL_MEMBERS or meta["no_result"]

