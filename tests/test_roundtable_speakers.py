"""Speaker selection, participant and turn draws, the first-speaker rule, ROOMS_SEED reproducibility."""

from __future__ import annotations

import random

import pytest

from rooms_cli.core.errors import InvalidInput
from rooms_cli.roundtable.formats import BUILTINS
from rooms_cli.roundtable.speakers import (
    FLOOR,
    draw_turns,
    first_speaker,
    recency_penalty,
    resolve_participants,
    select_next_speaker,
    speaker_weights,
)
from rooms_cli.store.rand import rng

AGENTS = ["analyst", "boss", "hustler", "wildcard", "writer"]


class NoJitter(random.Random):
    def uniform(self, a, b):
        return 0.0


def test_weights_follow_the_formula_without_jitter():
    history = ["b", "c", "a"]  # a spoke last; b 3 turns ago, c 2 turns ago
    aff = {("b", "a"): 0.5, ("c", "a"): -0.25}
    weights = speaker_weights(["a", "b", "c"], "a", history, lambda x, y: aff.get((x, y), 0.0), NoJitter())
    assert weights["a"] == 0
    assert weights["b"] == pytest.approx(1 + 0.6 * 0.5 - 0.4 * (0.5 / 3 + 0.5 / 3))
    assert weights["c"] == pytest.approx(1 + 0.6 * -0.25 - 0.4 * (0.5 / 2 + 0.5 / 3))


class LowJitter(random.Random):
    def uniform(self, a, b):
        return a


def test_weights_are_floored_above_zero():
    history = ["b", "a", "b", "a", "b", "a"]  # 1 − 0.6 − 0.4·0.5 − 0.2 = 0
    weights = speaker_weights(["a", "b"], "a", history, lambda x, y: -1.0, LowJitter())
    assert weights["b"] == FLOOR > 0


def test_recency_penalty_is_zero_for_the_silent_and_grows_for_recent_talkers():
    history = ["a", "b", "a", "c"]
    assert recency_penalty("d", history) == 0
    assert recency_penalty("a", history) > recency_penalty("b", history) > 0


def test_never_the_last_speaker_twice_in_a_row_over_many_seeded_conversations(monkeypatch):
    monkeypatch.setenv("ROOMS_SEED", "42")
    for run in range(300):
        chance = rng("back-to-back", run)
        people = AGENTS[: 2 + run % 4]
        last, spoken = None, []
        for _ in range(12):
            pick = select_next_speaker(people, last, spoken, lambda a, b: 1.0 if a == b else 0.0, chance)
            assert pick.speaker != last
            assert pick.weights.get(last, 0) == 0
            last = pick.speaker
            spoken.append(pick.speaker)


def test_every_participant_speaks_when_the_turn_count_allows(monkeypatch):
    monkeypatch.setenv("ROOMS_SEED", "7")
    people = [*AGENTS, "judge"]
    likes = {("boss", "analyst"): 1.0, ("analyst", "boss"): 1.0, ("wildcard", "boss"): -1.0}
    for run in range(300):
        chance = rng("everyone", run)
        total = len(people) + run % 5  # 6…10 turns for 6 people
        last, spoken = people[0], [people[0]]
        for n in range(2, total + 1):
            pick = select_next_speaker(people, last, spoken, lambda a, b: likes.get((a, b), 0.0), chance,
                                       turns_left=total - n + 1)
            assert pick.speaker != last
            last = pick.speaker
            spoken.append(pick.speaker)
        assert set(spoken) == set(people), (run, spoken)


def test_the_weighting_still_decides_while_there_is_slack(monkeypatch):
    """With turns to spare, affinity still favours a reply to the last speaker, as before.

    b's true share is ~0.616 against 0.5 without affinity; the draws are seeded, so the figure is fixed
    (unseeded, 2,000 draws fell under the old bound of 0.6 about one run in fourteen)."""
    monkeypatch.setenv("ROOMS_SEED", "slack")
    aff = {("b", "a"): 1.0}
    wins = sum(
        select_next_speaker(["a", "b", "c"], "a", ["a"], lambda x, y: aff.get((x, y), 0.0), rng("slack", i),
                            turns_left=5).speaker == "b"
        for i in range(2000)
    )
    assert wins / 2000 > 0.57


def test_a_roundtable_on_the_offline_model_talks_about_its_topic_and_everyone_speaks(cli, project_dir):
    people = "boss,analyst,hustler,writer,wildcard,judge"
    for seed in ("1", "2", "3"):
        run = cli("roundtable", "run", "standup", "--topic", "launch", "--participants", people, "--turns", "9",
                  "--json", env={"ROOMS_SEED": seed})
        assert run.exit_code == 0, run.stderr
        turns = run.json()["turns"]
        assert {t["speaker"] for t in turns} == set(people.split(","))
        assert not [t["text"] for t in turns if "standup" in t["text"].lower()]
        assert any("launch" in t["text"].lower() for t in turns)


def _share_of(affinity_of_b: float, trials: int = 3000) -> float:
    """How often b (not c) answers a, when b's affinity to a is `affinity_of_b` and c's is 0."""
    aff = {("b", "a"): affinity_of_b}
    wins = 0
    for i in range(trials):
        pick = select_next_speaker(["a", "b", "c"], "a", ["a"], lambda x, y: aff.get((x, y), 0.0), rng("affinity", i))
        wins += pick.speaker == "b"
    return wins / trials


def test_higher_affinity_to_the_last_speaker_is_picked_more_often(monkeypatch):
    monkeypatch.setenv("ROOMS_SEED", "7")
    neutral, fond, very_fond = _share_of(0.0), _share_of(0.5), _share_of(1.0)
    # expected shares: 1/(1+1)=0.5, 1.3/2.3≈0.565, 1.6/2.6≈0.615 (jitter is symmetric)
    assert neutral == pytest.approx(0.5, abs=0.04)
    assert fond == pytest.approx(0.565, abs=0.04)
    assert very_fond == pytest.approx(0.615, abs=0.04)
    assert neutral < fond < very_fond


def test_dislike_makes_a_reply_less_likely(monkeypatch):
    monkeypatch.setenv("ROOMS_SEED", "8")
    assert _share_of(-1.0) == pytest.approx(0.4 / 1.4, abs=0.04)


def test_participant_draw_stays_in_the_formats_range(monkeypatch):
    monkeypatch.setenv("ROOMS_SEED", "1")
    many = [f"agent{i}" for i in range(10)]
    for name, fmt in BUILTINS.items():
        for i in range(40):
            chosen = resolve_participants(None, many, fmt, rng("draw", name, i))
            assert fmt.min_agents <= len(chosen) <= fmt.max_agents
            assert len(set(chosen)) == len(chosen)
            turns = draw_turns(fmt, rng("turns", name, i))
            assert fmt.min_turns <= turns <= fmt.max_turns


def test_the_leader_takes_part_when_the_format_opens_with_the_leader(monkeypatch):
    monkeypatch.setenv("ROOMS_SEED", "3")
    for i in range(30):
        chosen = resolve_participants(None, AGENTS, BUILTINS["standup"], rng("leader", i), leader="writer")
        assert "writer" in chosen
        assert first_speaker(BUILTINS["standup"], chosen, "writer", rng("x")) == "writer"


def test_first_speaker_is_the_first_participant_without_a_leader():
    assert first_speaker(BUILTINS["standup"], ["hustler", "boss", "analyst", "writer"], None, rng("x")) == "hustler"
    assert first_speaker(BUILTINS["deep-dive"], ["writer", "boss"], "boss", rng("x")) == "writer"


def test_random_tokens_draw_others_and_the_count_must_fit_the_format():
    chosen = resolve_participants(["boss", "random:3"], AGENTS, BUILTINS["standup"], random.Random(1))
    assert chosen[0] == "boss" and len(set(chosen)) == 4
    with pytest.raises(InvalidInput, match="takes 4–6 agents, got 2"):
        resolve_participants(["boss", "analyst"], AGENTS, BUILTINS["standup"], random.Random(1))
    with pytest.raises(InvalidInput, match="unknown or non-talking participant 'nobody'"):
        resolve_participants(["nobody", "boss"], AGENTS, BUILTINS["debate"], random.Random(1))
    with pytest.raises(InvalidInput, match="random:N"):
        resolve_participants(["random:x"], AGENTS, BUILTINS["debate"], random.Random(1))


def test_too_few_agents_is_a_clear_error():
    with pytest.raises(InvalidInput, match="needs at least 4 agents, the project has 3"):
        resolve_participants(None, ["a", "b", "c"], BUILTINS["standup"], random.Random(1))


def test_cli_run_respects_turns_and_never_repeats_a_speaker(cli, project_dir):
    for seed in ("1", "2", "3"):
        run = cli("roundtable", "run", "watercooler", "--topic", "coffee", "--json", env={"ROOMS_SEED": seed})
        assert run.exit_code == 0, run.stderr
        doc = run.json()
        speakers = [t["speaker"] for t in doc["turns"]]
        assert 2 <= len(speakers) <= 5 and 2 <= len(doc["participants"]) <= 3
        assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False))


def test_same_seed_same_conversation(rooms, project_dir):
    args = ("roundtable", "run", "debate", "--topic", "tabs or spaces", "--json")
    first = rooms(*args, env={"ROOMS_SEED": "99"}).json()
    second = rooms(*args, env={"ROOMS_SEED": "99"}).json()
    other = rooms(*args, env={"ROOMS_SEED": "100"}).json()
    assert first["participants"] == second["participants"]
    assert [(t["speaker"], t["text"]) for t in first["turns"]] == [(t["speaker"], t["text"]) for t in second["turns"]]
    assert first["room"] != second["room"]  # a new room each time
    assert [t["speaker"] for t in first["turns"]] != [t["speaker"] for t in other["turns"]] or \
        first["participants"] != other["participants"]


def test_explain_prints_each_turns_weights(cli, project_dir):
    run = cli("roundtable", "run", "debate", "--participants", "analyst,hustler", "--turns", "4", "--force", "--explain")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.count("weights:") == 3  # turns 2-4; the first speaker follows the format's rule
    assert run.stdout.count("opens: the format's rule (random)") == 1
    assert "analyst 0.00" in run.stdout or "hustler 0.00" in run.stdout
