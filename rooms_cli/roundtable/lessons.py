"""Memory extraction: after a roundtable, a few lessons per participant.

With a real model: one call (purpose "summary") asking for JSON, parsed robustly (code fences,
prose around the JSON, or plain `agent: lesson` lines all work); a reply with nothing usable falls
back to the extractive way. Offline: extractive, no model call — each participant keeps the turns of
the others that carry the conversation's most frequent content words and touch its own interests.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence

from rooms_cli.models.base import Message

LESSONS_PER_AGENT = 2
MAX_LESSONS_PER_AGENT = 3

EXTRACT_INSTRUCTIONS = (
    "You extract lessons from a team conversation. For each participant, write 1 to {n} short lessons "
    "(one sentence each) that this participant should remember for future work: decisions, facts, "
    "concerns raised by others. Reply with JSON only, in this shape:\n"
    '{{"lessons": [{{"agent": "<participant id>", "lesson": "<one sentence>"}}]}}\n'
    "Participant ids: {ids}."
)


def extraction_messages(fmt_name: str, topic: str, turns: Sequence[dict], participants: Sequence[str]) -> list[Message]:
    lines = "\n".join(f"{t['speaker']}: {t['text']}" for t in turns)
    return [
        Message("system", EXTRACT_INSTRUCTIONS.format(n=LESSONS_PER_AGENT, ids=", ".join(participants))),
        Message("user", f"Format: {fmt_name}. Topic: {topic}.\n\nConversation:\n{lines}"),
    ]


def _json_candidates(text: str):
    text = re.sub(r"```(?:json)?", "", text)
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        yield value


def _pairs_from_json(value) -> list[tuple[str, str]]:
    if isinstance(value, dict) and isinstance(value.get("lessons"), (list, dict)):
        value = value["lessons"]
    pairs: list[tuple[str, str]] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                agent = item.get("agent") or item.get("participant") or item.get("name")
                lesson = item.get("lesson") or item.get("text")
                if isinstance(agent, str) and isinstance(lesson, str):
                    pairs.append((agent, lesson))
    elif isinstance(value, dict):
        for agent, lessons in value.items():
            for lesson in [lessons] if isinstance(lessons, str) else lessons if isinstance(lessons, list) else []:
                if isinstance(lesson, str):
                    pairs.append((str(agent), lesson))
    return pairs


_LINE_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*\**\s*([\w .'-]{1,40}?)\s*\**\s*[:—–-]\s+(.+?)\s*$")


def parse_lessons(text: str, participants: Sequence[str], names: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Lessons per participant from a model's reply; unknown agents and empty lessons are dropped."""
    lookup = {p.lower(): p for p in participants}
    for agent_id, display in (names or {}).items():
        lookup.setdefault(display.lower(), agent_id)
    pairs: list[tuple[str, str]] = []
    for value in _json_candidates(text or ""):
        pairs = _pairs_from_json(value)
        if pairs:
            break
    if not pairs:
        for line in (text or "").splitlines():
            match = _LINE_RE.match(line)
            if match:
                pairs.append((match.group(1), match.group(2)))
    result: dict[str, list[str]] = {}
    for agent, raw in pairs:
        who = lookup.get(agent.strip().strip("@").lower())
        lesson = " ".join(raw.split()).strip(" \"'")
        if who and lesson and lesson not in result.get(who, []):
            if len(result.setdefault(who, [])) < MAX_LESSONS_PER_AGENT:
                result[who].append(lesson)
    return result


def extractive_lessons(
    topic: str, turns: Sequence[dict], participants: Sequence[str], interests: dict[str, set[str]] | None = None,
    names: dict[str, str] | None = None,
) -> dict[str, list[str]]:
    """Per participant, the most telling turns of the others (deterministic, no model)."""
    from rooms_cli.models.offline import stem, tokens

    freq = Counter(stem(w) for t in turns for w in tokens(t["text"]))
    result: dict[str, list[str]] = {}
    for agent in participants:
        mine = interests.get(agent, set()) if interests else set()

        def score(turn: dict, mine=mine) -> float:
            words = {stem(w) for w in tokens(turn["text"])}
            return sum(freq[w] for w in words) / (1 + len(words)) ** 0.5 + 2.0 * len(words & mine)

        others = [t for t in turns if t["speaker"] != agent and t["text"]]
        best = sorted(others, key=lambda t: (-score(t), t["turn"]))
        picked: list[str] = []
        for turn in best:
            who = (names or {}).get(turn["speaker"], turn["speaker"])
            lesson = f"On {topic}, {who} said: {turn['text']}"
            if lesson not in picked:
                picked.append(lesson)
            if len(picked) >= LESSONS_PER_AGENT:
                break
        if picked:
            result[agent] = picked
    return result
