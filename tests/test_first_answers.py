"""The first chats the tool itself suggests get answers on the offline model (issue 45, item 1), and
the offline model's replies read as English (a property over many generated replies)."""

from __future__ import annotations

import re
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.agents.definitions import Agent
from rooms_cli.models.offline import reply_in_voice, subject


def _fresh(tmp_path, cli, monkeypatch, example: str):
    target = tmp_path / example
    assert cli("init", str(target), "--example", example).exit_code == 0
    monkeypatch.setenv("ROOMS_DIR", str(target))
    return target


def _said(run) -> list[tuple[str, str]]:
    assert run.exit_code == 0, run.stderr
    return [(r["speaker"], r["kind"]) for r in run.json()["replies"]]


def _chat(cli, text: str) -> list[tuple[str, str]]:
    return _said(cli("chat", text, "--json"))


def test_the_help_example_gets_an_answer_from_every_agent(tmp_path, cli, monkeypatch):
    """`rooms --help`'s own example, read from the help and run as it stands."""
    example = re.search(r"Example: (.+?)\n\n", cli("--help").stdout.replace("\n  ", " "), re.S)
    assert example, "rooms --help has an example"
    first, second = (shlex.split(part) for part in example.group(1).split("&&"))
    assert first[:2] == ["rooms", "init"] and second[:2] == ["rooms", "chat"]
    monkeypatch.chdir(tmp_path)
    assert cli(*first[1:]).exit_code == 0
    replies = _chat(cli, *second[2:])
    assert [kind for _, kind in replies] == ["message"] * 5, replies


def test_what_init_suggests_is_answered_by_every_agent_of_the_room(tmp_path, cli, monkeypatch):
    target = tmp_path / "dev"
    suggestion = re.search(r"Next: rooms chat (.+?)\s{2,}", cli("init", str(target), "--example", "dev").stdout)
    assert suggestion, "init --example dev suggests a chat"
    monkeypatch.setenv("ROOMS_DIR", str(target))
    replies = _chat(cli, shlex.split(suggestion.group(1))[0])
    assert replies and all(kind == "message" for _, kind in replies), replies
    roster = [m["id"] for m in cli("room", "show", "default", "--json").json()["roster"]]
    quiet = {"scribe"}  # quiet: true sits out an open message while others can answer (the seed)
    assert {speaker for speaker, _ in replies} == set(roster) - quiet


@pytest.mark.parametrize("text, who", [
    ("@ops are we green on staging?", ["ops"]),
    ("@jam what's your angle on this?", None),
    ("@reseacher what's the rate limit on the api?", ["researcher"]),
    ("@architect what's our brand colour?", ["architect"]),  # far from its tags: asked by name, it answers
])
def test_an_addressed_agent_answers_in_character(tmp_path, cli, monkeypatch, text, who):
    _fresh(tmp_path, cli, monkeypatch, "dev")
    replies = _chat(cli, text)
    roster = [m["id"] for m in cli("room", "show", "default", "--json").json()["roster"]]
    assert sorted(s for s, _ in replies) == sorted(who or roster)
    assert all(kind == "message" for _, kind in replies), replies


def test_an_open_message_still_passes_by_relevance(tmp_path, cli, monkeypatch):
    _fresh(tmp_path, cli, monkeypatch, "dev")
    replies = _chat(cli, "the birthday cake was delicious")
    assert replies and all(kind == "pass" for _, kind in replies)
    answered = _chat(cli, "anyone have context on the auth middleware?")
    assert ("architect", "message") in answered and ("ops", "pass") in answered


@pytest.mark.parametrize("example", ["dev", "roundtable", "gamedev"])
def test_no_two_agents_of_an_example_set_answer_alike(tmp_path, cli, monkeypatch, example):
    """Chat drops a near copy of another agent's reply as a repeat: the offline model's agents never
    say the same thing to a greeting or an @jam question."""
    _fresh(tmp_path, cli, monkeypatch, example)
    for text in ("hello everyone", "@jam what should we build next?", "@jam how do we ship the new login page?",
                 "@everyone what is blocking the release?", "good morning team"):
        cli("room", "continue")
        replies = _chat(cli, text)
        assert "repeat" not in [kind for _, kind in replies], (text, replies)


def test_the_same_seed_gives_the_same_conversation(tmp_path, cli, monkeypatch):
    """Who answers and what they say (a pass's action line is drawn per message id, which differs)."""
    monkeypatch.setenv("ROOMS_SEED", "7")
    shown = []
    for name in ("one", "two"):
        target = tmp_path / name
        cli("init", str(target), "--example", "dev")
        monkeypatch.setenv("ROOMS_DIR", str(target))
        for text in ("hello everyone", "the birthday cake was delicious", "@jam what's your angle on this?"):
            cli("chat", text)
        shown.append([(m["speaker"], m["kind"], m["text"] if m["kind"] != "pass" else "")
                      for m in cli("transcript", "--json").json()])
    assert shown[0] == shown[1]


# --- the grammar of what it says -------------------------------------------------------------------

BAD = {
    "second person agreement": re.compile(r"\b[Yy]ou (is|was|has)\b|\b[Yy]ou's\b"),
    "a word doubled": re.compile(r"\b(\w+) \1\b", re.IGNORECASE),
    "two determiners": re.compile(r"\b(the|a|an|this|that|our|its|their) (the|a|an|this|that|our|your|my|its|their)\b",
                                  re.IGNORECASE),
    "a before a vowel": re.compile(r"\ba (?![uU]s|[uU]ni|[oO]ne)[aeiouAEIOU]\w|\ba (8|11|18|8\d)\b"),
    "an before a consonant": re.compile(r"\ban (?!hour|honest)[b-df-hj-np-tv-z]\w", re.IGNORECASE),
    "an unfilled slot": re.compile(r"[{}]"),
    "space before punctuation": re.compile(r" [.,:;?!]"),
    "doubled space or punctuation": re.compile(r"  |[,:;] ?[.,:;]|\.[,:;]|(?<!\.)\.\.(?!\.)|\?\?"),
    "a sentence starting lowercase": re.compile(r"(?<![.…])[.?!] [a-z]"),
    "an empty phrase": re.compile(r"\b(on|of|about|around|for|change|decide on) [.,:;?!]"),
}


def _problems(text: str) -> list[str]:
    found = [name for name, pattern in BAD.items() if pattern.search(text)]
    if not text[:1].isupper() and not text[:1].isdigit():
        found.append("starts lowercase")
    if not text.rstrip().endswith((".", "?", "!")):
        found.append("no final punctuation")
    return found


def _agents() -> list[Agent]:
    from rooms_cli.agents.definitions import parse_agent
    from rooms_cli.project.init import example_sets
    from rooms_cli.store import files

    agents = [parse_agent(files.package_text("data", "agents", example, f"{name}.md"), name, name)
              for example, names in example_sets().items() for name in names]
    return [*agents, Agent(id="plain", directive="You help."), Agent(id="tagged", directive="x", tags=["api", "billing"])]


MESSAGES = [
    "what should we build next?", "hello everyone", "are we green on staging?", "what's your angle on this?",
    "anyone have context on the auth middleware?", "what's the rate limit on the api?", "ship it now",
    "how do we deploy and review the api rate limit change?", "Is Postgres fast enough for us?",
    "Should we move to Kubernetes next quarter?", "what matters most this week — over to you.",
    "launch week — you open.", "the birthday cake was delicious", "a new onboarding flow", "an hour of downtime",
    "Vote one of: A, B. Which is better?", "", "???", "@ops", "thoughts?", "good morning", "this", "it broke again",
    "our API keys leak into logs", "we keep hitting the rate limit", "Write the auth spec", "8 users churned",
]
SPEAKERS = [None, "you", "You", "boss", "Hustler", "alice"]
WORDS = ["the", "a", "an", "our", "this", "that", "it", "we", "you", "should", "ship", "build", "api", "Postgres",
         "latency", "rate", "limit", "deadlines", "staging", "onboarding", "next", "week", "angle", "is", "are",
         "to", "of", "on", "?", ",", ".", "—", "!", "8", "users", "hello", "auth", "middleware", "ideas", "for"]


@pytest.mark.parametrize("text", MESSAGES)
def test_every_reply_to_the_suggested_messages_reads_as_english(text):
    for agent in _agents():
        for previous in SPEAKERS:
            for salt in range(3):
                reply = reply_in_voice(agent, text, salt=salt, previous=previous)
                assert not _problems(reply), (agent.id, text, previous, reply, _problems(reply))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join), st.sampled_from(SPEAKERS), st.integers(0, 5))
def test_every_reply_to_any_message_reads_as_english(text, previous, salt):
    for agent in _agents():
        reply = reply_in_voice(agent, text, salt=salt, previous=previous)
        assert not _problems(reply), (agent.id, text, previous, reply, _problems(reply))


@pytest.mark.parametrize("text, expected", [
    ("anyone have context on the auth middleware?", "the auth middleware"),
    ("are we green on staging?", "staging"),
    ("what's your angle on this?", "this"),
    ("what should we build next?", "this"),
    ("how do we deploy and review the api rate limit change?", "the api rate limit change"),
    ("should we raise prices?", "prices"),
    ("launch week", "the launch week"),
    ("Is Postgres fast enough for us?", "Postgres"),
])
def test_the_subject_of_a_message_is_a_noun_phrase(text, expected):
    assert subject(text) == expected


def test_the_chat_guide_s_jam_example_runs_with_budget_for_everyone(tmp_path, cli, monkeypatch):
    """docs/chat.md's first examples, in order: its `@jam` is answered by the whole room, none sat out."""
    from conftest import REPO

    guide = (REPO / "docs" / "chat.md").read_text()
    commands = [shlex.split(line.split("#")[0]) for line in re.findall(r"(?m)^\$? ?(rooms (?:init|chat|room) .+)$", guide)]
    commands = commands[: next(i for i, c in enumerate(commands) if c[:2] == ["rooms", "chat"] and c[2].startswith("@jam")) + 1]
    monkeypatch.chdir(tmp_path)
    for command in commands[:-1]:
        assert cli(*command[1:]).exit_code == 0, command
    jam = cli(*commands[-1][1:], "--json").json()
    assert not any("sat out" in note for note in jam["notes"]), jam["notes"]
    assert [r["kind"] for r in jam["replies"]] == ["message"] * len(jam["eligible"]) == ["message"] * 5


def test_a_streamed_reply_is_printed_as_it_is_stored(tmp_path, cli, monkeypatch):
    """The pass filter holds a reply's first words back, then shows them: the space before the next
    piece stays ("Happy to own the", never "ownthe")."""
    _fresh(tmp_path, cli, monkeypatch, "dev")
    for text in ("@architect what about the cache layer?", "anyone have context on the auth middleware?",
                 "@everyone what is blocking the release?"):
        shown = cli("chat", text).stdout.splitlines()
        stored = [f"{m['speaker']}: {m['text']}" for m in cli("transcript", "--json", "--last", "20").json()
                  if m["kind"] == "message" and m["speaker"] != "tester"]
        assert [line for line in shown if not line.startswith("  ")] == stored[-len([s for s in shown if not s.startswith("  ")]):]
