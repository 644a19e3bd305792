"""Addressing: how a message names who should answer it.

    @researcher / @agents/researcher / @reseacher   direct (fuzzy match on the agent id, rapidfuzz)
    @everyone (alias @channel)                      everyone answers in series, /pass rejected once
    @jam                                            everyone answers in parallel from one snapshot
    no mention                                      open: every eligible agent, in score order

A mention in code (`` `@dataclass` `` or a fenced block) is not a mention. A person's mention that
matches no agent (and no person of the room) is refused by the coordinator, with the closest names.

`@everyone`/`@jam` count only in text written by a person (`from_person=True`); in an agent's reply
they are plain text, and only direct mentions of agents count (a cascade).
"""

from __future__ import annotations

import re

from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

MENTION_RE = re.compile(r"(?<![\w@/.])@([A-Za-z0-9][A-Za-z0-9._/-]*)")
BROADCAST = {"everyone": "everyone", "channel": "everyone", "jam": "jam"}
MATCH_CUTOFF = 75.0  # rapidfuzz ratio (0-100) a mention needs to land on an agent
CLOSE_CUTOFF = 50.0  # ... and a name needs to be suggested for a mention that matched nobody


@dataclass
class Addressing:
    """What a message's @-mentions resolve to: its mode and the agents it names.

    Also the mentions that matched no agent and the agents named that are not in the room."""

    mode: str  # open | direct | everyone | jam
    targets: list[str] = field(default_factory=list)  # resolved agent ids (direct), in mention order
    unmatched: list[str] = field(default_factory=list)  # mentions that stayed text, as written (without @)
    outside: list[str] = field(default_factory=list)  # agents that exist but are not in the room

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "targets": self.targets, "unmatched": self.unmatched, "outside": self.outside}


CODE_RE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)  # code: `@dataclass` there is no mention


def mentions(text: str) -> list[str]:
    """Every `@word` in `text` outside code spans and fences, without the `@` and trailing punctuation."""
    found = []
    for raw in MENTION_RE.findall(CODE_RE.sub(" ", text)):
        word = raw.rstrip("._-/")
        if word:
            found.append(word)
    return found


def resolve_mention(word: str, candidates: list[str]) -> str | None:
    """The agent id `word` names (`agents/researcher`, `Researcher`, `reseacher`), or None."""
    if not candidates:
        return None
    name = word.lower().rsplit("/", 1)[-1]
    if name in candidates:
        return name  # an exact name does not pay for importing rapidfuzz
    from rapidfuzz import fuzz, process

    best = process.extractOne(name, candidates, scorer=fuzz.ratio, score_cutoff=MATCH_CUTOFF)
    return best[0] if best else None


def closest(word: str, candidates: list[str], limit: int = 3) -> list[str]:
    """The candidates nearest to `word` (rapidfuzz ratio), best first: suggestions for a bad mention."""
    if not candidates:
        return []
    from rapidfuzz import fuzz, process

    name = word.lower().rsplit("/", 1)[-1]
    return [match[0] for match in process.extract(name, sorted(set(candidates)), scorer=fuzz.ratio, limit=limit,
                                                  score_cutoff=CLOSE_CUTOFF)]


def parse(text: str, roster: list[str], known: list[str], *, from_person: bool = True) -> Addressing:
    """Classify `text`. `roster`: agents in the room; `known`: every agent of the project."""
    words = mentions(text)
    broadcast = [BROADCAST[w.lower()] for w in words if w.lower() in BROADCAST] if from_person else []
    result = Addressing(mode="open")
    for word in words:
        if word.lower() in BROADCAST:
            continue
        agent = resolve_mention(word, roster)
        if agent is None:
            other = resolve_mention(word, [k for k in known if k not in roster])
            if other is not None:
                result.outside.append(other)
            else:
                result.unmatched.append(word)
            continue
        if agent not in result.targets:
            result.targets.append(agent)
    if broadcast:
        # @jam wins over @everyone when both appear: the person asked for independent takes
        result.mode = "jam" if "jam" in broadcast else "everyone"
        result.targets = []
    elif result.targets:
        result.mode = "direct"
    return result
