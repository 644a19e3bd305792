"""A language model's reply is held against what it was told and what it said before, anywhere:
pieces read back from its instructions or its own earlier lines are taken out, and a reply that is
nothing else is a `repeat` that costs no budget (chat), a skipped turn (roundtable), or no reply
(wake). The model here is a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/fakeserver.py)."""

from __future__ import annotations

from pathlib import Path

import yaml
from chatkit import new_agent, records, room, say, state
from fakeserver import FakeServer

from rooms_cli.agents.said import recent_lines
from rooms_cli.models.repetition import copied_from, drop_echoes, drop_said, says_again

SYSTEM = ("You are Analyst (analyst), a data analyst. In the chat room: analyst (Analyst), boss (Boss). "
          "Answer in one short sentence.")


def test_pieces_read_back_from_the_instructions_go_also_when_strung_together_and_own_words_stay():
    reply = "In the chat room: analyst (Analyst), boss (Boss). Churn fell 3% after the fix."
    assert drop_echoes(reply, [SYSTEM, "(Answer as analyst in one short message.)"]) == ("Churn fell 3% after the fix.", True)
    assert drop_echoes("Churn fell 3% after the fix.", SYSTEM) == ("Churn fell 3% after the fix.", False)
    assert drop_echoes("You are Analyst (analyst), a data", SYSTEM) == ("", True)  # a cut-off start is an echo too


def test_a_sentence_the_agent_said_before_is_taken_out_of_its_next_reply():
    text, restated = drop_said("We ship the login fix first. Then the dashboard on Thursday.",
                               ["We ship the login fix first."])
    assert (text, restated) == ("Then the dashboard on Thursday.", True)
    assert drop_said("Then the dashboard.", ["We ship the login fix first."]) == ("Then the dashboard.", False)


def test_a_line_said_again_is_the_same_words_a_near_copy_or_one_held_whole_in_the_other():
    assert says_again("Not ready.", "not ready!", own=True) and not says_again("Not ready.", "not ready!", own=False)
    assert says_again("You are a modeler of data.", "You are a modeler of data. Hmm you are a modeler of data.", own=True)
    assert not says_again("We should ship the login fix.", "Numbers on churn are due by noon today.", own=True)

    class Line:
        def __init__(self, speaker: str, text: str) -> None:
            self.speaker, self.text = speaker, text

    older, newer = Line("boss", "ship it now, everyone, today"), Line("analyst", "ship it now, everyone, today!")
    assert copied_from("Ship it now, everyone, today.", [older, newer], "analyst") is newer  # newest first


def _use(project, server, agents):
    config = {"default_model": "offline", "providers": {"fake": {"type": "openai", "base_url": server.openai_url,
                                                                 "max_retries": 0}}}
    (Path(project.root) / ".rooms.yaml").write_text(yaml.safe_dump(config))
    for agent_id in agents:
        new_agent(project, agent_id, tags=["anything"], model="fake:m")


def test_an_agent_saying_its_line_from_another_room_again_stores_a_repeat_that_costs_nothing(project):
    line = "We ship the login fix first, then the dashboard."
    with FakeServer(line) as server:
        _use(project, server, ["a0"])
        room(project, "alpha", agents=["a0", "ops"])
        room(project, "beta", agents=["a0", "ops"])
        assert [r.kind for r in say(project, "@a0 what first?", room="alpha").replies] == ["message"]
        lately = recent_lines(project, ["a0"])["a0"]
        assert [(s.text, s.where) for s in lately] == [(line, "alpha")]
        before = state(project, "beta").budget_remaining
        [reply] = say(project, "@a0 and here?", room="beta").replies
        assert reply.kind == "repeat" and reply.meta["self"] is True and reply.text.startswith("repeats what it said before")
        assert state(project, "beta").budget_remaining == before
        assert [r.text for r in records(project, "beta", kind="message") if r.speaker == "a0"] == []


def test_what_an_agent_said_is_its_spoken_messages_newest_first_and_bounded(project):
    with FakeServer() as server:
        _use(project, server, ["a0"])
        room(project, "alpha", agents=["a0", "ops"])
        server.push("Churn fell three percent after the login fix.", "/pass", "The dashboard ships on Thursday, not Friday.")
        for ask in ("@a0 churn?", "anything?", "@a0 dashboard?"):
            say(project, ask, room="alpha")
    assert [s.text for s in recent_lines(project, ["a0"])["a0"]] == ["The dashboard ships on Thursday, not Friday.",
                                                                    "Churn fell three percent after the login fix."]
    lines = recent_lines(project, ["a0", "nobody"], limit=1)
    assert [s.text for s in lines["a0"]] == ["The dashboard ships on Thursday, not Friday."] and lines["nobody"] == []
