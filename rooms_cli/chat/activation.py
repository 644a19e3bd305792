"""Activation: who is eligible to answer a message, and in which order (two stages).

1. Structural filter, no model calls: by mode; muted agents dropped on open messages (direct address,
   @everyone and @jam override a mute — chat.md says so three times, and its one "open and @jam"
   aside contradicts the issue's rule "mute bypassed by direct/@everyone/@jam but not open");
   agents mid-handoff dropped; on open messages quiet agents dropped while a non-quiet one is eligible.
2. Open messages only: TF-IDF overlap between the message's words and each agent's tags and
   disposition (IDF over the roster). Highest first, ties in roster order, quiet agents last.
   The score orders; it never excludes.

Everything here is explainable: `Activation` carries each filtered agent's reason and each score,
which `rooms chat --explain` prints.
"""

from __future__ import annotations

import math
from collections import Counter

from rooms_cli.chat.addressing import Addressing
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.agents.definitions import Agent
    from rooms_cli.chat.rooms import RoomState


@dataclass
class Activation:
    """Who a message prompts, in order, and why: each filtered agent's reason and each score.

    What `rooms chat --explain` prints."""

    mode: str
    eligible: list[str] = field(default_factory=list)  # in prompt order
    filtered: dict[str, str] = field(default_factory=dict)  # agent -> why it is not prompted
    scores: dict[str, float] = field(default_factory=dict)  # open messages only

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "eligible": self.eligible,
            "filtered": self.filtered,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
        }


def _words(text: str) -> list[str]:
    from rooms_cli.core.text import stem, tokens

    return [stem(w) for w in tokens(text)]


def persona_terms(agent: Agent) -> list[str]:
    """The words an agent is scored on: its tags and its disposition."""
    return _words(" ".join([*agent.tags, agent.disposition or ""]))


def tfidf_scores(message: str, agents: list[Any]) -> dict[str, float]:
    """Score each agent by TF-IDF overlap of `message` with its tags + disposition (IDF over `agents`)."""
    docs = {a.id: Counter(persona_terms(a)) for a in agents}
    n = len(docs)
    df: Counter[str] = Counter()
    for terms in docs.values():
        df.update(set(terms))
    query = Counter(_words(message))
    scores = {}
    for agent_id, terms in docs.items():
        size = sum(terms.values()) or 1
        score = 0.0
        for term, q in query.items():
            if term in terms:
                idf = math.log((1 + n) / (1 + df[term])) + 1.0
                score += q * (terms[term] / size) * idf
        scores[agent_id] = score
    return scores


def activate(state: RoomState, agents: dict[str, Any], addressing: Addressing, message: str, external: frozenset[str] = frozenset()) -> Activation:
    """Apply both stages to the room `state`; `agents` maps id -> Agent for the roster.

    `external`: agents with `model: external`; they are told through their inbox when addressed,
    so an open message (which addresses nobody) leaves them out.
    """
    act = Activation(mode=addressing.mode)
    roster = [a for a in state.roster if a in agents]
    if addressing.mode == "direct":
        candidates = [a for a in addressing.targets if a in roster]
    else:
        candidates = list(roster)
    for agent_id in roster:
        if agent_id not in candidates:
            act.filtered[agent_id] = "not addressed"
    kept = []
    for agent_id in candidates:
        if agent_id in state.handoff:
            act.filtered[agent_id] = "mid-handoff"
        elif agent_id in state.muted and addressing.mode == "open":
            act.filtered[agent_id] = "muted"
        elif agent_id in external and addressing.mode == "open":
            act.filtered[agent_id] = "external (told through its inbox only when addressed)"
        else:
            kept.append(agent_id)
    if addressing.mode == "open":
        loud = [a for a in kept if not agents[a].quiet]
        if loud:
            for agent_id in kept:
                if agents[agent_id].quiet:
                    act.filtered[agent_id] = "quiet (a non-quiet agent is eligible)"
            kept = loud
        act.scores = tfidf_scores(message, [agents[a] for a in roster])
        position = {a: i for i, a in enumerate(roster)}
        kept.sort(key=lambda a: (agents[a].quiet, -act.scores.get(a, 0.0), position[a]))
    act.eligible = kept
    return act
