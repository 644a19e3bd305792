"""Who takes part, how many turns, who opens, who speaks next.

Next speaker (the source's weighted randomness, never the last speaker twice in a row):

    w = 1 + 0.6·affinity(agent, last) − 0.4·recency_penalty(agent) + jitter(−0.2…0.2), floored at 0.05

`affinity(agent, last)` is the agent's own `affinity:` toward the last speaker (−1…1, default 0): good
rapport with whoever just spoke makes a reply more likely. `recency_penalty(agent)` (0…1) is half
"how recently" (1/k when the agent spoke k turns ago, 0 if never) and half "how much" (its share of the
turns so far), so whoever just had the floor or has been hogging it steps back. Every draw comes from
one `random.Random` (seeded by ROOMS_SEED through rooms_cli.store.rand.rng).

Everyone gets a turn when the turn count allows it: once the turns left are no more than the
participants who have not spoken yet, the draw (still weighted) is among those only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rooms_cli.core.errors import InvalidInput, UsageError
from rooms_cli.core.text import count
from rooms_cli.roundtable.formats import Format

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

AFFINITY_WEIGHT = 0.6
RECENCY_WEIGHT = 0.4
JITTER = 0.2
FLOOR = 0.05

Affinity = Callable[[str, str], float]


def parse_random_token(token: str) -> int | None:
    """`random:3` -> 3; anything else -> None."""
    if not token.startswith("random:"):
        return None
    number = token.partition(":")[2]
    if not number.isdigit() or int(number) < 1:
        raise InvalidInput(f"invalid participant {token!r}: expected random:N with N ≥ 1")
    return int(number)


def resolve_participants(
    spec: Sequence[str] | None, available: Sequence[str], fmt: Format, rng: random.Random, leader: str | None = None,
    force: bool = False,
) -> list[str]:
    """The participants of one roundtable.

    `spec` lists agent ids and `random:N` tokens (N more agents drawn from the rest); without a
    spec, a count is drawn in the format's range (the leader, when the format opens with the
    leader, always takes part). The result must fit the format's range — with `force`, any count
    of two or more (a conversation needs two voices).
    """
    pool = sorted(available)
    if not spec:
        if len(pool) < fmt.min_agents:
            raise InvalidInput(
                f"format {fmt.name!r} needs at least {fmt.min_agents} agents, the project has {len(pool)} "
                f"that can talk (add agents with `rooms agent new`, or pick another format)"
            )
        size = rng.randint(fmt.min_agents, min(fmt.max_agents, len(pool)))
        chosen = [leader] if fmt.opens == "leader" and leader in pool else []
        rest = [a for a in pool if a not in chosen]
        return chosen + rng.sample(rest, size - len(chosen))
    fixed: list[str] = []
    drawn = 0
    for token in spec:
        number = parse_random_token(token)
        if number is not None:
            drawn += number
            continue
        if token not in pool:
            raise InvalidInput(f"unknown or non-talking participant {token!r}; agents: {', '.join(pool)}")
        if token not in fixed:
            fixed.append(token)
    rest = [a for a in pool if a not in fixed]
    if drawn > len(rest):
        raise InvalidInput(f"cannot draw {count(drawn, 'more agent')}: only {count(len(rest), 'other')} {'exists' if len(rest) == 1 else 'exist'}")
    chosen = fixed + rng.sample(rest, drawn)
    if force and len(chosen) < 2:
        raise InvalidInput(f"a roundtable needs at least 2 agents, got {len(chosen)} ({', '.join(chosen)})")
    if not force and not fmt.min_agents <= len(chosen) <= fmt.max_agents:
        raise InvalidInput(
            f"format {fmt.name!r} takes {fmt.min_agents}–{fmt.max_agents} agents, got {len(chosen)} ({', '.join(chosen)}); "
            "change --participants, or add --force to run it anyway"
        )
    return chosen


def check_turns(fmt: Format, turns: int, force: bool = False) -> None:
    """`turns` must lie in the format's range (any count ≥ 1 with `force`)."""
    if turns < 1:
        raise InvalidInput(f"--turns must be at least 1, got {turns}")
    if not force and not fmt.min_turns <= turns <= fmt.max_turns:
        raise UsageError(f"format {fmt.name!r} takes {fmt.min_turns}–{fmt.max_turns} turns, got --turns {turns}; "
                           "pick a count in that range, or add --force to run it anyway")


def draw_turns(fmt: Format, rng: random.Random, turns: int | None = None, force: bool = False) -> int:
    """`turns` when given (in the format's range unless `force`), else a count drawn in the range."""
    if turns is not None:
        check_turns(fmt, turns, force)
        return turns
    return rng.randint(fmt.min_turns, fmt.max_turns)


def first_speaker(fmt: Format, participants: Sequence[str], leader: str | None, rng: random.Random) -> str:
    """`leader`: the configured leader if present, else the first participant; `first`; `random`."""
    if fmt.opens == "random":
        return rng.choice(list(participants))
    if fmt.opens == "leader" and leader in participants:
        return leader  # type: ignore[return-value]
    return participants[0]


def recency_penalty(agent: str, history: Sequence[str]) -> float:
    """0…1: half how recently `agent` spoke (1/k, k turns ago), half its share of the turns so far."""
    if not history or agent not in history:
        return 0.0
    turns_ago = len(history) - max(i for i, s in enumerate(history) if s == agent)
    share = history.count(agent) / len(history)
    return 0.5 / turns_ago + 0.5 * share


@dataclass
class Pick:
    """The next speaker of a roundtable and every participant's weight when it was drawn."""

    speaker: str
    weights: dict[str, float]  # 0 for the last speaker

    def to_json(self) -> dict[str, Any]:
        return {"speaker": self.speaker, "weights": {k: round(v, 3) for k, v in self.weights.items()}}


def speaker_weights(
    participants: Sequence[str], last: str | None, history: Sequence[str], affinity: Affinity, rng: random.Random
) -> dict[str, float]:
    """The weight of every participant as the next speaker (the last speaker gets 0)."""
    weights: dict[str, float] = {}
    for agent in participants:
        if agent == last:
            weights[agent] = 0.0
            continue
        w = 1.0
        if last is not None:
            w += AFFINITY_WEIGHT * affinity(agent, last)
        w -= RECENCY_WEIGHT * recency_penalty(agent, history)
        w += rng.uniform(-JITTER, JITTER)
        weights[agent] = max(w, FLOOR)
    return weights


def select_next_speaker(
    participants: Sequence[str], last: str | None, history: Sequence[str], affinity: Affinity, rng: random.Random,
    turns_left: int | None = None,
) -> Pick:
    """Weighted random pick of the next speaker; never `last` (when anyone else is there). With
    `turns_left` (this turn included), a participant who has not spoken yet is picked while the
    turns left would not otherwise reach every one of them."""
    weights = speaker_weights(participants, last, history, affinity, rng)
    candidates = [a for a in participants if a != last] or list(participants)
    silent = [a for a in candidates if a not in history]
    if turns_left is not None and silent and turns_left <= len(silent):
        candidates = silent
        weights = {a: (w if a in silent else 0.0) for a, w in weights.items()}
    chosen = rng.choices(candidates, weights=[weights[a] or FLOOR for a in candidates])[0]
    return Pick(chosen, weights)
