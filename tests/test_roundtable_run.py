"""Running a roundtable: transcript, sanitizing with one re-ask, memory extraction and prompts, pace."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.models.base import Completion, Provider
from rooms_cli.project.config import load_config
from rooms_cli.roundtable.lessons import read_summary
from rooms_cli.roundtable.orchestrator import (
    RoundtableRequest,
    run_roundtable_sync,
    system_prompt,
    turn_messages,
)


class Scripted(Provider):
    """A provider that replays scripted replies and records every prompt it was given."""

    type = "scripted"

    def __init__(self, replies, summary=""):
        super().__init__("scripted")
        self.replies = list(replies)
        self.summary = summary
        self.calls: list[dict] = []

    async def _acomplete(self, messages, *, model, temperature, max_tokens, on_delta, agent, purpose, **_):
        self.calls.append({"messages": messages, "temperature": temperature, "purpose": purpose,
                           "agent": getattr(agent, "id", None), "max_tokens": max_tokens, "stop": _.get("stop")})
        if purpose == "lessons":
            return Completion(self.summary.pop(0) if isinstance(self.summary, list) else self.summary)
        return Completion(self.replies.pop(0) if self.replies else "Fine by me.")


@pytest.fixture
def scripted(monkeypatch):
    def install(replies, summary=""):
        provider = Scripted(replies, summary)
        monkeypatch.setattr("rooms_cli.models.provider_for", lambda model_string, config: (provider, "m"))
        return provider

    return install


def test_turns_are_appended_to_a_new_roundtable_room_with_meta(cli, project):
    run = cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "4", "--force", "--topic", "pricing", "--json")
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["room"].startswith("roundtable-debate-") and doc["status"] == "done"
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.chat.transcript import read_transcript

    assert load_room(project, doc["room"]).roster == ["analyst", "hustler"]
    records = read_transcript(project, doc["room"])
    said = [m for m in records if m.kind == "message"]
    assert [m.meta for m in said] == [{"roundtable": doc["id"], "turn": n} for n in (1, 2, 3, 4)]
    assert [m.speaker for m in said] == [t["speaker"] for t in doc["turns"]]
    assert all(len(m.text) <= 120 for m in said)
    assert records[0].kind == records[-2].kind == "roundtable"
    # the roundtable's own room is dropped when it ends (issue 31): still readable, out of `room list`
    assert records[-1].text == "dropped the room" and load_room(project, doc["room"]).status == "dropped"


def test_turns_are_printed_as_they_happen_and_into_a_given_room(cli, project):
    from rooms_cli.chat.rooms import create_room
    from rooms_cli.chat.transcript import read_transcript

    create_room(project, "strategy-room", agents=["boss", "analyst", "writer"])
    run = cli("roundtable", "run", "check-in", "--participants", "boss,analyst", "--turns", "3", "--force", "--room", "strategy-room")
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("check-in · ") and "room strategy-room" in lines[0]
    assert [line.split(":")[0].strip() for line in lines[1:4]] == ["1 boss", "2 analyst", "3 boss"]
    assert len([m for m in read_transcript(project, "strategy-room") if m.kind == "message"]) == 3


def test_each_turn_is_one_call_at_the_formats_temperature_with_voice_topic_turn_and_history(scripted, project):
    provider = scripted(["Boss: We ship Friday.", "Friday is fine if the numbers hold.", "Numbers first.", "Agreed."])
    config = load_config(project)
    # deep-dive: the first participant opens, temperature 0.5; with two agents they alternate
    result = run_roundtable_sync(project, config, RoundtableRequest("deep-dive", topic="launch date",
                                                                     participants=["boss", "analyst"], turns=4, force=True))
    answers = [c for c in provider.calls if c["purpose"] == "roundtable"]
    assert len(answers) == 4 and all(c["temperature"] == 0.5 for c in answers)
    assert [c["agent"] for c in answers] == ["boss", "analyst", "boss", "analyst"]
    assert result.turns[0]["text"] == "We ship Friday."  # "Boss:" prefix removed
    second = answers[1]["messages"]
    assert "Tone: measured" in second[0].content and "turn 2 of 4" in second[0].content
    # the others' turns and the cue in one user message: roles alternate (models/prompt.py)
    assert [m.role for m in second] == ["system", "user"]
    assert second[1].content == "Boss: We ship Friday.\n\nlaunch date — over to you."


def test_an_empty_reply_is_asked_again_once_then_the_turn_is_skipped(scripted, project):
    provider = scripted(["https://spam.example", "Boss:", "", "https://x.y", "ok then", "last word"])
    result = run_roundtable_sync(project, load_config(project), RoundtableRequest(
        "debate", topic="t", participants=["boss", "analyst"], turns=3, force=True))
    answers = [c for c in provider.calls if c["purpose"] == "roundtable"]
    # turn 1: empty, re-asked, empty again -> skipped; turn 2: empty, re-asked, empty -> skipped; turn 3: "ok then"
    assert len(answers) == 5
    assert [t["turn"] for t in result.turns] == [3] and [t["turn"] for t in result.skipped] == [1, 2]
    assert result.skipped[0]["why"] == "was empty once cleaned up" and all(t["text"] for t in result.turns)
    assert "empty" in answers[1]["messages"][-1].content
    from rooms_cli.chat.transcript import read_transcript

    said = [m.text for m in read_transcript(project, result.room) if m.kind == "message"]
    assert said == ["ok then"]


def test_an_echo_of_the_cue_is_not_part_of_the_turn(scripted, project):
    scripted(["launch — you open.", "Numbers first — over to you.", "Fine."])
    result = run_debate(project)
    assert [t["text"] for t in result.turns if t["text"]] == ["launch", "Numbers first", "Fine."]


def test_a_reply_that_echoes_the_re_ask_instruction_is_never_a_turn(scripted, project):
    events = []
    provider = scripted(["We ship Friday.", "We ship Friday.",
                         "That reply repeats an earlier turn word for word, no links.", "Numbers first."])
    result = run_roundtable_sync(project, load_config(project), RoundtableRequest(
        "debate", topic="launch", participants=["boss", "analyst"], turns=3, force=True),
        on_event=lambda kind, data: events.append((kind, data)))
    assert [t["text"] for t in result.turns] == ["We ship Friday.", "Numbers first."]
    assert result.skipped == [{"turn": 2, "speaker": result.skipped[0]["speaker"], "why": "only echoed the instruction"}]
    assert [k for k, _ in events if k in ("turn", "skip")] == ["turn", "skip", "turn"]
    from rooms_cli.chat.transcript import read_transcript

    said = [m.text for m in read_transcript(project, result.room) if m.kind == "message"]
    assert said == ["We ship Friday.", "Numbers first."], "no instruction and no empty turn stored"
    assert len([c for c in provider.calls if c["purpose"] == "roundtable"]) == 4


def test_a_turn_that_copies_an_earlier_one_is_asked_again_then_skipped(scripted, project):
    provider = scripted(["We ship Friday.", "we ship friday!", "We ship Friday.", "Numbers first. Numbers first."])
    result = run_debate(project)
    assert [t["turn"] for t in result.turns] == [1, 3] and [t["turn"] for t in result.skipped] == [2]
    assert result.turns[1]["text"] == "Numbers first."  # a sentence said twice in one turn is said once
    turns = [c for c in provider.calls if c["purpose"] == "roundtable"]
    assert "repeats an earlier turn" in turns[2]["messages"][-1].content
    assert all(c["stop"] == (["\nAnalyst:"] if c["agent"] == "boss" else ["\nBoss:"]) for c in turns)  # not the others' turns
    assert all(c["max_tokens"] == 64 for c in turns)  # max(64, 120 // 2)


def test_lessons_are_extracted_offline_without_a_model_call_and_listed(cli, project):
    run = cli("roundtable", "run", "standup", "--participants", "boss,analyst,hustler,writer", "--turns", "6", "--force", "--json")
    doc = run.json()
    assert set(doc["lessons"]) <= {"boss", "analyst", "hustler", "writer"} and len(doc["lessons"]) >= 3
    listed = cli("memory", "list", "analyst", "--json").json()
    assert listed and all(r["agent"] == "analyst" and r["source"] == doc["id"] for r in listed)
    assert [r["lesson"] for r in listed] == doc["lessons"]["analyst"]
    everyone = cli("memory", "list", "--json").json()
    assert {r["agent"] for r in everyone} == set(doc["lessons"])


def test_later_prompts_include_recent_lessons_capped(cli, project, project_dir):
    cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "6", "--force")
    from rooms_cli.agents.definitions import load_agent
    from rooms_cli.agents.memories import list_lessons
    from rooms_cli.roundtable.formats import BUILTINS

    analyst = load_agent(project, "analyst")
    lessons = [r["lesson"] for r in list_lessons(project, "analyst")]
    prompt = system_prompt(project, load_config(project), analyst, BUILTINS["debate"], ["Hustler"], 1, 6, 120)
    assert lessons and all(lesson in prompt for lesson in lessons)
    for _ in range(4):  # pile up lessons: the prompt keeps only the newest max_per_prompt
        cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "6", "--force", "--topic", "more")
    (project_dir / ".rooms.yaml").write_text("memory: {max_per_prompt: 3}\n")
    config = load_config(project)
    prompt = system_prompt(project, config, analyst, BUILTINS["debate"], ["Hustler"], 1, 6, 120)
    assert prompt.count("\n- ") == 3
    messages = turn_messages(project, config, analyst, BUILTINS["debate"], "x", [], {"analyst": "Analyst"}, 1, 6, 120)
    assert list_lessons(project, "analyst")[-1]["lesson"] in messages[0].content


def run_debate(project, turns=3):
    return run_roundtable_sync(project, load_config(project), RoundtableRequest(
        "debate", topic="launch", participants=["boss", "analyst"], turns=turns, force=True))


def test_with_a_real_model_one_extraction_call_is_read_as_lessons_per_participant(scripted, project):
    summary = ('Sure! ```json\n{"boss": ["Analyst wants data before Friday.", "Churn decides the date."],'
               ' "Analyst": ["Boss will not move the date.", "Bring the numbers early."], "nobody": ["x y z"]}\n```')
    provider = scripted(["a", "b", "c"], summary=summary)
    result = run_debate(project)
    calls = [c for c in provider.calls if c["purpose"] == "lessons"]
    assert len(calls) == 1 and calls[0]["max_tokens"] and calls[0]["temperature"] == 0.2
    assert '"boss": ["<lesson>", "<lesson>"]' in calls[0]["messages"][0].content and "exactly 2 or 3" in calls[0]["messages"][0].content
    assert result.lessons == {"boss": ["Analyst wants data before Friday.", "Churn decides the date."],
                              "analyst": ["Boss will not move the date.", "Bring the numbers early."]}
    assert result.lesson_problems == {}


@pytest.mark.parametrize(
    "reply",
    [
        '{"boss": ["We ship on Friday.", "Keep the scope small."], "analyst": ["Measure churn weekly."]}',
        '{"lessons": {"Boss": ["We ship on Friday.", "Keep the scope small."], "@analyst": "Measure churn weekly."}}',
        'Here: {"boss": ["We ship on Friday.", "We ship on Friday.", "Keep the scope small.", "ok"], "analyst": ["Measure churn weekly."]}',
    ],
)
def test_a_structured_summary_is_read_in_its_accepted_shapes(reply):
    found = read_summary(reply, ["boss", "analyst"], {"boss": "Boss", "analyst": "Analyst"})
    assert found.lessons == {"boss": ["We ship on Friday.", "Keep the scope small."], "analyst": ["Measure churn weekly."]}
    assert found.problems["analyst"].startswith("1 lesson (asked for 2–3)")


@pytest.mark.parametrize("reply", [
    "- boss: ship on Friday\n- **Analyst**: measure churn first",  # lines, not the JSON object
    "I cannot do that.",
    "",
    '{"summary": "we talked"}',
])
def test_no_lessons_come_from_a_reply_without_the_structured_summary(reply):
    found = read_summary(reply, ["boss", "analyst"], {"boss": "Boss"})
    assert found.lessons == {} and found.problems["*"]


def test_quotes_of_turns_transcript_lines_and_repetitions_are_rejected_and_reported():
    turns = [{"turn": 1, "speaker": "boss", "text": "Bottom line: we ship the launch on Friday no matter what."},
             {"turn": 2, "speaker": "analyst", "text": "salt_salt_salt_salt_salt"}]
    summary = ('{"boss": ["Bottom line: we ship the launch on Friday no matter what.", "analyst: salt it all", '
               '"I am a chatbot. I am a chatbot. I am a chatbot.", "Churn decides whether Friday holds."],'
               ' "analyst": ["salt_salt_salt_salt_salt", "ok"]}')
    found = read_summary(summary, ["boss", "analyst"], {"boss": "Boss", "analyst": "Analyst"}, turns)
    assert found.lessons == {"boss": ["Churn decides whether Friday holds."]}
    assert found.problems["boss"] == ("1 lesson (asked for 2–3): rejected 1 as a copy of a turn, 1 as a transcript line, "
                                      "1 as a repetition")
    assert found.problems["analyst"] == "0 lessons (asked for 2–3): rejected 2 as too short"


def test_an_unusable_summary_is_asked_for_once_more_then_nothing_is_learned(scripted, project, project_dir):
    provider = scripted(["We ship Friday.", "Numbers first.", "Fine."], summary="I cannot do that.")
    result = run_debate(project)
    calls = [c for c in provider.calls if c["purpose"] == "lessons"]
    assert len(calls) == 2 and "could not be used" in calls[1]["messages"][-1].content
    assert result.lessons == {} and "no JSON object" in result.lesson_problems["*"]
    memories = project_dir / ".rooms" / "memories"
    assert not memories.exists() or not list(memories.iterdir())


def test_the_retry_can_rescue_the_summary(scripted, project):
    scripted(["a", "b", "c"], summary=["no idea", '{"boss": ["Ship when the numbers hold.", "Ask analyst first."],'
                                                   ' "analyst": ["Boss wants a date.", "Send numbers by Thursday."]}'])
    assert run_debate(project).lessons["boss"] == ["Ship when the numbers hold.", "Ask analyst first."]


def test_the_lesson_count_is_said_in_words_and_a_short_participant_is_reported(scripted, cli, project):
    scripted(["a", "b", "c"], summary='{"boss": ["Ship when the numbers hold."], "analyst": []}')
    run = cli("roundtable", "run", "debate", "--participants", "boss,analyst", "--turns", "3", "--force")
    assert run.exit_code == 0, run.stderr
    assert "learned 1 lesson (rooms memory list)" in run.stdout
    assert "boss: 1 lesson (asked for 2–3)" in run.stdout and "analyst: 0 lessons (asked for 2–3)" in run.stdout
    scripted(["a", "b", "c"], summary='{"boss": ["Ship when the numbers hold.", "Ask analyst first.", "Keep it small."],'
                                      ' "analyst": ["Boss wants a date.", "Numbers by Thursday please."]}')
    run = cli("roundtable", "run", "debate", "--participants", "boss,analyst", "--turns", "3", "--force")
    assert "learned 5 lessons" in run.stdout and "asked for" not in run.stdout


def test_memory_forget_by_id_source_and_all(cli, project):
    first = cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "4", "--force", "--json").json()
    second = cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "4", "--force", "--json").json()
    lessons = cli("memory", "list", "analyst", "--json").json()
    one = lessons[0]["id"]
    out = cli("memory", "forget", "analyst", one, "--json")
    assert out.exit_code == 0 and [r["id"] for r in out.json()["removed"]] == [one]
    out = cli("memory", "forget", "analyst", "--source", first["id"], "--json")
    assert all(r["source"] == first["id"] for r in out.json()["removed"])
    left = cli("memory", "list", "analyst", "--json").json()
    assert left and {r["source"] for r in left} == {second["id"]}
    assert cli("memory", "forget", "analyst", "--all").stdout.startswith("Forgot")
    assert cli("memory", "list", "analyst", "--json").json() == []
    bad = cli("memory", "forget", "analyst")
    assert bad.exit_code == 1 and "say what to forget" in bad.stderr


def test_pace_adds_a_gap_between_turns(cli, project):
    start = time.monotonic()
    run = cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "3", "--force", "--pace", "0.2")
    elapsed = time.monotonic() - start
    assert run.exit_code == 0
    assert elapsed >= 0.4  # two gaps of at least 0.2 s


def test_bad_arguments_are_one_clear_sentence(cli, project):
    run = cli("roundtable", "run", "debate", "--participants", "analyst,ghost", "--json")
    assert run.exit_code == 1 and "ghost" in run.err_json()["error"]["message"]
    run = cli("roundtable", "run", "standup", "--participants", "analyst,boss")
    assert run.exit_code == 1 and "takes 4–6 agents, got 2" in run.stderr
    assert cli("roundtable", "run", "debate", "--turns", "0").exit_code == 2


def test_external_agents_never_take_part(cli, project, project_dir):
    for agent in ("architect", "judge", "ops", "researcher", "reviewer", "scribe", "boss", "writer", "wildcard"):
        path = project_dir / ".rooms" / "agents" / f"{agent}.md"
        path.write_text(path.read_text().replace("---\n", "---\nmodel: external\n", 1))
    run = cli("roundtable", "run", "debate", "--json")
    assert run.exit_code == 0, run.stderr
    assert sorted(run.json()["participants"]) == ["analyst", "hustler"]
    assert cli("roundtable", "run", "standup").exit_code == 1
    json.loads(cli("roundtable", "formats", "--json").stdout)



summaries = st.one_of(
    st.text(max_size=200),
    st.dictionaries(st.sampled_from(["boss", "Boss", "analyst", "ghost", "lessons"]),
                    st.one_of(st.text(max_size=60), st.lists(st.text(max_size=60), max_size=5)), max_size=4).map(json.dumps),
)


@settings(deadline=None)
@given(summaries)
def test_reading_a_summary_never_fails_keeps_only_participants_and_at_most_three_each(text):
    turns = [{"turn": 1, "speaker": "boss", "text": "We ship the launch on Friday no matter what."}]
    found = read_summary(text, ["boss", "analyst"], {"boss": "Boss"}, turns)
    assert set(found.lessons) <= {"boss", "analyst"}
    assert all(0 < len(v) <= 3 for v in found.lessons.values())
    for lessons in found.lessons.values():
        assert all(len(x.split()) >= 3 and not x.lower().startswith(("boss:", "analyst:")) for x in lessons)
        assert all("we ship the launch on friday no matter what" not in x.lower() for x in lessons)
    assert found.lessons or found.problems["*"]


class Failing(Scripted):
    async def _acomplete(self, messages, **kwargs):
        if len([c for c in self.calls if c["purpose"] == "roundtable"]) >= 1:
            from rooms_cli.core.errors import ProviderError

            raise ProviderError("provider 'scripted' answered 500 three times")
        return await super()._acomplete(messages, **kwargs)


def test_a_provider_failure_is_recorded_and_leaves_the_transcript_consistent(monkeypatch, project, cli):
    provider = Failing(["first turn"])
    monkeypatch.setattr("rooms_cli.models.provider_for", lambda model_string, config: (provider, "m"))
    run = cli("roundtable", "run", "deep-dive", "--participants", "boss,analyst", "--turns", "3", "--force", "--json")
    assert run.exit_code == 1 and "answered 500" in run.err_json()["error"]["message"]
    from rooms_cli.chat.rooms import list_room_states
    from rooms_cli.chat.transcript import read_transcript

    room = next(r.id for r in list_room_states(project) if r.id.startswith("roundtable-"))
    records = read_transcript(project, room)
    assert [m.kind for m in records] == ["roundtable", "message", "system", "roundtable"]
    assert records[2].text.startswith("turn 2: analyst's model failed") and records[-1].meta["status"] == "failed"


def test_demo_shows_a_standup_and_a_debate(cli, tmp_path):
    run = cli("demo", "--dir", str(tmp_path / "demo"), "--only", "roundtable", "--json")
    assert run.exit_code == 0, run.stderr
    events = run.json()["events"]
    commands = [e["text"] for e in events if e["kind"] == "cmd"]
    assert commands[0].startswith("rooms roundtable run standup") and commands[1].startswith("rooms roundtable run debate")
    assert sum(e["kind"] == "line" for e in events) >= 12
    assert (tmp_path / "demo" / ".rooms" / "memories" / "analyst.jsonl").exists()


def test_turns_outside_the_formats_range_are_refused_unless_forced(cli, project):
    run = cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "50")
    assert run.exit_code == 2
    assert run.stderr.strip() == ("error: format 'debate' takes 6–10 turns, got --turns 50; pick a count in that "
                                  "range, or add --force to run it anyway")
    queued = cli("roundtable", "queue", "debate", "--turns", "2")
    assert queued.exit_code == 2 and "takes 6–10 turns" in queued.stderr
    forced = cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "2", "--force", "--json")
    assert forced.exit_code == 0 and forced.json()["planned_turns"] == 2


def test_participant_counts_outside_the_formats_range_are_refused_unless_forced(cli, project):
    run = cli("roundtable", "run", "standup", "--participants", "analyst,hustler", "--turns", "6")
    assert run.exit_code == 1 and "format 'standup' takes 4–6 agents, got 2" in run.stderr and "--force" in run.stderr
    forced = cli("roundtable", "run", "standup", "--participants", "analyst,hustler", "--turns", "6", "--force", "--json")
    assert forced.exit_code == 0 and forced.json()["participants"] == ["analyst", "hustler"]
    alone = cli("roundtable", "run", "standup", "--participants", "analyst", "--force")
    assert alone.exit_code == 1 and "needs at least 2 agents" in alone.stderr


def test_the_lessons_call_asks_for_short_lessons_and_a_summary_cut_by_the_limit_is_asked_again_saying_so(monkeypatch, project):
    from rooms_cli.roundtable.lessons import MAX_LESSON_WORDS, summary_schema

    class Cut(Scripted):
        structured = True

        async def _acomplete(self, messages, **kw):
            done = await super()._acomplete(messages, **kw)
            if kw["purpose"] == "lessons" and len([c for c in self.calls if c["purpose"] == "lessons"]) == 1:
                done.finish_reason = "length"
            return done

    provider = Cut(["a", "b", "c"], summary=['{"boss": ["We ship on Friday and the scope stays small and', '{"boss": ['])
    monkeypatch.setattr("rooms_cli.models.provider_for", lambda model_string, config: (provider, "m"))
    result = run_debate(project)
    calls = [c for c in provider.calls if c["purpose"] == "lessons"]
    assert f"at most {MAX_LESSON_WORDS} words" in calls[0]["messages"][0].content
    assert summary_schema(["boss"])["properties"]["boss"]["items"]["maxLength"] <= 100
    retry = calls[1]["messages"][-1].content
    assert "ran past the 500-token limit" in retry and f"at most {MAX_LESSON_WORDS} words" in retry
    assert len(calls) == 2 and result.lessons == {}


def test_lessons_that_are_loops_splices_or_quotes_of_turns_are_rejected():
    """docs/roundtable.md: a lesson is the model's own summary, never the conversation glued back."""
    from rooms_cli.roundtable.lessons import check_lessons

    turns = [{"speaker": "boss", "text": "We ship on Friday if the login fix lands today."},
             {"speaker": "analyst", "text": "The numbers tell a different story about the signup funnel."}]
    found = check_lessons({"boss": [
        "We ship on Friday if the numbers tell a different story",  # a splice of both turns
        "ship ship ship ship ship ship",  # a loop
        "Analyst: the numbers tell a different story",  # a transcript line
        "Friday depends on the login fix; the funnel numbers need a second look",  # a lesson
    ]}, ["boss"], turns=turns)
    assert found.lessons == {"boss": ["Friday depends on the login fix; the funnel numbers need a second look"]}
    assert "a splice of turns" in found.problems["boss"] and "a repetition" in found.problems["boss"]
