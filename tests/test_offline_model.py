"""The offline model: deterministic, no network, passes when a message is not its business."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.agents.definitions import load_agent
from rooms_cli.core.text import summarize
from rooms_cli.models import Message, parse_model, provider_for
from rooms_cli.models.offline import should_pass
from rooms_cli.project.config import Config


def ask(agent, text, purpose="chat", on_delta=None):
    provider, model = provider_for("offline", Config())
    return provider.complete(
        [Message("system", agent.directive), Message("user", text)], model=model, agent=agent, purpose=purpose, on_delta=on_delta
    )


def test_offline_replies_are_deterministic_and_labelled(project):
    agent = load_agent(project, "researcher")
    a = ask(agent, "what is the rate limit of the search api?")
    b = ask(agent, "what is the rate limit of the search api?")
    assert a.text == b.text and a.text != "/pass"
    assert a.offline and a.model == "offline"
    assert a.usage.input_tokens > 0 and a.usage.output_tokens > 0


def test_offline_passes_when_offered_and_the_message_shares_nothing_with_its_persona(project):
    from rooms_cli.chat.context import ANSWER_RULE, PASS_RULE

    researcher = load_agent(project, "researcher")
    offered = [Message("system", f"{researcher.directive}\n\n{PASS_RULE}"), Message("user", "the birthday cake was delicious")]
    asked = [Message("system", f"{researcher.directive}\n\n{ANSWER_RULE}"), Message("user", "the birthday cake was delicious")]
    provider, model = provider_for("offline", Config())
    assert provider.complete(offered, model=model, agent=researcher, purpose="chat").text == "/pass"
    assert provider.complete(asked, model=model, agent=researcher, purpose="chat").text != "/pass"
    assert ask(researcher, "the birthday cake was delicious", purpose="answer").text != "/pass"
    greeted = [Message("system", f"{researcher.directive}\n\n{PASS_RULE}"), Message("user", "hello everyone")]
    assert provider.complete(greeted, model=model, agent=researcher, purpose="chat").text != "/pass"


def test_offline_stems_so_plurals_and_tags_meet(project):
    researcher = load_agent(project, "researcher")  # tags include rate-limits
    assert not should_pass(researcher, "we keep hitting the rate limit")


def test_offline_streams_the_same_text_it_returns(project):
    agent = load_agent(project, "boss")
    pieces: list[str] = []
    done = ask(agent, "where are we on the roadmap deadlines?", purpose="answer", on_delta=pieces.append)
    assert "".join(pieces) == done.text and len(pieces) > 1


def test_offline_summaries_are_extractive():
    text = "The cache is slow. We measured 300 ms on the cache path. Lunch was fine. The cache needs an index."
    summary = summarize(text, max_chars=80)
    assert summary and all(sentence.strip() in text for sentence in summary.split(". ") if sentence)
    assert "cache" in summary


def test_offline_rank_returns_every_label_once(project):
    agent = load_agent(project, "analyst")
    done = ask(agent, "Rank these answers best first:\nA: yes\nB: no\nC: maybe", purpose="rank")
    assert sorted(done.text.split(", ")) == ["A", "B", "C"]


@pytest.mark.parametrize("shown", [["R1", "R2"], ["R2", "R1"], ["R3", "R1", "R2"]])
def test_offline_rank_never_repeats_the_order_shown(project, shown):
    prompt = "Rank these anonymous replies to: plan\n" + "\n".join(f"{label}: reply {label}" for label in shown)
    for name in ("analyst", "boss", "hustler", "judge", "ops", "writer"):
        assert ask(load_agent(project, name), prompt, purpose="rank").text.split(", ") != shown


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=300))
def test_offline_never_fails_on_any_text(text):
    from rooms_cli.agents.definitions import Agent

    agent = Agent(id="x", directive="You are x.", tags=["api"], voice={"line": "Hm."})
    for purpose in ("chat", "answer", "summary", "rank"):
        ask(agent, text, purpose=purpose)


def test_model_strings_split_on_the_first_colon():
    assert parse_model("ollama:llama3.2:3b") == ("ollama", "llama3.2:3b")
    assert parse_model("offline") == ("offline", "")


def test_offline_voices_differ_by_temperament(project):
    boss, analyst = load_agent(project, "boss"), load_agent(project, "analyst")
    text = "should we ship the beta on friday?"
    assert ask(boss, text, purpose="answer").text != ask(analyst, text, purpose="answer").text


def test_offline_reacts_to_the_previous_speaker_by_affinity(project):
    from rooms_cli.models.offline import reply_in_voice

    analyst = load_agent(project, "analyst")  # affinity: hustler -0.4, boss 0.5
    against = reply_in_voice(analyst, "ship it now", previous="Hustler")
    towards = reply_in_voice(analyst, "ship it now", previous="Boss")
    assert "Hustler" in against and any(w in against for w in ("don't buy", "no.", "skips", "Not so fast"))
    assert "Boss" in towards and any(w in towards for w in ("right", "Good point", "Agree", "matches"))
    to_you = reply_in_voice(analyst, "ship it now", previous="you")
    assert "You is" not in to_you and "you's" not in to_you.lower()
