"""The rules of chat.md, through the Python API on the offline model."""

from __future__ import annotations

from pathlib import Path

import pytest
from chatkit import DEV, cont, new_agent, records, room, say, state

from rooms_cli.chat import sessions
from rooms_cli.chat.activation import activate
from rooms_cli.chat.addressing import parse
from rooms_cli.chat.budget import budget_for
from rooms_cli.chat.context import build_prompt, read_snapshot
from rooms_cli.chat.coordinator import FLAVOR_LINES, PASS_LINES, append_records, explain
from rooms_cli.chat.handoff import latest_deliberation
from rooms_cli.chat.membership import invite, kick, set_muted
from rooms_cli.chat.rooms import create_room, update_room
from rooms_cli.chat.transcript import make_message
from rooms_cli.core.errors import Conflict
from rooms_cli.project.config import load_config


@pytest.mark.parametrize(("size", "expected"), [(1, 6), (2, 6), (4, 6), (5, 8), (10, 15), (14, 21), (20, 21), (40, 21)])
def test_budget_is_clamped_one_and_a_half_times_the_roster(size, expected):
    assert budget_for(size) == expected


def test_new_room_budget_follows_its_roster(project):
    assert room(project, "two", ["architect", "ops"]).budget_total == 6
    assert room(project, "ten").budget_total == 6
    full = create_room(project, "full")  # every non-idle agent: 10 of the example sets
    assert len(full.roster) == 10 and full.budget_total == 15


def test_substantive_reply_costs_one_and_pass_costs_nothing(project):
    room(project)
    result = say(project, "How should we design the auth middleware?")
    kinds = {r.speaker: r.kind for r in result.replies}
    assert kinds == {"architect": "message", "researcher": "pass", "reviewer": "pass", "ops": "pass"}
    assert state(project).budget_remaining == 5
    passes = records(project, kind="pass")
    assert all(p.text in PASS_LINES for p in passes)
    assert len({p.text for p in passes}) == 3, "pass lines vary"
    assert not any("/pass" in r.text for r in records(project))


def test_open_message_prompts_in_tfidf_order_quiet_last(project):
    room(project, agents=["scribe", *DEV])
    data = explain(project, load_config(project), "sync", "latency of the database deploy, and auth")
    assert data["eligible"][0] == "ops"
    assert data["eligible"][1] == "architect"
    assert data["eligible"][2:] == ["researcher", "reviewer"], "ties keep roster order"
    assert data["filtered"] == {"scribe": "quiet (a non-quiet agent is eligible)"}
    assert data["scores"]["ops"] > data["scores"]["architect"] > 0 == data["scores"]["reviewer"]


def test_only_quiet_agents_left_are_eligible_on_open_messages(project):
    room(project, agents=["scribe", "architect"])
    set_muted(project, "sync", "architect", True, "alice")
    assert explain(project, load_config(project), "sync", "anything new?")["eligible"] == ["scribe"]


def test_explicit_modes_summon_quiet_agents(project):
    room(project, agents=["scribe", *DEV])
    config = load_config(project)
    assert explain(project, config, "sync", "@scribe summary please")["eligible"] == ["scribe"]
    assert "scribe" in explain(project, config, "sync", "@everyone status?")["eligible"]
    assert "scribe" in explain(project, config, "sync", "@jam status?")["eligible"]


@pytest.mark.parametrize("mention", ["@researcher", "@agents/researcher", "@reseacher", "@Researcher", "@researcher,"])
def test_direct_address_resolves_fuzzily(project, mention):
    room(project)
    result = say(project, f"{mention} what's the rate limit on api.stripe.com?")
    assert result.mode == "direct" and result.eligible == ["researcher"]
    assert [r.speaker for r in result.replies] == ["researcher"]


def test_a_mention_that_matches_nobody_is_refused_with_the_closest_names_and_costs_nothing(project, cli):
    room(project)
    run = cli("chat", "--room", "sync", "@revw is the diff ok?")
    assert run.exit_code == 1
    assert "no agent matches @revw (closest: reviewer" in run.stderr and "nothing was posted" in run.stderr
    assert records(project) == [] and state(project).budget_remaining == state(project).budget_total
    run = cli("chat", "--room", "sync", "--json", "@xyzzy hello")
    assert run.exit_code == 1 and '"unknown_mention"' in run.stderr and "in the room: architect, researcher, reviewer, ops" in run.stderr


def test_mentions_of_people_and_mentions_in_code_are_not_refused(project):
    room(project)
    say(project, "@researcher rate limit?", speaker="bob")
    result = say(project, "@bob saw it; also `@dataclass` and\n```\n@property\n```\n@researcher thanks")
    assert result.mode == "direct" and result.eligible == ["researcher"]
    from rooms_cli.messaging.send import send_message

    send_message(project, load_config(project), "alice", "lunch?", to="carol")  # a person with an inbox
    assert say(project, "@carol @researcher and you?").eligible == ["researcher"]


def test_agent_outside_the_room_is_named_not_matched(project):
    room(project)
    data = explain(project, load_config(project), "sync", "@judge score this")
    assert data["mode"] == "open"
    assert any("judge is not in this room" in n for n in data["notes"])


def test_mute_skips_open_messages_but_direct_everyone_and_jam_override_it(project):
    room(project)
    set_muted(project, "sync", "ops", True, "alice")
    config = load_config(project)
    assert "ops" not in explain(project, config, "sync", "deploy latency")["eligible"]
    assert explain(project, config, "sync", "deploy latency")["filtered"]["ops"] == "muted"
    assert "ops" in explain(project, config, "sync", "@jam deploy?")["eligible"]
    assert "ops" in explain(project, config, "sync", "@everyone deploy?")["eligible"]
    assert "ops" in [r.speaker for r in say(project, "@jam deploy latency?").replies]
    result = say(project, "@ops deploy latency?")
    assert [r.speaker for r in result.replies] == ["ops"]
    assert state(project).muted == ["ops"], "the mute stays"


def test_agent_mid_handoff_is_not_eligible(project):
    room(project)
    update_room(project, "sync", lambda s: s.handoff.append("researcher"))
    data = explain(project, load_config(project), "sync", "@researcher api?")
    assert data["eligible"] == [] and data["filtered"]["researcher"] == "mid-handoff"
    assert "researcher" not in explain(project, load_config(project), "sync", "@everyone hi")["eligible"]


def test_idle_agents_stay_out_until_invited(project):
    full = create_room(project, "full")
    assert "judge" not in full.roster
    invite(project, "full", "judge", "alice")
    after = state(project, "full")
    assert "judge" in after.roster and after.budget_total == budget_for(11)


def test_everyone_answers_in_series_each_seeing_earlier_replies(project):
    room(project)
    result = say(project, "@everyone what's your best guess on the deadlock?")
    assert [r.speaker for r in result.replies] == DEV
    assert all(r.kind == "message" for r in result.replies)
    # the last agent's prompt was built after the others had spoken
    snapshot = read_snapshot(project, "sync", load_config(project))
    assert [m.speaker for m in snapshot[-4:]] == DEV


def test_budget_runs_out_records_once_and_stops_prompting(project):
    room(project, agents=["architect", "ops"])  # budget 6
    for _ in range(3):
        say(project, "@everyone deploy the auth design?")
    assert state(project).budget_remaining == 0
    assert len(records(project, kind="budget_exhausted")) == 1
    later = say(project, "@everyone still there?")
    assert later.exhausted and later.replies == [] and later.remaining == 0
    assert len(records(project, kind="budget_exhausted")) == 1, "recorded when it ran out, not on every later turn"


def test_exhaustion_mid_turn_stops_the_rest(project):
    room(project, agents=DEV)
    update_room(project, "sync", lambda s: setattr(s, "budget_remaining", 2))
    result = say(project, "@everyone thoughts?")
    assert [r.speaker for r in result.replies if r.kind == "message"] == ["architect", "researcher"]
    assert result.exhausted and result.replies[-1].kind == "budget_exhausted"


def test_direct_mention_at_zero_is_queued_and_replayed_on_continue(project):
    room(project)
    update_room(project, "sync", lambda s: setattr(s, "budget_remaining", 0))
    asked = say(project, "@ops @reviewer is the deploy safe?")
    assert asked.replies == [] and asked.exhausted
    assert [(q["id"], q["agents"]) for q in asked.queued] == [(asked.message.id, ["ops", "reviewer"])]
    replay = cont(project)
    assert [(r.speaker, r.meta["answering"]) for r in replay.replies] == [("ops", asked.message.id), ("reviewer", asked.message.id)]
    after = state(project)
    assert after.queued == [] and after.budget_remaining == after.budget_total - 2


def test_continue_resets_the_budget_from_the_current_roster(project):
    room(project, agents=["architect", "ops"])
    update_room(project, "sync", lambda s: setattr(s, "budget_remaining", 0))
    for extra in ["researcher", "reviewer", "analyst", "boss"]:
        invite(project, "sync", extra, "alice")
    cont(project)
    assert state(project).budget_total == state(project).budget_remaining == budget_for(6) == 9
    assert records(project)[-1].kind == "continue"


def test_queued_mention_survives_a_second_exhaustion(project):
    room(project, agents=["architect", "ops"])  # budget 6
    update_room(project, "sync", lambda s: setattr(s, "budget_remaining", 0))
    asked = [say(project, f"@ops deploy number {n}?").message.id for n in range(7)]
    replay = cont(project)
    assert [r.meta["answering"] for r in replay.replies if r.kind == "message"] == asked[:6]
    assert replay.exhausted
    assert [q["id"] for q in state(project).queued] == asked[6:], "the mention not replayed stays queued"
    again = cont(project)
    assert [r.meta["answering"] for r in again.replies] == asked[6:]
    assert state(project).queued == []


def test_queued_mention_of_an_agent_that_left_is_dropped_with_a_note(project):
    room(project, agents=["architect", "ops"])
    update_room(project, "sync", lambda s: setattr(s, "budget_remaining", 0))
    say(project, "@ops deploy?")
    kick(project, "sync", "ops", "alice")
    replay = cont(project)
    assert replay.replies == [] and any("ops" in n and "no longer in the room" in n for n in replay.notes)
    assert state(project).queued == []


def test_kick_ends_the_session_and_reinvite_rebuilds_from_the_transcript(project):
    room(project)
    say(project, "@ops deploy latency?")
    assert Path(sessions.session_path(project, "sync", "ops")).exists()
    kick(project, "sync", "ops", "alice")
    assert sessions.read_session(project, "sync", "ops") == []  # ended by a `cleared` record: the file merges in git
    assert "ops" not in state(project).roster
    invite(project, "sync", "ops", "alice")
    from rooms_cli.agents.definitions import load_agent

    agents = {a: load_agent(project, a) for a in state(project).roster}
    snapshot = read_snapshot(project, "sync", load_config(project))
    prompt = build_prompt(project, state(project), agents["ops"], agents, snapshot, snapshot[-1])
    assert any("deploy latency" in m.content for m in prompt), "it still sees what was said before the kick"


def test_kick_refuses_the_last_agent_of_the_default_room(project):
    update_room(project, "default", lambda s: setattr(s, "roster", ["ops"]))
    with pytest.raises(Conflict, match="last agent of the default room"):
        kick(project, "default", "ops", "alice")
    room(project, agents=["ops"])
    kick(project, "sync", "ops", "alice")  # any other room may be emptied


def test_handoff_writes_a_deliberation_clears_the_session_and_feeds_the_next_prompt(project):
    from rooms_cli.chat.handoff import handoff

    room(project)
    say(project, "@researcher what is the api rate limit? sources please")
    say(project, "@researcher and the documentation for search?")
    assert sessions.summarize_session(project, "sync", "researcher").turns == 2
    done = handoff(project, load_config(project), "sync", "researcher")
    note = latest_deliberation(project, "researcher")
    assert note is not None and note.id == done["deliberation"]["id"] and note.text
    text = (Path(project.root) / note.path).read_text()
    assert text.startswith("---\nclass: deliberation\n")
    assert sessions.read_session(project, "sync", "researcher") == []
    assert state(project).handoff == []
    assert records(project)[-1].kind == "handoff"
    from rooms_cli.agents.definitions import load_agent
    from rooms_cli.chat.context import system_prompt

    agents = {a: load_agent(project, a) for a in DEV}
    assert note.text in system_prompt(project, state(project), agents["researcher"], agents)


def test_handoff_is_suggested_once_past_the_threshold(project):
    new_agent(project, "tiny", tags=["deploy"], context_window=256, max_tokens=40)
    (Path(project.root) / ".rooms.yaml").write_text("context_threshold: 0.6\n")  # the prompt is fitted below ~0.7 of so small a window
    room(project, agents=["tiny", "ops"])
    say(project, "@tiny deploy?")  # a short prompt: far from the window
    assert records(project, kind="handoff_suggested") == []
    say(project, "@tiny deploy the release with the new migration, the canary, the feature flags, the dashboards, "
                 "the alerts, the runbook and the rollback plan ready, and tell the support team before noon?")
    say(project, "@tiny deploy again?")
    suggestions = records(project, kind="handoff_suggested")
    assert len(suggestions) == 1 and "/handoff tiny" in suggestions[0].text


def test_prompt_does_not_grow_with_the_transcript(project):
    from rooms_cli.agents.definitions import load_agent

    room(project)
    agents = {a: load_agent(project, a) for a in DEV}
    sizes = []
    for total in (60, 600):
        have = len(records(project))
        lines = [make_message("sync", "bob", "a fairly ordinary line about the deploy " * 3) for _ in range(total - have)]
        append_records(project, "sync", lines)
        snapshot = read_snapshot(project, "sync", load_config(project))
        prompt = build_prompt(project, state(project), agents["ops"], agents, snapshot, snapshot[-1])
        sizes.append(sum(len(m.content) for m in prompt))
        assert len(prompt) <= 51
    assert sizes[0] == sizes[1]


def test_external_agent_is_told_through_its_inbox_not_called(project):
    from rooms_cli.messaging.inbox import read_inbox

    new_agent(project, "claude-code", tags=["code"], model="external")
    room(project, agents=["claude-code", "ops"])
    result = say(project, "@claude-code please review the deploy script")
    inbox = read_inbox(project, "claude-code")
    assert len(inbox) == 1 and inbox[0].meta == {"room": "sync", "message": result.message.id}
    assert [r.kind for r in result.replies] == ["system"]
    assert state(project).budget_remaining == 6
    open_round = say(project, "how is the deploy going?")
    assert "claude-code" not in open_round.eligible, "an open message addresses nobody: no inbox spam"
    assert len(read_inbox(project, "claude-code")) == 1
    say(project, "@everyone status?")
    assert len(read_inbox(project, "claude-code")) == 2


def test_replies_are_labelled_offline(project):
    room(project)
    result = say(project, "@ops deploy?")
    assert result.replies[0].model == "offline" and result.replies[0].usage["output_tokens"] > 0


def test_only_people_use_everyone_jam_and_slash_commands():
    roster = ["ops", "architect"]
    assert parse("@everyone look", roster, roster, from_person=False).mode == "open"
    assert parse("@jam look", roster, roster, from_person=False).mode == "open"
    agent_reply = parse("/kick ops and ask @architect", roster, roster, from_person=False)
    assert agent_reply.mode == "direct" and agent_reply.targets == ["architect"]
    assert parse("@channel hi", roster, roster).mode == "everyone"
    assert parse("mail me at bob@example.com", roster, roster).mode == "open"


def test_flavor_lines_and_pass_lines_are_distinct_pools():
    assert not set(FLAVOR_LINES) & set(PASS_LINES)


def test_activation_never_excludes_by_score(project):
    from rooms_cli.agents.definitions import load_agent

    room(project)
    st = state(project)
    agents = {a: load_agent(project, a) for a in st.roster}
    act = activate(st, agents, parse("zebra", st.roster, st.roster), "zebra")
    assert act.eligible == DEV and set(act.scores.values()) == {0.0}


def test_an_agent_posting_through_the_cli_prompts_only_whom_it_mentions(project):
    room(project)
    quiet = say(project, "@everyone I finished the deploy script", speaker="ops")
    assert quiet.eligible == [] and quiet.replies == []
    assert any("only the agents it @-mentions" in n for n in quiet.notes)
    asked = say(project, "@reviewer please check the deploy script @jam", speaker="ops")
    assert asked.mode == "direct" and [r.speaker for r in asked.replies] == ["reviewer"]


def test_deltas_stream_and_concatenate_to_the_reply(project):
    from rooms_cli.chat.coordinator import run_message

    room(project)
    events = []
    result = run_message(project, load_config(project), "sync", "alice", "How should we design the auth middleware?",
                         on_event=lambda kind, data: events.append((kind, data)))
    deltas = {}
    for kind, data in events:
        if kind == "delta":
            deltas.setdefault(data["agent"], []).append(data["text"])
    assert set(deltas) == {"architect"}, "passes stream nothing"
    assert "".join(deltas["architect"]).strip() == result.replies[0].text
