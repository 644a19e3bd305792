"""Votes, ballots and member calls against a real OpenAI-compatible HTTP server (tests/fakeserver.py):
what rooms SENDS (max_tokens, temperature, response_format) and what it REPORTS (parsed counts,
reasons, cut replies, no result)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import add_provider
from fakeserver import FakeServer, Reply

from rooms_cli.agents.definitions import Agent, create_agent

FOUR = ["--output-format", "", "--tool-guidance", "", "--boundaries", ""]


def scripted(by_model: dict[str, list[str]]):
    """The server's answer: the next scripted text of the request's model (its last one repeats)."""

    def answer(request):
        texts = by_model[(request.json or {}).get("model", "")]
        return Reply(text=texts.pop(0) if len(texts) > 1 else texts[0])

    return answer


@pytest.fixture
def server(project_dir):
    with FakeServer("fine") as s:
        add_provider(project_dir, f"local: {{type: openai, base_url: \"{s.openai_url}\", max_retries: 0, timeout: 30}}")
        yield s


def bots(project, *ids, **extra):
    for agent_id in ids:
        create_agent(project, Agent(id=agent_id, directive=f"You are {agent_id}.", model=f"local:{agent_id}", **extra))


def bodies(server, where=lambda body: True):
    return [r.json for r in server.requests if r.json and where(r.json)]


def ok(run):
    assert run.exit_code == 0, run.stderr
    return run.json()


def test_a_vote_is_asked_with_a_schema_bounded_and_cool_and_read_as_an_option(project, server, cli):
    bots(project, "ann", "bob", "cy")
    server.set_default(scripted({"ann": ['{"vote": "YES", "reason": "green"}'], "bob": ['{"vote": "YES", "reason": "ok"}'],
                                 "cy": ['{"vote": "NO", "reason": "flaky"}']}))
    data = ok(cli("group", "ask", "--profiles", "ann,bob,cy", "--objective", "Ship on Friday? YES or NO",
                  "--reducer", "majority_vote", "--json"))
    assert data["reduced"] == "YES"
    meta = data["metadata"]
    assert meta["options"] == ["YES", "NO"] and meta["votes"] == {"YES": 2, "NO": 1}
    assert meta["parsed"] == 3 and meta["unparsed"] == {}
    assert meta["structured_paths"] == {"ann": "schema", "bob": "schema", "cy": "schema"}  # honoured, and checked
    sent = bodies(server)
    assert len(sent) == 3
    for body in sent:
        assert body["max_tokens"] == 120 and body["temperature"] == 0.2  # the "vote" limit; judgements are asked cool
        schema = body["response_format"]["json_schema"]["schema"]
        assert body["response_format"]["type"] == "json_schema"
        assert schema["properties"]["vote"]["enum"] == ["YES", "NO"] and schema["required"] == ["vote", "reason"]
        assert "Ship on Friday? YES or NO" in body["messages"][-1]["content"]
        # the ephemeral group's generated name never reaches a prompt
        assert "eph-" not in json.dumps(body["messages"])


def test_a_schema_the_server_takes_but_does_not_honour_falls_back_to_text_and_says_so(project, server, cli):
    """A server may accept response_format (or a forced tool call) and answer in free text: the reply
    is checked, read tolerantly, an unreadable one asked once more with the shape in words, and the
    path recorded; the server is not sent the schema again in that process."""
    bots(project, "ann", "bob", "cy")
    server.set_default(scripted({"ann": ["YES"], "bob": ["Let me think.", "Yes."], "cy": ["Hmm.", "Still thinking."]}))
    run = cli("group", "ask", "--profiles", "ann,bob,cy", "--objective", "ship it? YES or NO", "--reducer", "majority_vote",
              "--json")
    assert run.exit_code == 0, run.stderr
    meta = run.json()["metadata"]
    assert run.json()["reduced"] == "YES" and meta["votes"] == {"YES": 2}
    assert meta["unparsed"] == {"cy": "names none of YES, NO"}
    assert meta["structured_paths"] == {"ann": "fallback", "bob": "fallback", "cy": "fallback"}
    retries = bodies(server, lambda b: len(b["messages"]) > 2)
    assert sorted(b["model"] for b in retries) == ["bob", "cy"]
    assert all("could not be read" in b["messages"][-1]["content"] for b in retries)
    assert all(b["messages"][-2] == {"role": "assistant", "content": b["messages"][-2]["content"]} for b in retries)
    assert all("response_format" not in b for b in retries)  # found not honoured: text from then on
    assert all("Start your reply with exactly one of: YES, NO" in b["messages"][-1]["content"] for b in retries)


def test_no_result_while_members_replied_exits_1_with_one_sentence(project, server, cli):
    bots(project, "ann", "bob")
    server.set_default(Reply(text="I would rather not say."))
    run = cli("group", "ask", "--profiles", "ann,bob", "--objective", "ship it? YES or NO", "--reducer", "majority_vote")
    assert run.exit_code == 1
    assert run.stdout.strip() == "(no result: nothing to reduce)"
    assert "error: no result although 2 members replied: 0/2 votes parsed: no readable vote" in run.stderr
    data = cli("group", "ask", "--profiles", "ann,bob", "--objective", "ship it? YES or NO", "--reducer", "majority_vote",
               "--json")
    assert data.exit_code == 1
    assert data.json()["metadata"]["parsed"] == 0 and set(data.json()["metadata"]["unparsed"]) == {"ann", "bob"}
    assert data.err_json()["error"]["code"] == "no_result"


def test_a_free_text_server_still_gets_a_tolerant_vote(project, server, cli):
    # a server that refuses response_format: asked again without it, then the reply is parsed as text
    server.refuse = {"response_format"}
    bots(project, "ann", "bob")
    server.set_default(scripted({"ann": ["**NO** — not yet"], "bob": ["no."]}))
    data = ok(cli("group", "ask", "--profiles", "ann,bob", "--objective", "ship it? YES or NO", "--reducer", "majority_vote",
                  "--json"))
    assert data["reduced"] == "NO" and data["metadata"]["parsed"] == 2


def test_member_answers_send_the_group_limit_and_the_agents_temperature_and_a_cut_reply_is_marked(project, server, cli):
    bots(project, "ann")
    create_agent(project, Agent(id="bob", directive="You are bob.", model="local:bob", temperature=0.3))
    server.set_default(scripted({"ann": ["one two three four five six seven eight"], "bob": ["short"]}))
    cli("group", "spawn-mixed", "g", "--profiles", "ann,bob")
    cli("group", "broadcast", "g", "--objective", "plan the week", *FOUR)
    data = ok(cli("group", "wait", "g", "--json"))
    sent = {b["model"]: b for b in bodies(server)}
    assert sent["ann"]["max_tokens"] == 500 and sent["ann"]["temperature"] == 0.7  # "group" default; no temperature set
    assert sent["bob"]["temperature"] == 0.3
    assert "response_format" not in sent["ann"]
    assert "group 'g'" in sent["ann"]["messages"][0]["content"]  # a named group is named
    assert "cut" not in data["by_member"]["bob"]
    server.set_default(lambda request: Reply(text="one two three", finish_reason="length")
                       if request.json["model"] == "ann" else Reply(text="short"))
    cli("group", "broadcast", "g", "--objective", "plan the week", *FOUR)
    run = cli("group", "wait", "g")
    assert run.exit_code == 0, run.stderr
    assert "ann: cut at its max_tokens limit" in run.stderr and "bob: cut" not in run.stderr
    data = ok(cli("group", "wait", "g", "--json"))  # the recorded result
    assert data["by_member"]["ann"]["cut"] is True and data["by_member"]["ann"]["text"] == "one two three"
    assert "cut" not in data["by_member"]["bob"]


def test_rank_ballots_are_structured_retried_once_and_reported(project, server, cli):
    bots(project, "ann", "bob", "cy")

    def answer(request):
        body = request.json or {}
        if "response_format" not in body:
            return Reply(text=f"{body['model']}'s plan")
        allowed = body["response_format"]["json_schema"]["schema"]["properties"]["ranking"]["items"]["enum"]
        if body["model"] == "cy":  # prose with capitals, twice: never a ballot
            return Reply(text="A good plan. I like it.")
        return Reply(text=json.dumps({"ranking": allowed[::-1]}))  # the labels against the order shown

    server.set_default(answer)
    cli("group", "spawn-mixed", "g", "--profiles", "ann,bob,cy")
    cli("group", "broadcast", "g", "--objective", "plan the week", *FOUR)
    run = cli("group", "wait", "g", "--reducer", "rank")
    assert run.exit_code == 0, run.stderr
    assert "2/3 ballots parsed" in run.stderr
    assert "cy: ballot not read — no ranking found" in run.stderr
    data = ok(cli("group", "wait", "g", "--json"))  # the recorded result
    meta = data["metadata"]
    assert sorted(meta["labels"]) == ["R1", "R2", "R3"] and meta["parsed"] == 2 and set(meta["unparsed"]) == {"cy"}
    ballots = bodies(server, lambda b: "response_format" in b)
    assert all(b["max_tokens"] == 120 and b["temperature"] == 0.2 for b in ballots)
    assert len([b for b in bodies(server) if b["model"] == "cy" and "Rank these" in json.dumps(b)]) == 2  # once more, then given up
    status = cli("group", "status", "g")
    assert "rank · 2/3 ballots parsed" in status.stdout
    assert "cy: ballot not read — no ranking found" in status.stdout
    assert cli("group", "status", "g", "--json").json()["recent"][0]["unparsed"] == meta["unparsed"]


def test_a_ballot_that_repeats_the_order_it_was_shown_is_no_information_and_says_so(project, server, cli):
    """Each ranker is shown the others' replies in an order of its own, with no example ballot; a
    ballot in that very order (what a small model gives under the schema) is reported, not counted."""
    bots(project, "ann", "bob", "cy")
    shown: dict[str, list[str]] = {}

    def answer(request):
        body = request.json or {}
        if "response_format" not in body:
            return Reply(text=f"{body['model']}'s plan")
        prompt = body["messages"][-1]["content"]
        order = re.findall(r"(?m)^(R\d+):", prompt)
        shown[body["model"]] = order
        assert '["R' not in prompt and "1. R" not in prompt  # no example ballot to copy
        return Reply(text=json.dumps({"ranking": order}))

    server.set_default(answer)
    data = cli("group", "ask", "--profiles", "ann,bob,cy", "--objective", "plan the week", "--reducer", "rank", "--json")
    assert data.exit_code == 1
    meta = data.json()["metadata"]
    assert meta["parsed"] == 0 and set(meta["uninformative"]) == {"ann", "bob", "cy"}
    assert meta["no_result"] == "no ballot ranked the replies: 3 repeated the order shown (no information)"
    assert "0/3 ballots parsed" in data.err_json()["error"]["message"]
